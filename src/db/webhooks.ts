import { newId, newSigningSecret } from '../ids';
import {
  MAX_WEBHOOKS_PER_ACCOUNT,
  type RegistrationInput,
  type RegistrationResult,
  type Topic,
  type Webhook,
  type WebhookLifecycleState,
  type WebhookStatus,
} from '../types';
import { findListIdsNotOwned } from './lists';
import type { Db, Sql } from './sql';

interface WebhookRow {
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
const WEBHOOK_COLUMNS = ['id', 'url', 'events', 'list_ids', 'status', 'paused_reason', 'consecutive_failures', 'created_at', 'updated_at'];

function toWebhook(row: WebhookRow): Webhook {
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

/**
 * The target of an event delivery and, when the webhook is active, the claim of its one
 * attempt, in one statement. `claimed` is false when the webhook is not active (nothing is
 * claimed) or when an earlier run of the same delivery already claimed it: then nothing
 * may be sent.
 */
export async function claimDelivery(sql: Db, webhookId: string, deliveryId: string): Promise<(DeliveryTarget & { claimed: boolean }) | null> {
  const [row] = await sql<(DeliveryTarget & { claimed: boolean })[]>`
    WITH target AS (
      SELECT url, secret, status FROM webhooks WHERE id = ${webhookId}
    ), claim AS (
      INSERT INTO delivery_claims (delivery_id) SELECT ${deliveryId} FROM target WHERE status = 'active'
      ON CONFLICT (delivery_id) DO NOTHING
      RETURNING delivery_id
    )
    SELECT url, secret, status, EXISTS (SELECT 1 FROM claim) AS claimed FROM target`;
  return row ?? null;
}

/** PATCH of events and listIds; the status belongs to the per-webhook workflow. */
export async function updateSubscription(
  sql: Db,
  webhookId: string,
  changes: { events?: Topic[]; listIds?: string[] },
): Promise<void> {
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
export async function storeWebhookState(sql: Db, state: WebhookLifecycleState): Promise<{ paused: boolean }> {
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

export async function deleteWebhook(sql: Db, webhookId: string): Promise<void> {
  await sql`DELETE FROM webhooks WHERE id = ${webhookId}`;
}

/**
 * Records a registration in flight with the id and secret the webhook will have: the
 * existing ones on re-registration, new ones otherwise. Idempotent per registration id.
 */
export async function beginRegistration(
  sql: Db,
  input: Pick<RegistrationInput, 'registrationId' | 'accountId' | 'url'>,
): Promise<{ webhookId: string }> {
  const [row] = await sql<{ webhookId: string }[]>`
    WITH existing AS (
      SELECT id, secret FROM webhooks WHERE account_id = ${input.accountId} AND url = ${input.url}
    ), inserted AS (
      INSERT INTO registrations (id, account_id, webhook_id, secret)
      SELECT ${input.registrationId}, ${input.accountId},
             COALESCE((SELECT id FROM existing), ${newId('wh')}),
             COALESCE((SELECT secret FROM existing), ${newSigningSecret()})
      ON CONFLICT (id) DO NOTHING
      RETURNING webhook_id
    )
    SELECT webhook_id AS "webhookId" FROM inserted
    UNION ALL
    SELECT webhook_id FROM registrations WHERE id = ${input.registrationId}`;
  return row;
}

/** The secret the registration's ping is signed with; null once the registration is decided. */
export async function getRegistrationSecret(sql: Db, registrationId: string): Promise<string | null> {
  const [row] = await sql<{ secret: string | null }[]>`SELECT secret FROM registrations WHERE id = ${registrationId}`;
  return row?.secret ?? null;
}

/** Ends a registration that will store nothing (its ping failed): forget its secret. */
export async function abandonRegistration(sql: Db, registrationId: string): Promise<void> {
  await sql`UPDATE registrations SET secret = NULL, outcome = 'unreachable' WHERE id = ${registrationId}`;
}

/**
 * Stores the registered webhook: creates it, or updates the one with the same URL while
 * keeping its id, secret, status and failure count. The account row is locked so that
 * concurrent registrations see each other: never two webhooks with one URL, nor a sixth.
 * The webhook limit and list ownership are checked again here, under that lock.
 */
export async function completeRegistration(sql: Sql, input: RegistrationInput): Promise<RegistrationResult> {
  return sql.begin(async (tx) => {
    const [registration] = await tx<{ webhookId: string; secret: string | null; outcome: string | null }[]>`
      SELECT webhook_id AS "webhookId", secret, outcome FROM registrations
      WHERE id = ${input.registrationId} FOR UPDATE`;
    if (!registration) throw new Error(`registration ${input.registrationId} was never begun`);
    if (registration.outcome === 'created' || registration.outcome === 'updated') {
      // A retry of an attempt that committed: answer as that attempt did.
      const webhook = await findWebhook(tx, input.accountId, registration.webhookId);
      if (webhook) return { outcome: registration.outcome, webhook };
    }
    await tx`SELECT 1 FROM accounts WHERE id = ${input.accountId} FOR UPDATE`;

    const invalidListIds = await findListIdsNotOwned(tx, input.accountId, input.listIds);
    if (invalidListIds.length > 0) return { outcome: 'invalid_list_ids', invalidListIds };

    const existing = await findWebhookByUrl(tx, input.accountId, input.url);
    if (!existing && (await countWebhooks(tx, input.accountId)) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      return { outcome: 'limit_exceeded' };
    }
    const [row] = existing
      ? await tx<WebhookRow[]>`
          UPDATE webhooks SET events = ${input.events}, list_ids = ${input.listIds}, updated_at = now()
          WHERE id = ${existing.id}
          RETURNING ${tx(WEBHOOK_COLUMNS)}`
      : await tx<WebhookRow[]>`
          INSERT INTO webhooks (id, account_id, url, secret, events, list_ids)
          VALUES (${registration.webhookId}, ${input.accountId}, ${input.url}, ${registration.secret},
                  ${input.events}, ${input.listIds})
          RETURNING ${tx(WEBHOOK_COLUMNS)}`;
    const outcome = existing ? 'updated' : 'created';
    await tx`
      UPDATE registrations SET secret = NULL, outcome = ${outcome}, webhook_id = ${row.id}
      WHERE id = ${input.registrationId}`;
    return { outcome, webhook: toWebhook(row) };
  });
}
