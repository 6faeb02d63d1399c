// One webhook: what it is, what its owner can do with it, and its delivery log; of these, what
// the signed-in token may read and do.
import { useState } from 'preact/hooks';
import type { Route, Scope } from '../../scopes';
import { ActionForm } from './action-form';
import type { Api, Webhook } from './api';
import { CertificateSummary, describeAuth } from './credential-fields';
import { DeliveryLog } from './delivery-log';
import { ErrorText, Loading, Status, describeResult, errorOf, Time } from './feedback';
import { PageHeading } from './heading';
import { WebhookHealthSection } from './health';
import { WebhookNotice } from './notices';
import { Reactivated, Reactivation } from './reactivation';
import { RecoverMissed } from './recovery';
import { ReceiverCredentials } from './receiver-credentials';
import { NotAllowed, useLacking } from './scopes';
import { SecretOnce } from './secret-once';
import { SubscriptionFields, toSubscription } from './subscription-fields';
import { SoleField } from './text-field';
import { useAction } from './use-action';
import { useLoad } from './use-load';
import { TOPICS, type Topic } from '../../topics';
import type { View } from './view';
import { StatusBadge, listsOf } from './webhook-list';

interface Props {
  api: Api;
  id: string;
  navigate: (view: View) => void;
}

/** What the owner does to the webhook itself: pause or reactivate (after a ping), ping, test events, rotate, delete, edit. */
const WEBHOOK_ACTIONS: Route[] = [
  'PATCH /v3/webhooks/{id}',
  'POST /v3/webhooks/{id}/pings',
  'POST /v3/webhooks/{id}/test-events',
  'POST /v3/webhooks/{id}/secret',
  'DELETE /v3/webhooks/{id}',
];

export function WebhookDetail(props: Props) {
  const cannotRead = useLacking('GET /v3/webhooks/{id}');
  return cannotRead ? <WebhookLogOnly {...props} lacking={cannotRead} /> : <WebhookPage {...props} />;
}

/** For a token that may not read the webhook: its id, and what the token may see of its deliveries. */
function WebhookLogOnly({ api, id, lacking }: Props & { lacking: Scope }) {
  const [logVersion, setLogVersion] = useState(0);
  const logged = () => setLogVersion((n) => n + 1);
  return (
    <section>
      <PageHeading>
        Webhook <span class="mono">{id}</span>
      </PageHeading>
      <NotAllowed scope={lacking} what="read this webhook's URL, topics and status" />
      <RecoverMissed api={api} webhookId={id} onLogged={logged} />
      <DeliveryLog api={api} webhookId={id} version={logVersion} onLogged={logged} />
    </section>
  );
}

function WebhookPage({ api, id, navigate }: Props) {
  const webhook = useLoad(() => api.getWebhook(id), [api, id]);
  const cannotAct = useLacking(...WEBHOOK_ACTIONS);
  // Bumped by every action that adds to the log, so the log shows it.
  const [logVersion, setLogVersion] = useState(0);
  const logged = () => setLogVersion((n) => n + 1);

  if (webhook.loading && !webhook.data) return <Loading what="the webhook" />;
  if (!webhook.data) {
    return (
      <section>
        <PageHeading>Webhook</PageHeading>
        <ErrorText error={webhook.error} />
        <button type="button" onClick={webhook.reload}>
          Try again
        </button>
      </section>
    );
  }
  const current = webhook.data;
  return (
    <section>
      <PageHeading>
        <span class="url">{current.url}</span>
      </PageHeading>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge webhook={current} />
        </dd>
        <dt>Consecutive failures</dt>
        <dd>{current.consecutiveFailures}</dd>
        <dt>Topics</dt>
        <dd>{current.events.join(', ')}</dd>
        <dt>Lists</dt>
        <dd>{listsOf(current)}</dd>
        {!current.relay && (
          <>
            <dt>Authentication</dt>
            <dd>{describeAuth(current.auth)}</dd>
            <dt>Client certificate</dt>
            <dd>
              <CertificateSummary certificate={current.clientCertificate} />
            </dd>
          </>
        )}
        <dt>Created</dt>
        <dd>
          <Time iso={current.createdAt} />
        </dd>
        <dt>Id</dt>
        <dd class="mono">{current.id}</dd>
      </dl>
      <WebhookNotice api={api} webhook={current} />
      <WebhookHealthSection api={api} webhook={current} />
      {cannotAct ? (
        <>
          {current.relay && <RelaySession />}
          <NotAllowed
            scope={cannotAct}
            what="pause, reactivate, ping, send a test event to, rotate the secret of, delete or edit this webhook"
          />
        </>
      ) : (
        <div class="actions">
          {current.relay ? <RelaySession /> : <StatusControl api={api} webhook={current} onChanged={webhook.set} onLogged={logged} />}
          <Ping api={api} webhook={current} onLogged={logged} />
          <SendTestEvent api={api} webhook={current} onLogged={logged} />
          <RotateSecret api={api} webhook={current} onRotated={webhook.reload} />
          <DeleteWebhook api={api} webhook={current} onDeleted={() => navigate({ name: 'list', notice: `${current.url} was deleted.` })} />
        </div>
      )}
      <RecoverMissed api={api} webhookId={current.id} onLogged={logged} />
      {!cannotAct && <EditSubscription api={api} webhook={current} onSaved={webhook.set} />}
      {!cannotAct && !current.relay && <ReceiverCredentials api={api} webhook={current} onSaved={webhook.set} />}
      <DeliveryLog api={api} webhookId={current.id} version={logVersion} onLogged={logged} />
    </section>
  );
}

interface ActionProps {
  api: Api;
  webhook: Webhook;
}

/** Pausing is one press; reactivating pings first and asks (`Reactivation`). */
function StatusControl({
  api,
  webhook,
  onChanged,
  onLogged,
}: ActionProps & { onChanged: (webhook: Webhook) => void; onLogged: () => void }) {
  // Set once this control has paused or reactivated: what it shows next takes the focus of the button that went.
  const [changedHere, setChangedHere] = useState(false);
  const changed = (next: Webhook) => {
    setChangedHere(true);
    onChanged(next);
  };
  return webhook.status === 'active' ? (
    <PauseDeliveries api={api} webhook={webhook} onPaused={changed} reactivated={changedHere} />
  ) : (
    <Reactivation api={api} webhook={webhook} onLogged={onLogged} onReactivated={changed} pausedHere={changedHere} />
  );
}

function PauseDeliveries({
  api,
  webhook,
  onPaused,
  reactivated,
}: ActionProps & { onPaused: (webhook: Webhook) => void; reactivated: boolean }) {
  const pause = useAction(() => api.updateWebhook(webhook.id, { status: 'paused' }), onPaused);
  return (
    <div class="action">
      <h2>Deliveries</h2>
      {reactivated ? <Reactivated /> : <p>Events are delivered as lists change.</p>}
      <button type="button" disabled={pause.busy} onClick={() => pause.run()}>
        Pause deliveries
      </button>
      <ErrorText error={pause.error} />
    </div>
  );
}

/** In place of pausing: a relay session never pauses, and lives as long as its svc-webhooks listen. */
function RelaySession() {
  return (
    <div class="action">
      <h2>Relay session</h2>
      <p>
        Opened by svc-webhooks listen: its deliveries go over that command's connection to a server on the developer's machine. It never
        pauses, and is deleted a minute after its listen stops.
      </p>
    </div>
  );
}

function Ping({ api, webhook, onLogged }: ActionProps & { onLogged: () => void }) {
  const ping = useAction(() => api.ping(webhook.id), onLogged);
  return (
    <div class="action">
      <h2>Test ping</h2>
      <p>Sends a signed ping now, also while paused. It never counts as a failure.</p>
      <button type="button" disabled={ping.busy} onClick={() => ping.run()}>
        {ping.busy ? 'Pinging…' : 'Send a ping'}
      </button>
      {ping.result && <Status>Ping: {describeResult(ping.result)}</Status>}
      <ErrorText error={ping.error} />
    </div>
  );
}

function SendTestEvent({ api, webhook, onLogged }: ActionProps & { onLogged: () => void }) {
  const [topic, setTopic] = useState<Topic>(webhook.events[0] ?? TOPICS[0]);
  const send = useAction(() => api.sendTestEvent(webhook.id, topic), onLogged);
  return (
    <ActionForm class="action" onSubmit={() => send.run()}>
      <h2>Test event</h2>
      <p>Sends one signed event of the topic chosen now, marked SVC-Test: 1, also while paused. It never counts as a failure.</p>
      <label for="test-event-topic">Topic</label>
      <select id="test-event-topic" value={topic} onChange={(event) => setTopic(event.currentTarget.value as Topic)}>
        {TOPICS.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      <button type="submit" disabled={send.busy}>
        {send.busy ? 'Sending…' : 'Send a test event'}
      </button>
      {send.result && <Status>Test event: {describeResult(send.result)}</Status>}
      <ErrorText error={send.error} />
    </ActionForm>
  );
}

function RotateSecret({ api, webhook, onRotated }: ActionProps & { onRotated: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [own, setOwn] = useState('');
  const rotate = useAction(
    () => api.rotateSecret(webhook.id, own.trim() || undefined),
    () => {
      setConfirming(false);
      setOwn('');
    },
  );
  if (rotate.result)
    return (
      <SecretOnce
        secret={rotate.result.secret}
        onDone={() => {
          rotate.reset();
          onRotated();
        }}
      />
    );
  return (
    <div class="action">
      <h2>Signing secret</h2>
      <p>Rotating replaces the secret at once: every delivery that starts after it is signed with the new one.</p>
      {!confirming ? (
        <button type="button" onClick={() => setConfirming(true)}>
          Rotate the secret
        </button>
      ) : (
        <ActionForm class="confirm" onSubmit={() => rotate.run()}>
          <SoleField
            id="own-secret"
            label="Your own new secret (optional)"
            hint="whsec_ then 32 to 100 letters, digits, _ or -. Give your receiver both secrets first to rotate with no failed verification. Empty: a random one."
            name="secret"
            class="mono"
            value={own}
            onValue={setOwn}
            actionError={rotate.error}
          />
          <div class="row">
            <button type="submit" disabled={rotate.busy}>
              Rotate now
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setConfirming(false);
                rotate.reset();
              }}
            >
              Cancel
            </button>
          </div>
        </ActionForm>
      )}
    </div>
  );
}

function DeleteWebhook({ api, webhook, onDeleted }: ActionProps & { onDeleted: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(() => api.deleteWebhook(webhook.id), onDeleted);
  return (
    <div class="action">
      <h2>Delete</h2>
      {!confirming ? (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Delete this webhook
        </button>
      ) : (
        <div class="confirm" role="group" aria-labelledby="delete-question">
          <p id="delete-question">Delete this webhook? Deliveries stop at once, and its log is gone.</p>
          <div class="row">
            <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.run()}>
              Yes, delete it
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <ErrorText error={remove.error} />
    </div>
  );
}

function EditSubscription({ api, webhook, onSaved }: ActionProps & { onSaved: (webhook: Webhook) => void }) {
  const [value, setValue] = useState({ events: webhook.events, listIds: webhook.listIds.join(', ') });
  const save = useAction(() => api.updateWebhook(webhook.id, toSubscription(value)), onSaved);
  return (
    <ActionForm class="subscription" onSubmit={() => save.run()}>
      <h2>Topics and lists</h2>
      <SubscriptionFields idPrefix="edit" value={value} onChange={setValue} error={save.error} />
      <ErrorText error={errorOf(save.error, null, ['events', 'listIds'])} />
      <button type="submit" disabled={save.busy}>
        Save topics and lists
      </button>
      {save.result && !save.busy && <Status>Saved.</Status>}
    </ActionForm>
  );
}
