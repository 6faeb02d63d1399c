// The dashboard: sign in, then the account's webhooks, one webhook, the register form, or the notices.
import { useMemo, useState } from 'preact/hooks';
import { createApi, session } from './api';
import { NoticesPage } from './notices';
import { RegisterWebhook } from './register-webhook';
import { SignIn } from './sign-in';
import { Tokens } from './tokens';
import { Usage } from './usage';
import type { View } from './view';
import { WebhookDetail } from './webhook-detail';
import { WebhookList } from './webhook-list';

/** The pages the header leads to, in its order. */
const PAGES: [view: View, label: string][] = [
  [{ name: 'list' }, 'All webhooks'],
  [{ name: 'notices' }, 'Notices'],
  [{ name: 'tokens' }, 'API tokens'],
  [{ name: 'usage' }, 'Usage'],
];

export function App() {
  const [token, setToken] = useState(session.token());
  const [signInNotice, setSignInNotice] = useState<string | null>(null);
  const [view, setView] = useState<View>({ name: 'list' });

  const signOut = (notice: string | null) => {
    session.signOut();
    setToken(null);
    setSignInNotice(notice);
    setView({ name: 'list' });
  };
  const api = useMemo(() => token && createApi(token, () => signOut('The API no longer accepts this token: sign in again.')), [token]);

  if (!api) {
    return (
      <SignIn
        notice={signInNotice}
        onSignedIn={(accepted) => {
          session.signIn(accepted);
          setToken(accepted);
        }}
      />
    );
  }
  return (
    <>
      <header>
        <p class="brand">Webhooks</p>
        <nav aria-label="Dashboard">
          {PAGES.map(([page, label]) => (
            <button key={page.name} type="button" class="link" onClick={() => setView(page)}>
              {label}
            </button>
          ))}
          <button type="button" class="link" onClick={() => signOut('Signed out.')}>
            Sign out
          </button>
        </nav>
      </header>
      <main>
        {view.name === 'list' && <WebhookList api={api} notice={view.notice} navigate={setView} />}
        {view.name === 'register' && <RegisterWebhook api={api} navigate={setView} />}
        {view.name === 'webhook' && <WebhookDetail key={view.id} api={api} id={view.id} navigate={setView} />}
        {view.name === 'notices' && <NoticesPage api={api} navigate={setView} />}
        {view.name === 'tokens' && <Tokens api={api} signedInPrefix={token!.slice(0, 8)} />}
        {view.name === 'usage' && <Usage api={api} />}
      </main>
    </>
  );
}
