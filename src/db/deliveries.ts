import type { DeliveryKind, DeliveryResult } from '../types';
import type { Db } from './sql';

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  kind: DeliveryKind;
  event: string;
  listId: string | null;
  cursor: number | null;
  at: string | null;
  /** The id a redelivery repeats; absent for the others. */
  redeliveryOf?: string;
  result: DeliveryResult;
}

/** What GET /v3/webhooks/{id}/deliveries shows of one attempt. */
export interface DeliveryLogEntry {
  id: string;
  event: string;
  listId: string | null;
  cursor: number | null;
  at: string | null;
  kind: DeliveryKind;
  redeliveryOf: string | null;
  outcome: 'delivered' | 'failed';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
}

/** The log keeps at least this many attempts per webhook; older ones are pruned. */
export const DELIVERY_LOG_KEPT = 1000;
/** Pruning runs once every this many attempts of a webhook, not on every insert. */
export const DELIVERY_LOG_PRUNE_EVERY = 100;

/**
 * Logs an attempt (nothing when the webhook is gone), and now and then prunes the webhook's
 * log. A failed event delivery is also reported against the webhook, in the same statement,
 * before its workflow hears of it. `failuresToReset`: whether, at this moment, the webhook
 * has a failure count above 0 or failures its workflow has yet to count; a success then
 * has something to reset.
 */
export async function recordDelivery(sql: Db, delivery: DeliveryRecord): Promise<{ failuresToReset: boolean }> {
  const { result } = delivery;
  const reportsFailure = delivery.kind === 'event' && !result.delivered && result.error !== 'internal';
  const [logged] = await sql<{ count: string; failuresToReset: boolean }[]>`
    WITH counted AS (
      UPDATE webhooks SET deliveries_logged = deliveries_logged + 1,
                          failures_reported = failures_reported + ${reportsFailure ? 1 : 0}
      WHERE id = ${delivery.webhookId}
      RETURNING deliveries_logged, consecutive_failures > 0 OR failures_reported > failures_counted AS failures_to_reset
    ), inserted AS (
      INSERT INTO deliveries (id, webhook_id, kind, event, list_id, cursor, at, redelivery_of, outcome, status_code, error, duration_ms)
      SELECT ${delivery.id}, ${delivery.webhookId}, ${delivery.kind}, ${delivery.event}, ${delivery.listId},
             ${delivery.cursor}, ${delivery.at}, ${delivery.redeliveryOf ?? null}, ${result.delivered ? 'delivered' : 'failed'},
             ${result.statusCode}, ${result.error}, ${result.durationMs}
      FROM counted
      ON CONFLICT (id) DO NOTHING
    )
    SELECT deliveries_logged AS count, failures_to_reset AS "failuresToReset" FROM counted`;
  if (logged && Number(logged.count) % DELIVERY_LOG_PRUNE_EVERY === 0) {
    await pruneDeliveryLog(sql, delivery.webhookId);
  }
  return { failuresToReset: logged?.failuresToReset ?? false };
}

export async function pruneDeliveryLog(sql: Db, webhookId: string): Promise<void> {
  await sql`
    DELETE FROM deliveries WHERE webhook_id = ${webhookId} AND id IN (
      SELECT id FROM deliveries WHERE webhook_id = ${webhookId}
      ORDER BY attempted_at DESC, id DESC OFFSET ${DELIVERY_LOG_KEPT})`;
}

/** Filters of the log, each optional: they combine with each other and with paging. */
export interface DeliveryLogFilters {
  outcome?: DeliveryLogEntry['outcome'];
  kind?: DeliveryKind;
  /** A topic, or `ping`. */
  event?: string;
}

interface DeliveryLogRow {
  id: string;
  event: string;
  list_id: string | null;
  cursor: string | null;
  at: Date | null;
  kind: DeliveryKind;
  redelivery_of: string | null;
  outcome: DeliveryLogEntry['outcome'];
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
}

const LOG_COLUMNS = ['id', 'event', 'list_id', 'cursor', 'at', 'kind', 'redelivery_of', 'outcome', 'status_code', 'error', 'duration_ms', 'attempted_at'];

function toLogEntry(row: DeliveryLogRow): DeliveryLogEntry {
  return {
    id: row.id,
    event: row.event,
    listId: row.list_id,
    cursor: row.cursor === null ? null : Number(row.cursor),
    at: row.at?.toISOString() ?? null,
    kind: row.kind,
    redeliveryOf: row.redelivery_of,
    outcome: row.outcome,
    statusCode: row.status_code,
    error: row.error,
    durationMs: row.duration_ms,
    attemptedAt: row.attempted_at.toISOString(),
  };
}

/** One entry of a webhook's log; null when it is not there (unknown, pruned, or another webhook's). */
export async function findDelivery(sql: Db, webhookId: string, deliveryId: string): Promise<DeliveryLogEntry | null> {
  const [row] = await sql<DeliveryLogRow[]>`
    SELECT ${sql(LOG_COLUMNS)} FROM deliveries WHERE id = ${deliveryId} AND webhook_id = ${webhookId}`;
  return row ? toLogEntry(row) : null;
}

/** Newest first; `before` is the id of the last entry of the previous page. */
export async function listDeliveries(
  sql: Db,
  webhookId: string,
  page: { limit: number; before?: string } & DeliveryLogFilters,
): Promise<DeliveryLogEntry[]> {
  const { before, outcome, kind, event } = page;
  const rows = await sql<DeliveryLogRow[]>`
    SELECT ${sql(LOG_COLUMNS)}
    FROM deliveries
    WHERE webhook_id = ${webhookId}
      ${outcome ? sql`AND outcome = ${outcome}` : sql``}
      ${kind ? sql`AND kind = ${kind}` : sql``}
      ${event ? sql`AND event = ${event}` : sql``}
      ${before ? sql`AND (attempted_at, id) < (SELECT attempted_at, id FROM deliveries WHERE id = ${before} AND webhook_id = ${webhookId})` : sql``}
    ORDER BY attempted_at DESC, id DESC
    LIMIT ${page.limit}`;
  return rows.map(toLogEntry);
}
