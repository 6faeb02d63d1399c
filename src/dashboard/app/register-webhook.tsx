// Register a webhook: its URL gets a signed ping, which must answer 2xx. A new webhook's
// secret is shown this once; registering a URL the account already has updates it.
import { useState } from 'preact/hooks';
import type { Api, Webhook } from './api';
import { AuthFields, CertificateFields, EMPTY_CERTIFICATE, emptyAuth, toAuth, toCertificate, type AuthKind } from './credential-fields';
import { ErrorText, errorOf } from './feedback';
import { PageHeading } from './heading';
import { SecretOnce } from './secret-once';
import { SubscriptionFields, toSubscription } from './subscription-fields';
import { TextField } from './text-field';
import type { View } from './view';

const FIELDS = ['url', 'events', 'listIds', 'auth', 'clientCertificate'];
const AUTH_KINDS: readonly AuthKind[] = ['none', 'headers', 'oauth2'];

export function RegisterWebhook({ api, navigate }: { api: Api; navigate: (view: View) => void }) {
  const [url, setUrl] = useState('');
  const [subscription, setSubscription] = useState({ events: ['list.changed'] as Webhook['events'], listIds: '' });
  const [auth, setAuth] = useState(emptyAuth('none'));
  const [certificate, setCertificate] = useState(EMPTY_CERTIFICATE);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Omitted when none: registering a URL again keeps the credentials it has.
      const credentials = { auth: toAuth(auth) ?? undefined, clientCertificate: toCertificate(certificate) ?? undefined };
      const webhook = await api.registerWebhook({ url: url.trim(), ...toSubscription(subscription), ...credentials });
      // Registered: what was typed goes from the page.
      setAuth(emptyAuth('none'));
      setCertificate(EMPTY_CERTIFICATE);
      if ('secret' in webhook) setCreated({ id: webhook.id, url: webhook.url, secret: webhook.secret });
      else
        navigate({
          name: 'list',
          notice: `${webhook.url} was already registered: its topics and lists, and any credentials given, are updated.`,
        });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    return (
      <section>
        <PageHeading>Webhook registered</PageHeading>
        <p class="url">{created.url} answered the ping and receives your lists' changes from now on.</p>
        <SecretOnce secret={created.secret} onDone={() => navigate({ name: 'webhook', id: created.id })} />
      </section>
    );
  }
  return (
    <section>
      <PageHeading>Register a webhook</PageHeading>
      <form onSubmit={(event) => void submit(event)} method="post" action="#" noValidate>
        <TextField
          id="register-url"
          label="Endpoint URL"
          hint="An https:// address. It gets a signed ping now and must answer 2xx."
          name="url"
          inputMode="url"
          required
          value={url}
          onValue={setUrl}
          error={errorOf(error, 'url')}
        />
        <SubscriptionFields idPrefix="register" value={subscription} onChange={setSubscription} error={error} />
        <details class="gateway">
          <summary>Receiver behind a gateway: credentials (optional)</summary>
          <AuthFields idPrefix="register" value={auth} onChange={setAuth} kinds={AUTH_KINDS} error={errorOf(error, 'auth')} />
          <CertificateFields
            idPrefix="register"
            value={certificate}
            onChange={setCertificate}
            error={errorOf(error, 'clientCertificate')}
            hint="Presented in every TLS handshake with the receiver, the ping's first. Leave both empty for none."
          />
        </details>
        <ErrorText error={errorOf(error, null, FIELDS)} />
        <div class="row">
          <button type="submit" disabled={busy}>
            {busy ? 'Pinging the URL…' : 'Register'}
          </button>
          <button type="button" class="secondary" onClick={() => navigate({ name: 'list' })}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
