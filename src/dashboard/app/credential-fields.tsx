// The credentials a receiver behind a gateway asks of every request: static headers or OAuth2
// client credentials, and a client certificate (mutual TLS). Registration and a webhook's page
// share these fields; what they hold lives in the form's state only, and goes with it.
import type { TargetedEvent } from 'preact';
import type { ClientCertificate, ClientCertificateView, ReceiverAuth, ReceiverAuthView } from './api';
import { ErrorText, Time } from './feedback';
import { TextField } from './text-field';

export type AuthKind = 'none' | 'headers' | 'oauth2';

export interface HeaderRow {
  name: string;
  value: string;
}

/** The authentication as typed: the fields of every kind, so that switching kinds loses nothing. */
export interface AuthDraft {
  type: AuthKind;
  headers: HeaderRow[];
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  audience: string;
}

export const emptyAuth = (type: AuthKind): AuthDraft => ({
  type,
  headers: [{ name: '', value: '' }],
  tokenUrl: '',
  clientId: '',
  clientSecret: '',
  scope: '',
  audience: '',
});

/** The most headers `auth` may send (DESIGN §19). */
const MAX_HEADERS = 10;

const KIND_LABELS: Record<AuthKind, string> = {
  none: 'None: the signature only',
  headers: 'Static headers',
  oauth2: 'OAuth2 client credentials',
};

/** The draft as the API takes it; rows left empty are dropped, a name given twice is refused here (an object keeps one). */
export function toAuth(draft: AuthDraft): ReceiverAuth | null {
  if (draft.type === 'none') return null;
  if (draft.type === 'oauth2') {
    const scope = draft.scope.trim();
    const audience = draft.audience.trim();
    return {
      type: 'oauth2',
      tokenUrl: draft.tokenUrl.trim(),
      clientId: draft.clientId.trim(),
      clientSecret: draft.clientSecret,
      ...(scope ? { scope } : {}),
      ...(audience ? { audience } : {}),
    };
  }
  const headers: Record<string, string> = {};
  for (const row of draft.headers) {
    const name = row.name.trim();
    if (name === '' && row.value === '') continue;
    if (Object.hasOwn(headers, name)) throw new Error(`The header ${name} is given twice.`);
    headers[name] = row.value;
  }
  return { type: 'headers', headers };
}

interface AuthFieldsProps {
  idPrefix: string;
  value: AuthDraft;
  onChange: (value: AuthDraft) => void;
  /** The kinds offered: registration offers none, a change sets one (removing is a button of its own). */
  kinds: readonly AuthKind[];
  /** An error about `auth`, shown beneath its fields. */
  error: unknown;
}

export function AuthFields({ idPrefix, value, onChange, kinds, error }: AuthFieldsProps) {
  const set = (change: Partial<AuthDraft>) => onChange({ ...value, ...change });
  const setRow = (index: number, change: Partial<HeaderRow>) =>
    set({ headers: value.headers.map((row, i) => (i === index ? { ...row, ...change } : row)) });
  return (
    <fieldset>
      <legend>Authentication on every request</legend>
      {kinds.map((kind) => (
        <label class="check" key={kind}>
          <input
            type="radio"
            name={`${idPrefix}-auth-type`}
            value={kind}
            checked={value.type === kind}
            onChange={() => set({ type: kind })}
          />
          {KIND_LABELS[kind]}
        </label>
      ))}
      {value.type === 'headers' && (
        <>
          <p class="hint" id={`${idPrefix}-headers-hint`}>
            Up to {MAX_HEADERS} headers, such as X-Api-Key. Their values are sent with every request and never shown again.
          </p>
          {value.headers.map((row, index) => (
            <div class="header-row" key={index} role="group" aria-label={`Header ${index + 1}`}>
              <div>
                <label for={`${idPrefix}-header-${index}-name`}>Header {index + 1} name</label>
                <input
                  id={`${idPrefix}-header-${index}-name`}
                  type="text"
                  class="mono"
                  autocomplete="off"
                  spellcheck={false}
                  value={row.name}
                  onInput={(event) => setRow(index, { name: event.currentTarget.value })}
                />
              </div>
              <div>
                <label for={`${idPrefix}-header-${index}-value`}>Header {index + 1} value</label>
                <input
                  id={`${idPrefix}-header-${index}-value`}
                  type="password"
                  class="mono"
                  autocomplete="off"
                  value={row.value}
                  onInput={(event) => setRow(index, { value: event.currentTarget.value })}
                />
              </div>
              {value.headers.length > 1 && (
                <button type="button" class="secondary" onClick={() => set({ headers: value.headers.filter((_, i) => i !== index) })}>
                  Remove header {index + 1}
                </button>
              )}
            </div>
          ))}
          {value.headers.length < MAX_HEADERS && (
            <button type="button" class="secondary" onClick={() => set({ headers: [...value.headers, { name: '', value: '' }] })}>
              Add a header
            </button>
          )}
        </>
      )}
      {value.type === 'oauth2' && (
        <>
          <p class="hint">
            The client credentials grant: the token endpoint's access token goes as Authorization: Bearer on every request. The secret is
            never shown again.
          </p>
          <TextField
            id={`${idPrefix}-token-url`}
            label="Token URL"
            name="tokenUrl"
            inputMode="url"
            class="mono"
            value={value.tokenUrl}
            onValue={(tokenUrl) => set({ tokenUrl })}
            error={null}
          />
          <TextField
            id={`${idPrefix}-client-id`}
            label="Client id"
            name="clientId"
            class="mono"
            value={value.clientId}
            onValue={(clientId) => set({ clientId })}
            error={null}
          />
          <TextField
            id={`${idPrefix}-client-secret`}
            label="Client secret"
            name="clientSecret"
            class="mono"
            concealed
            value={value.clientSecret}
            onValue={(clientSecret) => set({ clientSecret })}
            error={null}
          />
          <TextField
            id={`${idPrefix}-scope`}
            label="Scope (optional)"
            name="scope"
            value={value.scope}
            onValue={(scope) => set({ scope })}
            error={null}
          />
          <TextField
            id={`${idPrefix}-audience`}
            label="Audience (optional)"
            name="audience"
            value={value.audience}
            onValue={(audience) => set({ audience })}
            error={null}
          />
        </>
      )}
      <ErrorText error={error} id={`${idPrefix}-auth-error`} />
    </fieldset>
  );
}

/** A client certificate as typed or read from files. */
export interface CertificateDraft {
  certificate: string;
  privateKey: string;
}

export const EMPTY_CERTIFICATE: CertificateDraft = { certificate: '', privateKey: '' };

/** The draft as the API takes it; with both fields empty, none. */
export const toCertificate = (draft: CertificateDraft): ClientCertificate | null =>
  draft.certificate.trim() === '' && draft.privateKey.trim() === ''
    ? null
    : { certificate: draft.certificate, privateKey: draft.privateKey };

interface CertificateFieldsProps {
  idPrefix: string;
  value: CertificateDraft;
  onChange: (value: CertificateDraft) => void;
  /** An error about `clientCertificate`, shown beneath its fields. */
  error: unknown;
  hint: string;
}

export function CertificateFields({ idPrefix, value, onChange, error, hint }: CertificateFieldsProps) {
  return (
    <fieldset aria-describedby={`${idPrefix}-certificate-hint`}>
      <legend>Client certificate (mutual TLS)</legend>
      <p class="hint" id={`${idPrefix}-certificate-hint`}>
        {hint}
      </p>
      <PemField
        id={`${idPrefix}-certificate`}
        label="Certificate (PEM)"
        fileLabel="Read the certificate from a file"
        value={value.certificate}
        onValue={(certificate) => onChange({ ...value, certificate })}
      />
      <PemField
        id={`${idPrefix}-private-key`}
        label="Private key (PEM, unencrypted)"
        fileLabel="Read the private key from a file"
        value={value.privateKey}
        onValue={(privateKey) => onChange({ ...value, privateKey })}
      />
      <ErrorText error={error} id={`${idPrefix}-certificate-error`} />
    </fieldset>
  );
}

/** A PEM pasted, or read in the page from a file chosen beside it. */
function PemField({
  id,
  label,
  fileLabel,
  value,
  onValue,
}: {
  id: string;
  label: string;
  fileLabel: string;
  value: string;
  onValue: (value: string) => void;
}) {
  const read = async (event: TargetedEvent<HTMLInputElement>) => {
    const file = event.currentTarget.files?.[0];
    if (file) onValue(await file.text());
  };
  return (
    <>
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="mono pem"
        rows={4}
        autocomplete="off"
        spellcheck={false}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      <label class="file" for={`${id}-file`}>
        {fileLabel}
      </label>
      <input id={`${id}-file`} type="file" accept=".pem,.crt,.cer,.key,text/plain" onChange={(event) => void read(event)} />
    </>
  );
}

/** What authenticates every request, in words: never a credential, since the API answers none. */
export function describeAuth(auth: ReceiverAuthView): string {
  if (auth === null) return 'None: the signature only';
  if (auth.type === 'headers') return `Static headers: ${auth.headerNames.join(', ')}`;
  const extras = [auth.scope && `scope ${auth.scope}`, auth.audience && `audience ${auth.audience}`].filter(Boolean);
  return `OAuth2 client credentials: client ${auth.clientId} at ${auth.tokenUrl}${extras.length ? ` (${extras.join(', ')})` : ''}`;
}

/** The client certificate as answered: its subject, expiry and fingerprint. */
export function CertificateSummary({ certificate }: { certificate: ClientCertificateView }) {
  if (certificate === null) return <>None</>;
  return (
    <>
      {certificate.subject}, expires <Time iso={certificate.notAfter} />
      <br />
      <span class="mono small">SHA-256 {certificate.fingerprintSha256}</span>
    </>
  );
}
