// The dashboard: sign in, then the account's webhooks, one webhook, the register form, the
// notices, the tokens, the audit log or the usage; each offering only what the signed-in token
// may do (scopes.tsx).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { SCOPES, type Route } from '../../scopes';
import { createApi, session, type Api, type ApiToken } from './api';
import { AuditLogPage } from './audit-log';
import { LoadState } from './feedback';
import { NoticesPage } from './notices';
import { RegisterWebhook } from './register-webhook';
import { ScopesContext, useLacking } from './scopes';
import { SignIn } from './sign-in';
import { Tokens } from './tokens';
import { Usage } from './usage';
import { useLoad } from './use-load';
import type { View } from './view';
import { WebhookDetail } from './webhook-detail';
import { WebhookList } from './webhook-list';

/** The pages the header leads to, in its order, each with the route it reads: a token that may not is not led there. */
const PAGES: [view: View, label: string, reads: Route | null][] = [
  [{ name: 'list' }, 'All webhooks', null],
  [{ name: 'notices' }, 'Notices', 'GET /v3/account/notices'],
  [{ name: 'tokens' }, 'API tokens', 'GET /v3/account/tokens'],
  [{ name: 'audit' }, 'Audit log', 'GET /v3/account/audit-log'],
  [{ name: 'usage' }, 'Usage', 'GET /v3/account/usage'],
];

export function App() {
  const [token, setToken] = useState(session.token());
  // The signed-in token's own row, with its scopes: from signing in, or read again after a reload.
  const [own, setOwn] = useState<ApiToken | null>(null);
  const [signInNotice, setSignInNotice] = useState<string | null>(null);
  const [view, setView] = useState<View>({ name: 'list' });

  const signOut = (notice: string | null) => {
    session.signOut();
    setToken(null);
    setOwn(null);
    setSignInNotice(notice);
    setView({ name: 'list' });
  };
  const api = useMemo(() => token && createApi(token, () => signOut('The API no longer accepts this token: sign in again.')), [token]);

  if (!api) {
    return (
      <SignIn
        notice={signInNotice}
        onSignedIn={(accepted, row) => {
          session.signIn(accepted);
          setOwn(row);
          setToken(accepted);
        }}
      />
    );
  }
  if (!own) return <ReadOwnToken api={api} onRead={setOwn} />;
  return (
    <ScopesContext.Provider value={own.scopes}>
      <header>
        <p class="brand">Webhooks</p>
        <nav aria-label="Dashboard">
          {PAGES.map(([page, label, reads]) => (
            <PageLink key={page.name} label={label} reads={reads} onOpen={() => setView(page)} />
          ))}
          <button type="button" class="link" onClick={() => signOut('Signed out.')}>
            Sign out
          </button>
        </nav>
      </header>
      <main>
        {own.scopes.length < SCOPES.length && (
          <p class="hint limited">
            Signed in with the token {own.name}, which holds only {own.scopes.join(', ')}: the dashboard offers what it may do, and says
            what it may not.
          </p>
        )}
        {view.name === 'list' && <WebhookList api={api} notice={view.notice} navigate={setView} />}
        {view.name === 'register' && <RegisterWebhook api={api} navigate={setView} />}
        {view.name === 'webhook' && <WebhookDetail key={view.id} api={api} id={view.id} navigate={setView} />}
        {view.name === 'notices' && <NoticesPage api={api} navigate={setView} />}
        {view.name === 'tokens' && <Tokens api={api} signedInId={own.id} />}
        {view.name === 'audit' && <AuditLogPage api={api} navigate={setView} />}
        {view.name === 'usage' && <Usage api={api} />}
      </main>
    </ScopesContext.Provider>
  );
}

/** A header link, left out when the token may not read what its page shows. */
function PageLink({ label, reads, onOpen }: { label: string; reads: Route | null; onOpen: () => void }) {
  const lacking = useLacking(...(reads ? [reads] : []));
  if (lacking) return null;
  return (
    <button type="button" class="link" onClick={onOpen}>
      {label}
    </button>
  );
}

/** After a reload the tab has its token but not what it may do: that is read first. */
function ReadOwnToken({ api, onRead }: { api: Api; onRead: (own: ApiToken) => void }) {
  const own = useLoad(() => api.currentToken(), [api]);
  useEffect(() => {
    if (own.data) onRead(own.data);
  }, [own.data]);
  return (
    <main>
      <LoadState loaded={own} what="what this token may do" />
    </main>
  );
}
