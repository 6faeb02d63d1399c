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
  return (
    <CredentialControl<AuthDraft>
      title="Authentication"
      saved={webhook.auth !== null}
      labels={{
        set: 'Set authentication',
        replace: 'Replace authentication',
        remove: 'Remove authentication',
        save: 'Save authentication',
      }}
      said={(isSaved) => (isSaved ? 'Authentication saved.' : 'Authentication removed.')}
      newDraft={() => draftFrom(webhook.auth)}
      save={(next) => api.updateWebhook(webhook.id, { auth: next && toAuth(next) })}
      isSavedIn={(saved) => saved.auth !== null}
      fields={(draft, setDraft, error) => <AuthFields idPrefix="edit" value={draft} onChange={setDraft} kinds={SET_KINDS} error={error} />}
      onSaved={onSaved}
    />
  );
}

function CertificateControl({ api, webhook, onSaved }: Props) {
  return (
    <CredentialControl<CertificateDraft>
      title="Client certificate"
      saved={webhook.clientCertificate !== null}
      labels={{
        set: 'Set a client certificate',
        replace: 'Replace the certificate',
        remove: 'Remove the certificate',
        save: 'Save the certificate',
      }}
      said={(isSaved) => (isSaved ? 'Client certificate saved.' : 'Client certificate removed.')}
      newDraft={() => EMPTY_CERTIFICATE}
      // Both fields empty is no certificate to save: sent as typed, the API says which is missing.
      save={(next) => api.updateWebhook(webhook.id, { clientCertificate: next && (toCertificate(next) ?? next) })}
      isSavedIn={(saved) => saved.clientCertificate !== null}
      fields={(draft, setDraft, error) => (
        <CertificateFields
          idPrefix="edit"
          value={draft}
          onChange={setDraft}
          error={error}
          hint="Presented in every TLS handshake with the receiver: the certificate (then any intermediates) and its key, pasted or read from files."
        />
      )}
      onSaved={onSaved}
    />
  );
}

interface CredentialControlProps<Draft> {
  title: string;
  /** The webhook holds one now. */
  saved: boolean;
  labels: { set: string; replace: string; remove: string; save: string };
  /** What the page says once a change is saved: whether one is saved now. */
  said: (isSaved: boolean) => string;
  newDraft: () => Draft;
  /** Saves the draft, or removes the credential (null). */
  save: (draft: Draft | null) => Promise<Webhook>;
  isSavedIn: (webhook: Webhook) => boolean;
  fields: (draft: Draft, setDraft: (draft: Draft) => void, error: unknown) => preact.JSX.Element;
  onSaved: (webhook: Webhook) => void;
}

/** One credential: its form while a draft is open, else its set or replace and remove buttons. */
function CredentialControl<Draft>({
  title,
  saved,
  labels,
  said,
  newDraft,
  save,
  isSavedIn,
  fields,
  onSaved,
}: CredentialControlProps<Draft>) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const change = useAction(save, (webhook) => {
    setDone(said(isSavedIn(webhook)));
    setDraft(null);
    onSaved(webhook);
  });
  return (
    <div class="credential">
      <h3>{title}</h3>
      {draft ? (
        <ActionForm onSubmit={() => change.run(draft)}>
          {fields(draft, setDraft, change.error)}
          <div class="row">
            <button type="submit" disabled={change.busy}>
              {labels.save}
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setDraft(null);
                change.reset();
              }}
            >
              Cancel
            </button>
          </div>
        </ActionForm>
      ) : (
        <>
          {done && <Done text={done} />}
          <div class="row">
            <button
              type="button"
              onClick={() => {
                setDone(null);
                setDraft(newDraft());
              }}
            >
              {saved ? labels.replace : labels.set}
            </button>
            {saved && (
              <button type="button" class="secondary" disabled={change.busy} onClick={() => change.run(null)}>
                {labels.remove}
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
