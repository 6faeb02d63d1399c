// Recoveries: the row each keeps (its request and end), and its set, fixed in `recovery_items`
// when it starts. Each item is also the claim of its one send and holds its outcome, so a
// send writes its own item only (no row that all sends of a recovery would queue on); the
// counts are read from the items until the recovery settles, then kept in its row.
import type { PendingQuery, Row } from 'postgres';
import type { AuditActor, Recovery, RecoveryStatus, RecoveryStoppedReason } from '../objects';
import { recordAudit } from './audit-log';
import type { DeliveryTarget } from './deliveries';
import { sealedCredentialsOf, sealedSecretOrNull, type SealedColumnsOrNull, type SealedCredentialsColumns } from './sealed-secrets';
import type { Db, Sql, Tx } from './sql';

interface RecoveryRow {
  id: string;
  webhook_id: string;
  since: Date;
  until: Date;
  status: RecoveryStatus;
  stopped_reason: RecoveryStoppedReason | null;
  total: number;
  sent: number;
  delivered: number;
  failed: number;
  created_at: Date;
  finished_at: Date | null;
}

/** A piece of SQL for a statement to hold. */
type Fragment = PendingQuery<Row[]>;

/** How many of a recovery's items were sent, delivered and failed (`internal` included). */
const itemCounts = (sql: Db, recoveryId: Fragment | string) => sql`
  SELECT count(redelivery_id)::int AS sent, count(*) FILTER (WHERE outcome = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE outcome IN ('failed', 'internal'))::int AS failed
  FROM recovery_items WHERE recovery_id = ${recoveryId}`;

/**
 * A recovery with its counts: its items' while it is unsettled, its row's once it has settled
 * (and its items are gone). `sql` makes the fragment in the statement's own connection.
 */
const withCounts = (sql: Db, where: Fragment) => sql`
  SELECT r.id, r.webhook_id, r.since, r.until, r.status, r.stopped_reason, r.total, r.created_at, r.finished_at,
         r.sent + c.sent AS sent, r.delivered + c.delivered AS delivered, r.failed + c.failed AS failed
  FROM recoveries r, LATERAL (${itemCounts(sql, sql`r.id`)}) c
  WHERE ${where}`;

function toRecovery(row: RecoveryRow): Recovery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    since: row.since.toISOString(),
    until: row.until.toISOString(),
    status: row.status,
    stoppedReason: row.stopped_reason,
    total: row.total,
    sent: row.sent,
    delivered: row.delivered,
    failed: row.failed,
    createdAt: row.created_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
  };
}

/** What POST …/recoveries asks for; `until` absent: now, as PostgreSQL's clock says. */
export interface RecoveryRequest {
  id: string;
  webhookId: string;
  since: string;
  until?: string;
}

/**
 * Records a recovery and fixes its set, in one statement: every event delivery of the webhook
 * logged in [since, until) that failed (`internal` included) or was skipped, unless a
 * redelivery of the same event (topic, list, cursor) was delivered since, numbered oldest
 * first; and records it as recovery.started in the audit log. Null, recording nothing, when
 * the webhook has a recovery not yet settled: the unique index decides, so two API processes
 * cannot both start one.
 */
export async function recordRecovery(tx: Tx, request: RecoveryRequest, actor: AuditActor): Promise<Recovery | null> {
  const [row] = await tx<(RecoveryRow & { account_id: string })[]>`
    WITH span AS (
      SELECT ${request.since}::timestamptz AS since, coalesce(${request.until ?? null}::timestamptz, now()) AS until
    ), chosen AS (
      SELECT d.id, d.event, d.list_id, d.cursor, d.at, d.attempted_at
      FROM deliveries d, span w
      WHERE d.webhook_id = ${request.webhookId} AND d.kind = 'event' AND d.outcome IN ('failed', 'skipped')
        AND d.attempted_at >= w.since AND d.attempted_at < w.until
        AND NOT EXISTS (
          SELECT 1 FROM deliveries r
          WHERE r.webhook_id = d.webhook_id AND r.kind = 'redelivery' AND r.outcome = 'delivered'
            AND r.event = d.event AND r.list_id = d.list_id AND r.cursor = d.cursor)
    ), recovery AS (
      INSERT INTO recoveries (id, webhook_id, since, until, total)
      SELECT ${request.id}, ${request.webhookId}, w.since, w.until, (SELECT count(*) FROM chosen) FROM span w
      ON CONFLICT (webhook_id) WHERE settled_at IS NULL DO NOTHING
      RETURNING *
    ), items AS (
      INSERT INTO recovery_items (recovery_id, position, redelivery_of, event, list_id, cursor, at)
      SELECT recovery.id, row_number() OVER (ORDER BY chosen.attempted_at, chosen.id), chosen.id, chosen.event, chosen.list_id,
             chosen.cursor, chosen.at
      FROM chosen, recovery
    )
    SELECT recovery.*, (SELECT account_id FROM webhooks WHERE id = recovery.webhook_id) FROM recovery`;
  if (!row) return null;
  const recovery = toRecovery(row);
  const { webhookId, since, until, total } = recovery;
  await recordAudit(tx, {
    accountId: row.account_id,
    action: 'recovery.started',
    target: recoveryTarget(recovery.id),
    actor,
    details: { webhookId, since, until, total },
  });
  return recovery;
}

const recoveryTarget = (id: string) => ({ type: 'recovery', id }) as const;

/** The webhook's recovery that is not yet settled (running, or cancelled with sends under way), if any. */
export async function findUnsettledRecovery(sql: Db, webhookId: string): Promise<Recovery | null> {
  const [row] = await sql<RecoveryRow[]>`${withCounts(sql, sql`r.webhook_id = ${webhookId} AND r.settled_at IS NULL`)}`;
  return row ? toRecovery(row) : null;
}

export async function findRecovery(sql: Db, webhookId: string, recoveryId: string): Promise<Recovery | null> {
  const [row] = await sql<RecoveryRow[]>`${withCounts(sql, sql`r.id = ${recoveryId} AND r.webhook_id = ${webhookId}`)}`;
  return row ? toRecovery(row) : null;
}

/** The newest first. */
export async function listRecoveries(sql: Db, webhookId: string, limit: number): Promise<Recovery[]> {
  const rows = await sql<RecoveryRow[]>`
    ${withCounts(sql, sql`r.webhook_id = ${webhookId}`)} ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`;
  return rows.map(toRecovery);
}

/**
 * Cancels a running recovery, recorded as recovery.cancelled: it is `cancelled` and finished
 * from now, and no send of it may claim an item any more (its workflow, told by a signal,
 * stops too). One already ended is left as it is, and nothing is recorded. Null when the
 * webhook has no such recovery.
 */
export function cancelRecoveryRow(
  sql: Sql,
  webhookId: string,
  recoveryId: string,
  actor: AuditActor,
): Promise<{ recovery: Recovery; cancelled: boolean } | null> {
  return sql.begin(async (tx) => {
    const [cancelled] = await tx<{ accountId: string }[]>`
      UPDATE recoveries r SET status = 'cancelled', finished_at = now()
      FROM webhooks w
      WHERE r.id = ${recoveryId} AND r.webhook_id = ${webhookId} AND r.status = 'running' AND w.id = r.webhook_id
      RETURNING w.account_id AS "accountId"`;
    if (cancelled) {
      const entry = { action: 'recovery.cancelled', target: recoveryTarget(recoveryId), actor, details: { webhookId } } as const;
      await recordAudit(tx, { accountId: cancelled.accountId, ...entry });
    }
    const recovery = await findRecovery(tx, webhookId, recoveryId);
    return recovery && { recovery, cancelled: cancelled !== undefined };
  });
}

/**
 * Ends a recovery as its workflow decided (a cancel recorded first stands) and settles it: its
 * counts move from its items into its row, its set (all sent, or never to be) is deleted, and
 * its webhook may start another. Settling again changes nothing.
 */
export async function settleRecoveryRow(
  sql: Db,
  recoveryId: string,
  end: { status: RecoveryStatus; stoppedReason: RecoveryStoppedReason | null },
) {
  await sql`
    WITH counts AS (${itemCounts(sql, recoveryId)}), settled AS (
      UPDATE recoveries r SET
        status = CASE WHEN r.status = 'running' THEN ${end.status} ELSE r.status END,
        stopped_reason = CASE WHEN r.status = 'running' THEN ${end.stoppedReason} ELSE r.stopped_reason END,
        finished_at = coalesce(r.finished_at, now()),
        settled_at = now(),
        sent = c.sent, delivered = c.delivered, failed = c.failed
      FROM counts c
      WHERE r.id = ${recoveryId} AND r.settled_at IS NULL
    )
    DELETE FROM recovery_items WHERE recovery_id = ${recoveryId}`;
}

export async function recoveryExists(sql: Db, recoveryId: string): Promise<boolean> {
  const [row] = await sql`SELECT 1 FROM recoveries WHERE id = ${recoveryId}`;
  return row !== undefined;
}

// ---- the sends ----

/** An item of a recovery's set: the logged event delivery it sends again. */
export interface RecoveryItem {
  redeliveryOf: string;
  event: string;
  listId: string;
  cursor: number;
  at: string;
}

interface ItemRow {
  redelivery_of: string;
  event: string;
  list_id: string;
  cursor: string;
  at: Date;
}

const toItem = (row: ItemRow): RecoveryItem => ({
  redeliveryOf: row.redelivery_of,
  event: row.event,
  listId: row.list_id,
  cursor: Number(row.cursor),
  at: row.at.toISOString(),
});

export interface RecoverySendClaim {
  recoveryId: string;
  webhookId: string;
  position: number;
  deliveryId: string;
}

export type RecoveryClaim =
  | { claimed: true; target: DeliveryTarget; item: RecoveryItem }
  | { claimed: false; because: 'webhook_deleted' | 'webhook_paused' | 'cancelled' | 'attempted_before' };

/**
 * Claims one send of a recovery before its POST, in one statement: the item takes the
 * redelivery's id (it counts as sent), provided the webhook is active, the recovery still
 * running and no attempt claimed the item before. A run that finds the item
 * claimed (by itself, run again, or by another) may send nothing.
 */
export async function claimRecoverySend(sql: Db, send: RecoverySendClaim): Promise<RecoveryClaim> {
  const [row] = await sql<
    (Partial<ItemRow> &
      SealedColumnsOrNull &
      SealedCredentialsColumns & { url: string | null; webhook_status: string | null; recovery_status: string | null })[]
  >`
    WITH target AS (
      SELECT url, secret_key_id, secret_sealed, credentials_key_id, credentials_sealed, status FROM webhooks WHERE id = ${send.webhookId}
    ), recovery AS (
      SELECT status FROM recoveries WHERE id = ${send.recoveryId}
    ), claimed AS (
      UPDATE recovery_items SET redelivery_id = ${send.deliveryId}
      WHERE recovery_id = ${send.recoveryId} AND position = ${send.position} AND redelivery_id IS NULL
        AND (SELECT status FROM target) = 'active' AND (SELECT status FROM recovery) = 'running'
      RETURNING redelivery_of, event, list_id, cursor, at
    )
    SELECT target.url, target.secret_key_id, target.secret_sealed, target.credentials_key_id, target.credentials_sealed,
           target.status AS webhook_status, (SELECT status FROM recovery) AS recovery_status, claimed.*
    FROM (SELECT 1) AS one LEFT JOIN target ON true LEFT JOIN claimed ON true`;
  if (row.webhook_status === null) return { claimed: false, because: 'webhook_deleted' };
  if (row.webhook_status !== 'active') return { claimed: false, because: 'webhook_paused' };
  if (row.recovery_status !== 'running') return { claimed: false, because: 'cancelled' };
  if (row.redelivery_of === undefined || row.redelivery_of === null) return { claimed: false, because: 'attempted_before' };
  return {
    claimed: true,
    target: { url: row.url!, secret: sealedSecretOrNull(row)!, credentials: sealedCredentialsOf(row), status: 'active' },
    item: toItem(row as ItemRow),
  };
}

export type RecoveryItemOutcome = 'delivered' | 'failed' | 'internal';

/** Records what a claimed send came to, once: a second record of the same item changes nothing. */
export async function recordRecoverySend(sql: Db, send: { recoveryId: string; position: number; outcome: RecoveryItemOutcome }) {
  await sql`
    UPDATE recovery_items SET outcome = ${send.outcome}
    WHERE recovery_id = ${send.recoveryId} AND position = ${send.position} AND outcome IS NULL`;
}

/** An item whose send may have been lost, as `settleRecoverySend` left it. */
export type SettledSend =
  | { state: 'gone' }
  | { state: 'unclaimed' }
  | {
      state: 'settled';
      outcome: RecoveryItemOutcome;
      /** The id its claim gave the redelivery, under which it is logged. */
      redeliveryId: string;
      item: RecoveryItem;
      /** Settled by this call with no log row to hold its outcome: the caller logs it as `internal`. */
      unlogged: boolean;
    };

/**
 * Settles the item of a send that did not come back (its worker was lost, or a run found it
 * claimed): what the log recorded under its redelivery id, or `internal` when nothing was. An item no attempt claimed is left alone (`unclaimed`: nothing
 * was sent), unless `giveUp`, which records it `internal` without sending it. `gone`: the
 * item is no more (its webhook was deleted).
 */
export async function settleRecoverySend(
  sql: Db,
  send: { recoveryId: string; position: number; deliveryId: string; giveUp: boolean },
): Promise<SettledSend> {
  const [row] = await sql<(ItemRow & { redelivery_id: string | null; outcome: RecoveryItemOutcome | null; unlogged: boolean })[]>`
    WITH item AS (
      SELECT * FROM recovery_items WHERE recovery_id = ${send.recoveryId} AND position = ${send.position} FOR UPDATE
    ), logged AS (
      SELECT d.outcome FROM deliveries d, item WHERE d.id = item.redelivery_id
    ), settled AS (
      UPDATE recovery_items i SET redelivery_id = coalesce(i.redelivery_id, ${send.deliveryId}),
                                  outcome = coalesce((SELECT outcome FROM logged), 'internal')
      FROM item
      WHERE i.recovery_id = item.recovery_id AND i.position = item.position AND i.outcome IS NULL
        AND (i.redelivery_id IS NOT NULL OR ${send.giveUp})
      RETURNING i.redelivery_id, i.outcome
    )
    SELECT item.redelivery_of, item.event, item.list_id, item.cursor, item.at,
           coalesce((SELECT redelivery_id FROM settled), item.redelivery_id) AS redelivery_id,
           coalesce((SELECT outcome FROM settled), item.outcome) AS outcome,
           EXISTS (SELECT 1 FROM settled) AND NOT EXISTS (SELECT 1 FROM logged) AS unlogged
    FROM item`;
  if (!row) return { state: 'gone' };
  if (row.outcome === null) return { state: 'unclaimed' };
  return { state: 'settled', outcome: row.outcome, redeliveryId: row.redelivery_id!, item: toItem(row), unlogged: row.unlogged };
}
