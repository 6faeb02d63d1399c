// The account's API tokens: each with its first characters, its scopes, when it was made and
// last used, and when it expires; make one of some of the signed-in token's scopes (shown
// once), revoke one (confirmed).
import { useContext, useState } from 'preact/hooks';
import { SCOPES } from '../../scopes';
import { ActionForm } from './action-form';
import type { Api, ApiToken, CreatedApiToken, Scope } from './api';
import { CheckBoxes } from './check-boxes';
import { ActionsHeading, ErrorText, LoadState, Time, errorOf } from './feedback';
import { LabelledCell } from './labelled-cell';
import { PageHeading } from './heading';
import { ScopesContext } from './scopes';
import { API_TOKEN, SecretOnce } from './secret-once';
import { TextField } from './text-field';
import { useAction } from './use-action';
import { useLoad } from './use-load';

/** How long a new token lasts, as offered; the API takes any future time. */
const LIFETIMES = [
  { label: 'Never expires', days: 0 },
  { label: '7 days', days: 7 },
  { label: '30 days', days: 30 },
  { label: '90 days', days: 90 },
  { label: '1 year', days: 365 },
];

/** What each scope lets a token do, as the route table has it (docs/api.md, "Scopes"). */
const SCOPE_MEANINGS: Record<Scope, string> = {
  'webhooks:read': 'see the webhooks',
  'webhooks:write': 'register, change, ping, rotate and delete webhooks',
  'deliveries:read': 'read delivery logs and recoveries',
  'deliveries:write': 'redeliver, and start or cancel recoveries',
  'account:read': 'see the account, its usage and notices',
  'account:admin': "manage tokens and the account's notification email, and read the audit log",
};

export function Tokens({ api, signedInId }: { api: Api; signedInId: string }) {
  const tokens = useLoad(() => api.listTokens(), [api]);
  const [created, setCreated] = useState<CreatedApiToken | null>(null);

  if (created) {
    return (
      <section>
        <PageHeading>Token made</PageHeading>
        <p>
          The token <strong>{created.name}</strong> works from now on
          {created.expiresAt && (
            <>
              {' '}
              until <Time iso={created.expiresAt} />
            </>
          )}
          .
        </p>
        <SecretOnce
          secret={created.token}
          shown={API_TOKEN}
          onDone={() => {
            setCreated(null);
            tokens.reload();
          }}
        />
      </section>
    );
  }
  return (
    <section>
      <PageHeading>API tokens</PageHeading>
      <p class="hint">
        An account has up to 10 tokens. Each is shown once, when it is made; below are its first 8 characters, and what it may do (its
        scopes, fixed when it is made). A revoked token is refused at once.
      </p>
      <LoadState loaded={tokens} what="your tokens" />
      {tokens.data && (
        <table class="tokens">
          <caption class="visually-hidden">Your API tokens</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Starts with</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <ActionsHeading />
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((token) => (
              <TokenRow
                key={token.id}
                api={api}
                token={token}
                signedIn={token.id === signedInId}
                only={tokens.data!.length === 1}
                onRevoked={tokens.reload}
              />
            ))}
          </tbody>
        </table>
      )}
      <MakeToken api={api} onMade={setCreated} />
    </section>
  );
}

interface TokenRowProps {
  api: Api;
  token: ApiToken;
  /** The token this tab is signed in with. */
  signedIn: boolean;
  /** The account's only token. */
  only: boolean;
  onRevoked: () => void;
}

function TokenRow({ api, token, signedIn, only, onRevoked }: TokenRowProps) {
  const [confirming, setConfirming] = useState(false);
  const revoke = useAction(() => api.revokeToken(token.id), onRevoked);
  const expired = token.expiresAt !== null && Date.parse(token.expiresAt) <= Date.now();
  return (
    <tr>
      <LabelledCell label="Name">
        {token.name}
        {signedIn && <span class="badge active">this dashboard</span>}
      </LabelledCell>
      <LabelledCell label="Starts with" class="mono">
        {token.prefix ?? 'not known until its next use'}
      </LabelledCell>
      <LabelledCell label="Scopes" class="scopes">
        {token.scopes.length === SCOPES.length ? 'All' : token.scopes.join(', ')}
      </LabelledCell>
      <LabelledCell label="Created">
        <Time iso={token.createdAt} />
      </LabelledCell>
      <LabelledCell label="Last used">{token.lastUsedAt ? <Time iso={token.lastUsedAt} /> : 'Never'}</LabelledCell>
      <LabelledCell label="Expires">
        {token.expiresAt ? (
          <>
            {expired && 'Expired '}
            <Time iso={token.expiresAt} />
          </>
        ) : (
          'Never'
        )}
      </LabelledCell>
      <LabelledCell label="Actions">
        {!confirming && (
          <button type="button" class="secondary" onClick={() => setConfirming(true)} aria-label={`Revoke ${token.name}`}>
            Revoke
          </button>
        )}
        {confirming && (
          <div class="confirm" role="group" aria-label={`Revoke ${token.name}?`}>
            <p>
              Revoke <strong>{token.name}</strong>? Every client using it is refused from now on.
              {signedIn && ' This dashboard is signed in with it: you will be signed out.'}
              {only && " It is the account's only token: without it, nothing can reach the account again."}
            </p>
            <button type="button" class="danger" disabled={revoke.busy} onClick={() => revoke.run()}>
              {revoke.busy ? 'Revoking…' : 'Revoke token'}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
            <ErrorText error={revoke.error} />
          </div>
        )}
      </LabelledCell>
    </tr>
  );
}

function MakeToken({ api, onMade }: { api: Api; onMade: (created: CreatedApiToken) => void }) {
  // A token grants only scopes it holds: those are offered, all of them at first.
  const held = useContext(ScopesContext);
  const [name, setName] = useState('');
  const [days, setDays] = useState(0);
  const [scopes, setScopes] = useState<Scope[]>([...held]);
  const make = useAction(
    () =>
      api.createToken({
        name: name.trim(),
        scopes,
        ...(days > 0 ? { expiresAt: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
      }),
    onMade,
  );
  return (
    <ActionForm class="subscription" onSubmit={() => make.run()}>
      <h2>Make a token</h2>
      <TextField
        id="token-name"
        name="name"
        label="Name"
        hint="What it is for, such as the client that will use it (1 to 100 characters)."
        required
        value={name}
        onValue={setName}
        error={errorOf(make.error, 'name')}
      />
      <label for="token-lifetime">Expires</label>
      <select id="token-lifetime" value={String(days)} onChange={(event) => setDays(Number(event.currentTarget.value))}>
        {LIFETIMES.map((lifetime) => (
          <option key={lifetime.days} value={String(lifetime.days)}>
            {lifetime.label}
          </option>
        ))}
      </select>
      <CheckBoxes
        id="token-scopes"
        legend="Scopes"
        name="scopes"
        options={SCOPES}
        chosen={scopes}
        onChange={setScopes}
        error={errorOf(make.error, 'scopes')}
        hint={
          <>
            What the new token may do. A token can grant only the scopes it holds
            {held.length < SCOPES.length && <>: the one this dashboard is signed in with lacks those unchecked and greyed</>}.
          </>
        }
        note={(scope) => (held.includes(scope) ? SCOPE_MEANINGS[scope] : 'this token lacks it')}
        disabled={(scope) => !held.includes(scope)}
      />
      <ErrorText error={errorOf(make.error, null, ['name', 'scopes'])} />
      <button type="submit" disabled={make.busy}>
        {make.busy ? 'Making the token…' : 'Make token'}
      </button>
    </ActionForm>
  );
}
