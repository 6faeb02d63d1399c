import type { Topic } from '../topics';
import type { Webhook } from '../objects';
import type { WebhookLifecycleState } from '../contract/payloads';
import type { Db } from './sql';

export interface WebhookRow {
  id: string;
  url: string;
  events: Topic[];
  list_ids: string[];
  status: Webhook['status'];
  paused_reason: Webhook['pausedReason'];
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
}

// Every column but the secret, which only getWebhookSecret and the registration reply read.
export const WEBHOOK_COLUMNS = [
  'id',
  'url',
  'events',
  'list_ids',
  'status',
  'paused_reason',
  'consecutive_failures',
  'created_at',
  'updated_at',
];

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    listIds: row.list_ids,
    status: row.status,
    pausedReason: row.paused_reason,
    consecutiveFailures: row.consecutive_failures,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** An account's webhook; another account's id gives null, as an unknown one does. */
export async function findWebhook(sql: Db, accountId: string, webhookId: string): Promise<Webhook | null> {
  const [row] = await sql<WebhookRow[]>`
    SELECT ${sql(WEBHOOK_COLUMNS)} FROM webhooks WHERE id = ${webhookId} AND account_id = ${accountId}`;
  return row ? toWebhook(row) : null;
}

export async function listWebhooks(sql: Db, accountId: string): Promise<Webhook[]> {
  const rows = await sql<WebhookRow[]>`
    SELECT ${sql(WEBHOOK_COLUMNS)} FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at, id`;
  return rows.map(toWebhook);
}

export async function findWebhookByUrl(sql: Db, accountId: string, url: string): Promise<Webhook | null> {
  const [row] = await sql<WebhookRow[]>`
    SELECT ${sql(WEBHOOK_COLUMNS)} FROM webhooks WHERE account_id = ${accountId} AND url = ${url}`;
  return row ? toWebhook(row) : null;
}

export async function countWebhooks(sql: Db, accountId: string): Promise<number> {
  const [row] = await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM webhooks WHERE account_id = ${accountId}`;
  return row.count;
}

export async function getWebhookSecret(sql: Db, webhookId: string): Promise<string | null> {
  const [row] = await sql<{ secret: string }[]>`SELECT secret FROM webhooks WHERE id = ${webhookId}`;
  return row?.secret ?? null;
}

/** PATCH of events and listIds; the status belongs to the per-webhook workflow. */
export async function updateSubscription(sql: Db, webhookId: string, changes: { events?: Topic[]; listIds?: string[] }): Promise<void> {
  await sql`
    UPDATE webhooks SET events = COALESCE(${changes.events ?? null}, events),
                        list_ids = COALESCE(${changes.listIds ?? null}, list_ids),
                        updated_at = now()
    WHERE id = ${webhookId}`;
}

/**
 * Replaces the signing secret; the old one is gone. Every attempt reads the secret as it
 * starts, so one that starts after this commits signs with the new one.
 */
export async function replaceWebhookSecret(sql: Db, webhookId: string, secret: string): Promise<void> {
  await sql`UPDATE webhooks SET secret = ${secret}, updated_at = now() WHERE id = ${webhookId}`;
}

/**
 * Mirrors the per-webhook workflow's state, which only that workflow changes. Returns
 * true when this call paused the webhook (a repeat of the same call returns false).
 */
export async function mirrorWebhookState(sql: Db, state: WebhookLifecycleState): Promise<{ paused: boolean }> {
  const [row] = await sql<{ wasStatus: string }[]>`
    UPDATE webhooks w SET status = ${state.status}, paused_reason = ${state.pausedReason},
                          consecutive_failures = ${state.consecutiveFailures},
                          failures_counted = ${state.failuresCounted}, updated_at = now()
    FROM (SELECT id, status FROM webhooks WHERE id = ${state.webhookId} FOR UPDATE) AS before
    WHERE w.id = before.id
      AND (w.status, w.paused_reason, w.consecutive_failures, w.failures_counted)
          IS DISTINCT FROM (${state.status}, ${state.pausedReason}, ${state.consecutiveFailures}, ${state.failuresCounted})
    RETURNING before.status AS "wasStatus"`;
  return { paused: row?.wasStatus === 'active' && state.status === 'paused' };
}

export async function deleteWebhookRow(sql: Db, webhookId: string): Promise<void> {
  await sql`DELETE FROM webhooks WHERE id = ${webhookId}`;
}
