// The account's webhooks, each with its topics, list filter, status, failure count and last 24
// hours; for a token that may not list them but may read delivery logs, a way to a webhook's log
// by its id.
import { useState } from 'preact/hooks';
import { ActionForm } from './action-form';
import type { Api, Webhook } from './api';
import { LoadState, Status, Time } from './feedback';
import { PageHeading } from './heading';
import { HealthBars } from './health';
import { LabelledCell } from './labelled-cell';
import { IfAllowed, NotAllowed, useLacking } from './scopes';
import { TextField } from './text-field';
import { useLoad } from './use-load';
import type { View } from './view';

interface Props {
  api: Api;
  navigate: (view: View) => void;
}

export function WebhookList({ api, notice, navigate }: Props & { notice?: string }) {
  const cannotList = useLacking('GET /v3/webhooks');
  return (
    <section>
      <PageHeading>Your webhooks</PageHeading>
      {notice && <Status>{notice}</Status>}
      <IfAllowed routes={['POST /v3/webhooks']} what="register a webhook">
        <p>
          <button type="button" onClick={() => navigate({ name: 'register' })}>
            Register a webhook
          </button>
        </p>
      </IfAllowed>
      {cannotList ? (
        <>
          <NotAllowed scope={cannotList} what="list your webhooks" />
          <OpenById navigate={navigate} />
        </>
      ) : (
        <WebhookTable api={api} navigate={navigate} />
      )}
    </section>
  );
}

/** A webhook's page by its id, for a token that may read its log but not list the webhooks. */
function OpenById({ navigate }: Pick<Props, 'navigate'>) {
  const [id, setId] = useState('');
  if (useLacking('GET /v3/webhooks/{id}/deliveries')) return null;
  return (
    <ActionForm class="subscription" onSubmit={() => id.trim() && navigate({ name: 'webhook', id: id.trim() })}>
      <h2>A webhook's delivery log</h2>
      <TextField
        id="open-webhook-id"
        name="id"
        label="Webhook id"
        hint="wh_ and 24 characters: the Id on the webhook's page, or the SVC-Webhook header of its deliveries."
        class="mono"
        value={id}
        onValue={setId}
        error={null}
      />
      <button type="submit">Open its log</button>
    </ActionForm>
  );
}

function WebhookTable({ api, navigate }: Props) {
  const webhooks = useLoad(() => api.listWebhooks(), [api]);
  return (
    <>
      <LoadState loaded={webhooks} what="your webhooks" />
      {webhooks.data?.length === 0 && <p class="empty">No webhooks yet. Register one to receive your lists' changes.</p>}
      {webhooks.data && webhooks.data.length > 0 && (
        <table class="webhooks">
          <caption class="visually-hidden">Your webhooks</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Topics</th>
              <th scope="col">Lists</th>
              <th scope="col">Status</th>
              <th scope="col">Consecutive failures</th>
              <th scope="col">Last 24 hours</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {webhooks.data.map((webhook) => (
              <tr key={webhook.id}>
                <LabelledCell label="URL">
                  <button type="button" class="link url" onClick={() => navigate({ name: 'webhook', id: webhook.id })}>
                    {webhook.url}
                  </button>
                </LabelledCell>
                <LabelledCell label="Topics">{webhook.events.join(', ')}</LabelledCell>
                <LabelledCell label="Lists">{listsOf(webhook)}</LabelledCell>
                <LabelledCell label="Status">
                  <StatusBadge webhook={webhook} />
                </LabelledCell>
                <LabelledCell label="Consecutive failures">{webhook.consecutiveFailures}</LabelledCell>
                <LabelledCell label="Last 24 hours" class="health-cell">
                  <HealthBars api={api} webhook={webhook} />
                </LabelledCell>
                <LabelledCell label="Created">
                  <Time iso={webhook.createdAt} />
                </LabelledCell>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export const listsOf = (webhook: Webhook) => (webhook.listIds.length === 0 ? 'All lists' : webhook.listIds.join(', '));

const PAUSED_REASONS: Record<string, string> = {
  auto_failures: 'after 20 consecutive failures',
  manual: 'by hand',
};

export function StatusBadge({ webhook }: { webhook: Webhook }) {
  if (webhook.relay) return <span class="badge relay">Relay session</span>;
  if (webhook.status === 'active') return <span class="badge active">Active</span>;
  return (
    <span class="badge paused">Paused {webhook.pausedReason ? (PAUSED_REASONS[webhook.pausedReason] ?? webhook.pausedReason) : ''}</span>
  );
}
