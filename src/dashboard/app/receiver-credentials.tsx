// Setting, replacing or removing a webhook's credentials for its receiver, on its page, one
// PATCH apiece (the page's facts show what is saved, as the API answers it: no credential). The form, and
// what was typed into it, go once it is saved: no secret stays in the page.
import { useState } from 'preact/hooks';
import { ActionForm } from './action-form';
import type { Api, ReceiverAuthView, Webhook } from './api';
import {
  AuthFields,
  CertificateFields,
  EMPTY_CERTIFICATE,
  emptyAuth,
  toAuth,
  toCertificate,
  type AuthDraft,
  type AuthKind,
  type CertificateDraft,
} from './credential-fields';
import { ErrorText } from './feedback';
import { useAction } from './use-action';
import { useFocusOnArrival } from './use-focus';

interface Props {
  api: Api;
  webhook: Webhook;
  onSaved: (webhook: Webhook) => void;
}

const SET_KINDS: readonly AuthKind[] = ['headers', 'oauth2'];

export function ReceiverCredentials(props: Props) {
  return (
    <section class="credentials" aria-labelledby="credentials-heading">
      <h2 id="credentials-heading">Receiver credentials</h2>
      <p class="hint">
        For a receiver behind a gateway: presented by every request to it (pings, events, test events, redeliveries, recoveries) beside the
        signature. Once saved, a credential is never shown again.
      </p>
      <div class="credential-groups">
        <AuthControl {...props} />
        <CertificateControl {...props} />
      </div>
    </section>
  );
}

/** A new draft for replacing what is saved: its names kept, its values to be typed again. */
function draftFrom(saved: ReceiverAuthView): AuthDraft {
  if (saved === null) return emptyAuth('headers');
  if (saved.type === 'headers') return { ...emptyAuth('headers'), headers: saved.headerNames.map((name) => ({ name, value: '' })) };
  return {
    ...emptyAuth('oauth2'),
    tokenUrl: saved.tokenUrl,
    clientId: saved.clientId,
    scope: saved.scope ?? '',
    audience: saved.audience ?? '',
  };
}

function AuthControl({ api, webhook, onSaved }: Props) {
  const [draft, setDraft] = useState<AuthDraft | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const change = useAction(
    (next: AuthDraft | null) => api.updateWebhook(webhook.id, { auth: next && toAuth(next) }),
    (saved) => {
      setDone(saved.auth ? 'Authentication saved.' : 'Authentication removed.');
      setDraft(null);
      onSaved(saved);
    },
  );
  const saved = webhook.auth;
  return (
    <div class="credential">
      <h3>Authentication</h3>
      {draft ? (
        <ActionForm onSubmit={() => change.run(draft)}>
          <AuthFields idPrefix="edit" value={draft} onChange={setDraft} kinds={SET_KINDS} error={change.error} />
          <SaveOrCancel
            label="Save authentication"
            busy={change.busy}
            onCancel={() => {
              setDraft(null);
              change.reset();
            }}
          />
        </ActionForm>
      ) : (
        <>
          {done && <Done text={done} />}
          <div class="row">
            <button
              type="button"
              onClick={() => {
                setDone(null);
                setDraft(draftFrom(saved));
              }}
            >
              {saved ? 'Replace authentication' : 'Set authentication'}
            </button>
            {saved && (
              <button type="button" class="secondary" disabled={change.busy} onClick={() => change.run(null)}>
                Remove authentication
              </button>
            )}
          </div>
          <ErrorText error={change.error} />
        </>
      )}
    </div>
  );
}

function CertificateControl({ api, webhook, onSaved }: Props) {
  const [draft, setDraft] = useState<CertificateDraft | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const change = useAction(
    (next: CertificateDraft | null) =>
      // Both fields empty is no certificate to save: sent as typed, the API says which is missing.
      api.updateWebhook(webhook.id, { clientCertificate: next && (toCertificate(next) ?? next) }),
    (saved) => {
      setDone(saved.clientCertificate ? 'Client certificate saved.' : 'Client certificate removed.');
      setDraft(null);
      onSaved(saved);
    },
  );
  const saved = webhook.clientCertificate;
  return (
    <div class="credential">
      <h3>Client certificate</h3>
      {draft ? (
        <ActionForm onSubmit={() => change.run(draft)}>
          <CertificateFields
            idPrefix="edit"
            value={draft}
            onChange={setDraft}
            error={change.error}
            hint="Presented in every TLS handshake with the receiver: the certificate (then any intermediates) and its key, pasted or read from files."
          />
          <SaveOrCancel
            label="Save the certificate"
            busy={change.busy}
            onCancel={() => {
              setDraft(null);
              change.reset();
            }}
          />
        </ActionForm>
      ) : (
        <>
          {done && <Done text={done} />}
          <div class="row">
            <button
              type="button"
              onClick={() => {
                setDone(null);
                setDraft(EMPTY_CERTIFICATE);
              }}
            >
              {saved ? 'Replace the certificate' : 'Set a client certificate'}
            </button>
            {saved && (
              <button type="button" class="secondary" disabled={change.busy} onClick={() => change.run(null)}>
                Remove the certificate
              </button>
            )}
          </div>
          <ErrorText error={change.error} />
        </>
      )}
    </div>
  );
}

/** Said where the form was, with the focus its button had. */
function Done({ text }: { text: string }) {
  const line = useFocusOnArrival<HTMLParagraphElement>();
  return (
    <p class="status" role="status" ref={line} tabIndex={-1}>
      {text}
    </p>
  );
}

/** A credential form's buttons: save it, or drop the draft. */
function SaveOrCancel({ label, busy, onCancel }: { label: string; busy: boolean; onCancel: () => void }) {
  return (
    <div class="row">
      <button type="submit" disabled={busy}>
        {label}
      </button>
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
