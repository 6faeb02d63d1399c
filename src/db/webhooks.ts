import type { Topic, Webhook, WebhookLifecycleState, WebhookStatus } from '../types';
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

/** Where and how to sign a delivery to the webhook, and whether it is active; null once it is deleted. */
export async function findDeliveryTarget(sql: Db, webhookId: string): Promise<DeliveryTarget | null> {
  const [row] = await sql<DeliveryTarget[]>`SELECT url, secret, status FROM webhooks WHERE id = ${webhookId}`;
  return row ?? null;
}

export interface DeliveryTarget {
  url: string;
  secret: string;
  status: WebhookStatus;
}

/** One event delivery's attempt, to be claimed before its POST. */
export interface DeliveryClaim {
  webhookId: string;
  deliveryId: string;
}

/** Where to send a claimed delivery; `claimed` false: nothing may be sent. */
export type ClaimedTarget = DeliveryTarget & { claimed: boolean };

/**
 * The targets of event deliveries and, for each whose webhook is active, the claim of its
 * one attempt, in one statement however many. `claimed` is false when the webhook is not
 * active (nothing is claimed) or when an earlier run of the same delivery already claimed
 * it, in an earlier call or earlier in this one: then nothing may be sent. Null for a
 * delivery whose webhook is deleted.
 */
export async function claimDeliveries(sql: Db, claims: readonly DeliveryClaim[]): Promise<(ClaimedTarget | null)[]> {
  const wanted = claims.map(({ webhookId, deliveryId }) => ({ webhook_id: webhookId, delivery_id: deliveryId }));
  const rows = await sql<(ClaimedTarget & { deliveryId: string })[]>`
    WITH wanted AS (
      SELECT DISTINCT webhook_id, delivery_id FROM jsonb_to_recordset(${sql.json(wanted)}) AS c(webhook_id text, delivery_id text)
    ), target AS (
      SELECT wanted.delivery_id, w.url, w.secret, w.status FROM wanted JOIN webhooks w ON w.id = wanted.webhook_id
    ), claim AS (
      INSERT INTO delivery_claims (delivery_id) SELECT delivery_id FROM target WHERE status = 'active'
      ON CONFLICT (delivery_id) DO NOTHING
      RETURNING delivery_id
    )
    SELECT target.delivery_id AS "deliveryId", url, secret, status, claim.delivery_id IS NOT NULL AS claimed
    FROM target LEFT JOIN claim ON claim.delivery_id = target.delivery_id`;
  const byDelivery = new Map(rows.map(({ deliveryId, ...target }) => [deliveryId, target]));
  return claims.map(({ deliveryId }) => {
    const target = byDelivery.get(deliveryId);
    if (target === undefined) return null;
    // Only the first ask of a delivery may send; a later one in this call finds it taken.
    byDelivery.set(deliveryId, { ...target, claimed: false });
    return target;
  });
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
