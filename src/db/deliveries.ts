// The delivery log and the claims beside it: every attempt a worker makes (event deliveries,
// pings, redeliveries) is logged here, with what it sent and what came back, and so is every
// event delivery skipped while its webhook is paused; every event delivery's one attempt is
// claimed here before its POST.
import type {
  DeliveryDetail,
  DeliveryKind,
  DeliveryLogEntry,
  DeliveryLogFilters,
  DeliveryResult,
  ReceivedResponse,
  SentRequest,
  WebhookStatus,
} from '../objects';
import type { SealedSecret } from '../secret-keys';
import { recordAudit, type AuditRecord } from './audit-log';
import { addReportedFailures, failuresToReset, reportsFailure } from './failure-count';
import { sealedCredentialsOf, sealedSecretOf, type SealedColumns, type SealedCredentialsColumns } from './sealed-secrets';
import type { Db, Sql } from './sql';
import { hourOf } from './webhook-health';
import { newestFirstPage, type PageQuery } from './pages';

// ---- where a delivery goes, and the claim of its one attempt ----

/** Where and how to sign a delivery to the webhook, and whether it is active; null once it is deleted. */
export async function findDeliveryTarget(sql: Db, webhookId: string): Promise<DeliveryTarget | null> {
  const [row] = await sql<TargetRow[]>`
    SELECT url, status, secret_key_id, secret_sealed, credentials_key_id, credentials_sealed FROM webhooks WHERE id = ${webhookId}`;
  return row ? toTarget(row) : null;
}

export interface DeliveryTarget {
  url: string;
  /** Sealed: the activity opens it just before it signs. */
  secret: SealedSecret;
  /** The credentials every request to the receiver presents, sealed; null for none (read in the same statement). */
  credentials: SealedSecret | null;
  status: WebhookStatus;
}

type TargetRow = Omit<DeliveryTarget, 'secret' | 'credentials'> & SealedColumns & SealedCredentialsColumns;

export function toTarget({ secret_key_id, secret_sealed, credentials_key_id, credentials_sealed, ...target }: TargetRow): DeliveryTarget {
  return {
    ...target,
    secret: sealedSecretOf({ secret_key_id, secret_sealed }),
    credentials: sealedCredentialsOf({ credentials_key_id, credentials_sealed }),
  };
}

/** One event delivery's attempt, to be claimed before its POST. */
export interface DeliveryClaim {
  webhookId: string;
  deliveryId: string;
}

/**
 * Where to send a claimed delivery; `claimed` false: nothing may be sent, and `skipped` says
 * whether the run that claimed it skipped it (its webhook was paused). `relay`: a relay
 * session, whose outcomes never count against it.
 */
export type ClaimedTarget = DeliveryTarget & { claimed: boolean; skipped: boolean; relay: boolean };

/**
 * The targets of event deliveries and the claim of each one's attempt, in one statement
 * however many. `claimed` is false when an earlier run of the same delivery already claimed
 * it, in an earlier call or earlier in this one: then nothing may be sent. A paused
 * webhook's delivery is claimed too, as skipped: a later run, after a reactivation, sends
 * nothing either, and logs it skipped again. Null for a delivery whose webhook is deleted.
 */
export async function claimDeliveries(sql: Db, claims: readonly DeliveryClaim[]): Promise<(ClaimedTarget | null)[]> {
  const wanted = claims.map(({ webhookId, deliveryId }) => ({ webhook_id: webhookId, delivery_id: deliveryId }));
  const rows = await sql<(TargetRow & { deliveryId: string; claimed: boolean; skipped: boolean; relay: boolean })[]>`
    WITH wanted AS (
      SELECT DISTINCT webhook_id, delivery_id FROM jsonb_to_recordset(${sql.json(wanted)}) AS c(webhook_id text, delivery_id text)
    ), target AS (
      SELECT wanted.delivery_id, w.url, w.secret_key_id, w.secret_sealed, w.credentials_key_id, w.credentials_sealed, w.status, w.relay
      FROM wanted JOIN webhooks w ON w.id = wanted.webhook_id
    ), claim AS (
      INSERT INTO delivery_claims (delivery_id, skipped) SELECT delivery_id, status <> 'active' FROM target
      ON CONFLICT (delivery_id) DO NOTHING
      RETURNING delivery_id
    )
    SELECT target.delivery_id AS "deliveryId", url, secret_key_id, secret_sealed, credentials_key_id, credentials_sealed, status, relay,
           claim.delivery_id IS NOT NULL AS claimed,
           -- Read only for a claim taken before (this statement does not see its own insert).
           CASE WHEN claim.delivery_id IS NULL
                THEN coalesce((SELECT c.skipped FROM delivery_claims c WHERE c.delivery_id = target.delivery_id), false)
                ELSE status <> 'active' END AS skipped
    FROM target LEFT JOIN claim ON claim.delivery_id = target.delivery_id`;
  const byDelivery = new Map<string, ClaimedTarget>(
    rows.map(({ deliveryId, claimed, skipped, relay, ...target }) => [deliveryId, { ...toTarget(target), claimed, skipped, relay }]),
  );
  return claims.map(({ deliveryId }) => {
    const target = byDelivery.get(deliveryId);
    if (target === undefined) return null;
    // Only the first ask of a delivery may send; a later one in this call finds it taken.
    byDelivery.set(deliveryId, { ...target, claimed: false });
    return target;
  });
}

// ---- the log ----

/** One attempt, as a worker logs it. */
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
  /** What the POST came to; `skipped`: an event delivery not sent, its webhook being paused. */
  result: DeliveryResult | 'skipped';
  /** What was sent; null when nothing was. */
  request: SentRequest | null;
  /** What came back; null when no response arrived. */
  response: ReceivedResponse | null;
  /** The trace the attempt was part of; null or absent when nothing was traced. */
  traceId?: string | null;
  /** When the attempt's outcome was known (ms since the epoch): the log's `attempted_at`; absent: as the row is written. */
  attemptedAt?: number;
  /** An attempt an owner asked for through /v3 (a ping, a test event, a redelivery): its audit log entry (recordAskedDeliveries). */
  audit?: Omit<AuditRecord, 'accountId'>;
}

/** The log's columns of what an attempt came to. */
function outcomeColumns(result: DeliveryRecord['result']) {
  if (result === 'skipped') return { outcome: 'skipped', status_code: null, error: 'paused', duration_ms: 0 };
  return {
    outcome: result.delivered ? 'delivered' : 'failed',
    status_code: result.statusCode,
    error: result.error,
    duration_ms: result.durationMs,
  };
}

/** The log keeps at least this many attempts per webhook; older ones are pruned. */
export const DELIVERY_LOG_KEPT = 1000;
/** Pruning runs once every this many attempts of a webhook, not on every insert. */
export const DELIVERY_LOG_PRUNE_EVERY = 100;

/** PostgreSQL's `json`: kept as text, so the headers keep the order they were sent and received in. */
const JSON_OID = 114;

/** What logging an attempt told: see `recordDeliveries`. */
export interface RecordedDelivery {
  /** Its row is in the log: written now, or already there with the same outcome (a statement tried again after its answer was lost). */
  logged: boolean;
  /** Whether, once the statement has counted its attempts, a success of the webhook has a failure to reset (failure-count.ts). */
  failuresToReset: boolean;
  /** When the webhook's latest logged success ended, ms since the epoch; null if none. */
  lastDeliveredAt: number | null;
}

/**
 * Logs attempts with what each sent and got back, in one statement however many (nothing
 * for a webhook that is gone, nor for an id already logged), each at the time its attempt
 * ended (`attemptedAt`; absent: now). Counts those sent on their accounts' fair-use meter and
 * the event deliveries in their webhooks' health (webhook-health.ts), and now and then prunes
 * a webhook's log. A failed event delivery newly logged is also reported against its
 * webhook, in the same statement, before its workflow hears of it; a skipped one is logged
 * and neither reported nor counted, and our own failures (`internal`) are neither reported,
 * metered, nor a failure in the health. Attempts of one webhook in one call are concurrent,
 * so a success among them counts as coming after their failures.
 */
export async function recordDeliveries(sql: Db, deliveries: readonly DeliveryRecord[]): Promise<RecordedDelivery[]> {
  const attempts = deliveries.map((delivery) => ({
    id: delivery.id,
    webhook_id: delivery.webhookId,
    kind: delivery.kind,
    event: delivery.event,
    list_id: delivery.listId,
    cursor: delivery.cursor,
    at: delivery.at,
    redelivery_of: delivery.redeliveryOf ?? null,
    ...outcomeColumns(delivery.result),
    request: delivery.request,
    response: delivery.response,
    trace_id: delivery.traceId ?? null,
    attempted_at: delivery.attemptedAt === undefined ? null : new Date(delivery.attemptedAt).toISOString(),
  }));
  // As `json`, not `jsonb`, which would sort the headers' names.
  const counted = await sql<
    { webhookId: string; logged: string; added: string; failuresToReset: boolean; lastDeliveredAt: number | null; notLogged: string[] }[]
  >`
    WITH attempt AS (
      SELECT * FROM json_to_recordset(${sql.typed(attempts, JSON_OID)}) AS a(
        id text, webhook_id text, kind text, event text, list_id text, cursor bigint, at timestamptz,
        redelivery_of text, outcome text, status_code integer, error text, duration_ms integer,
        request json, response json, trace_id text, attempted_at timestamptz)
    ), locked AS (
      -- In the order of their ids, so that two calls counting the same webhooks cannot deadlock.
      SELECT w.id FROM webhooks w WHERE w.id IN (SELECT webhook_id FROM attempt) ORDER BY w.id FOR UPDATE OF w
    ), inserted AS (
      -- Only for the webhooks locked: a webhook deleted before gets nothing, one deleted after waits.
      INSERT INTO deliveries (id, webhook_id, kind, event, list_id, cursor, at, redelivery_of, outcome, status_code, error, duration_ms,
                              request, response, trace_id, attempted_at)
      SELECT a.id, a.webhook_id, a.kind, a.event, a.list_id, a.cursor, a.at, a.redelivery_of, a.outcome, a.status_code, a.error, a.duration_ms,
             a.request, a.response, a.trace_id, coalesce(a.attempted_at, now())
      FROM attempt a JOIN locked l ON l.id = a.webhook_id
      ON CONFLICT (id) DO NOTHING
      RETURNING id, webhook_id, kind, outcome, error, attempted_at
    ), not_logged AS (
      -- The attempts not written whose id holds another outcome: another run's (our own failure,
      -- as a rule). Written again with the same outcome (a statement tried again after its
      -- answer was lost), a row is its own.
      SELECT a.id, a.webhook_id FROM attempt a LEFT JOIN inserted i ON i.id = a.id
      WHERE i.id IS NULL AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = a.id AND d.outcome = a.outcome
                                         AND d.error IS NOT DISTINCT FROM a.error)
    ), per_webhook AS (
      -- What this call adds, from the rows it wrote: a row logged before (its id taken) adds nothing.
      SELECT l.id AS webhook_id, count(i.id) AS attempts,
             count(*) FILTER (WHERE ${reportsFailure(sql, sql`i`)}) AS failures,
             max(i.attempted_at) FILTER (WHERE i.kind = 'event' AND i.outcome = 'delivered') AS delivered_at,
             max(i.attempted_at) FILTER (WHERE ${reportsFailure(sql, sql`i`)}) AS failed_at
      FROM locked l LEFT JOIN inserted i ON i.webhook_id = l.id GROUP BY l.id
    ), event_logged AS (
      SELECT webhook_id, ${hourOf(sql, sql`attempted_at`)} AS hour, outcome, error FROM inserted WHERE kind = 'event'
    ), counted AS (
      -- The one UPDATE of each webhook (a statement may change a row once), its last times with it.
      UPDATE webhooks w SET deliveries_logged = w.deliveries_logged + p.attempts, ${addReportedFailures(sql, sql`p.failures`)},
                            last_delivered_at = greatest(w.last_delivered_at, p.delivered_at),
                            last_failed_at = greatest(w.last_failed_at, p.failed_at)
      FROM per_webhook p WHERE w.id = p.webhook_id
      RETURNING w.id, w.account_id, w.deliveries_logged, p.attempts, ${failuresToReset(sql)} AS failures_to_reset,
                w.last_delivered_at
    ), hourly AS (
      -- Each webhook's hour once a call, in the order of the webhooks' ids, as they are locked.
      -- Our own failures are not the receiver's: they are in none of the three.
      INSERT INTO webhook_health_hours AS h (webhook_id, hour, delivered, failed, skipped)
      SELECT webhook_id, hour, count(*) FILTER (WHERE outcome = 'delivered'), count(*) FILTER (WHERE outcome = 'failed'),
             count(*) FILTER (WHERE outcome = 'skipped')
      FROM event_logged WHERE error IS DISTINCT FROM 'internal' GROUP BY webhook_id, hour ORDER BY webhook_id, hour
      ON CONFLICT (webhook_id, hour) DO UPDATE
        SET delivered = h.delivered + EXCLUDED.delivered, failed = h.failed + EXCLUDED.failed, skipped = h.skipped + EXCLUDED.skipped
    ), metered AS (
      -- The fair-use meter, here rather than a statement per delivery: what was sent, not
      -- what was skipped or never sent (internal). Accounts in id order, so that two calls
      -- counting the same accounts cannot deadlock.
      INSERT INTO account_usage (account_id, day, deliveries)
      SELECT c.account_id, (now() AT TIME ZONE 'UTC')::date, count(*) FROM inserted i JOIN counted c ON c.id = i.webhook_id
      WHERE i.outcome <> 'skipped' AND i.error IS DISTINCT FROM 'internal'
      GROUP BY c.account_id ORDER BY c.account_id
      ON CONFLICT (account_id, day) DO UPDATE SET deliveries = account_usage.deliveries + EXCLUDED.deliveries
    )
    SELECT c.id AS "webhookId", c.deliveries_logged AS logged, c.attempts AS added, c.failures_to_reset AS "failuresToReset",
           (extract(epoch FROM c.last_delivered_at) * 1000)::float8 AS "lastDeliveredAt",
           ARRAY(SELECT n.id FROM not_logged n WHERE n.webhook_id = c.id) AS "notLogged"
    FROM counted c`;
  for (const { webhookId, logged, added } of counted) {
    // Once every DELIVERY_LOG_PRUNE_EVERY attempts: when this call's attempts crossed a multiple.
    if (Math.floor(Number(logged) / DELIVERY_LOG_PRUNE_EVERY) > Math.floor((Number(logged) - Number(added)) / DELIVERY_LOG_PRUNE_EVERY)) {
      await pruneDeliveryLog(sql, webhookId);
    }
  }
  const byWebhook = new Map(counted.map((row) => [row.webhookId, row]));
  return deliveries.map(({ id, webhookId }) => {
    const row = byWebhook.get(webhookId);
    if (row === undefined) return { logged: false, failuresToReset: false, lastDeliveredAt: null };
    return { logged: !row.notLogged.includes(id), failuresToReset: row.failuresToReset, lastDeliveredAt: row.lastDeliveredAt };
  });
}

/**
 * `recordDeliveries`, with the audit log entries of the attempts an owner asked for through /v3
 * in the same transaction: one for each of them logged, in the account of its webhook. A batch
 * without any is the one statement alone.
 */
export function recordAskedDeliveries(sql: Sql, deliveries: readonly DeliveryRecord[]): Promise<RecordedDelivery[]> {
  const asked = deliveries.filter((delivery) => delivery.audit !== undefined);
  if (asked.length === 0) return recordDeliveries(sql, deliveries);
  return sql.begin(async (tx) => {
    const recorded = await recordDeliveries(tx, deliveries);
    const logged = await tx<{ id: string; accountId: string }[]>`
      SELECT d.id, w.account_id AS "accountId" FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.id = ANY(${asked.map((delivery) => delivery.id)})`;
    const accountOf = new Map(logged.map((row) => [row.id, row.accountId]));
    for (const { id, audit } of asked) {
      const accountId = accountOf.get(id);
      if (accountId !== undefined) await recordAudit(tx, { accountId, ...audit! });
    }
    return recorded;
  });
}

/**
 * Deletes the webhook's attempts older than its newest DELIVERY_LOG_KEPT: those before the
 * last one kept, found by walking the index of the log's order, as one range of that index
 * rather than a lookup by id each.
 */
export async function pruneDeliveryLog(sql: Db, webhookId: string): Promise<void> {
  await sql`
    DELETE FROM deliveries WHERE webhook_id = ${webhookId} AND (attempted_at, id) < (
      SELECT attempted_at, id FROM deliveries WHERE webhook_id = ${webhookId}
      ORDER BY attempted_at DESC, id DESC OFFSET ${DELIVERY_LOG_KEPT - 1} LIMIT 1)`;
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
  error: DeliveryLogEntry['error'];
  duration_ms: number;
  attempted_at: Date;
  trace_id: string | null;
}

const LOG_COLUMNS = [
  'id',
  'event',
  'list_id',
  'cursor',
  'at',
  'kind',
  'redelivery_of',
  'outcome',
  'status_code',
  'error',
  'duration_ms',
  'attempted_at',
  'trace_id',
];

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
    traceId: row.trace_id,
  };
}

/** One entry of a webhook's log; null when it is not there (unknown, pruned, or another webhook's). */
export async function findDelivery(sql: Db, webhookId: string, deliveryId: string): Promise<DeliveryLogEntry | null> {
  const [row] = await sql<DeliveryLogRow[]>`
    SELECT ${sql(LOG_COLUMNS)} FROM deliveries WHERE id = ${deliveryId} AND webhook_id = ${webhookId}`;
  return row ? toLogEntry(row) : null;
}

/** One entry of a webhook's log with what it sent and what came back; null as for findDelivery. */
export async function findDeliveryDetail(sql: Db, webhookId: string, deliveryId: string): Promise<DeliveryDetail | null> {
  const [row] = await sql<(DeliveryLogRow & Pick<DeliveryDetail, 'request' | 'response'>)[]>`
    SELECT ${sql(LOG_COLUMNS)}, request, response FROM deliveries WHERE id = ${deliveryId} AND webhook_id = ${webhookId}`;
  return row ? { ...toLogEntry(row), request: row.request, response: row.response } : null;
}

/** Newest first; `before` is the id of the last entry of the previous page. */
export async function listDeliveries(sql: Db, webhookId: string, page: PageQuery & DeliveryLogFilters): Promise<DeliveryLogEntry[]> {
  const { outcome, kind, event } = page;
  const rows = await sql<DeliveryLogRow[]>`
    SELECT ${sql(LOG_COLUMNS)}
    ${newestFirstPage(sql, { table: 'deliveries', time: 'attempted_at', owner: 'webhook_id' }, webhookId, page, { outcome, kind, event })}`;
  return rows.map(toLogEntry);
}
