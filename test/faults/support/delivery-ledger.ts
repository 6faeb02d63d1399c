// The delivery log held against what a list's writes planned. A write plans one delivery for
// each of its recipients (the webhooks of its accounts, whatever their status, whose events and
// lists it matches: record_list_write, migration 010) and each topic they share; each planned
// delivery ends as exactly one row of `deliveries`, whatever died meanwhile: delivered, failed,
// skipped or `internal`, never none and never two. Delivery ids are drawn in the write's
// workflow and kept nowhere else before their row, so a planned delivery is known here by its
// write's cursor, its webhook and its topic: the one delivery a write makes of each.
import type { PendingQuery, Row } from 'postgres';
import { MAX_CONSECUTIVE_FAILURES } from '../../../src/contract/rules';
import type { Sql } from '../../../src/db/sql';

/** An event delivery's row. */
export interface LoggedDelivery {
  id: string;
  webhookId: string;
  listId: string;
  cursor: number;
  event: string;
  outcome: 'delivered' | 'failed' | 'skipped';
  statusCode: number | null;
  error: string | null;
}

export interface DeliveryLedger {
  /** How many deliveries the list's writes planned. */
  planned: number;
  /** The list's event delivery rows, in the order their attempts ended (see consecutiveFailuresByEndTime). */
  rows: LoggedDelivery[];
  /** Each as `cursor webhookId topic`, and for `repeated` and `unplanned` the rows' ids; all empty when each planned delivery has one row. */
  mismatches: {
    /** Planned deliveries without a row. */
    missing: string[];
    /** Planned deliveries with more than one row. */
    repeated: string[];
    /** Rows of deliveries no write of the list planned. */
    unplanned: string[];
  };
}

export const NO_MISMATCHES: DeliveryLedger['mismatches'] = { missing: [], repeated: [], unplanned: [] };

const plannedDelivery = (cursor: number, webhookId: string, topic: string) => `${cursor} ${webhookId} ${topic}`;

/** The ledger of one list's writes. Only webhooks registered before a write are its recipients. */
export async function deliveryLedger(sql: Sql, listId: string): Promise<DeliveryLedger> {
  const planned = await sql<{ cursor: number; webhookId: string; topic: string }[]>`
    SELECT lw.cursor::integer AS cursor, w.id AS "webhookId", topic
    FROM list_writes lw
    CROSS JOIN LATERAL unnest(lw.topics) AS topic
    JOIN webhooks w ON w.account_id = ANY (lw.account_ids) AND topic = ANY (w.events)
      AND (cardinality(w.list_ids) = 0 OR lw.list_id = ANY (w.list_ids)) AND w.created_at <= lw.created_at
    WHERE lw.list_id = ${listId}`;
  const rows = await loggedDeliveries(sql, sql`list_id = ${listId}`);

  const rowsOf = new Map<string, LoggedDelivery[]>();
  for (const row of rows) {
    const key = plannedDelivery(row.cursor, row.webhookId, row.event);
    rowsOf.set(key, [...(rowsOf.get(key) ?? []), row]);
  }
  const plannedKeys = new Set(planned.map(({ cursor, webhookId, topic }) => plannedDelivery(cursor, webhookId, topic)));
  const withIds = (key: string) =>
    `${key}: ${rowsOf
      .get(key)!
      .map((row) => row.id)
      .join(', ')}`;
  return {
    planned: plannedKeys.size,
    rows,
    mismatches: {
      missing: [...plannedKeys].filter((key) => !rowsOf.has(key)),
      repeated: [...plannedKeys].filter((key) => (rowsOf.get(key)?.length ?? 0) > 1).map(withIds),
      unplanned: [...rowsOf.keys()].filter((key) => !plannedKeys.has(key)).map(withIds),
    },
  };
}

/** A webhook's event delivery rows, of every list, in the order their attempts ended (see consecutiveFailuresByEndTime). */
export const webhookLog = (sql: Sql, webhookId: string) => loggedDeliveries(sql, sql`webhook_id = ${webhookId}`);

/** The event delivery rows `where` picks, in the order their attempts ended. */
function loggedDeliveries(sql: Sql, where: PendingQuery<Row[]>): Promise<LoggedDelivery[]> {
  // At one time, a failure before a 2xx: concurrent attempts logged by one statement share
  // its now(), and the 2xx among them resets their failures (recordDeliveries).
  return sql<LoggedDelivery[]>`
    SELECT id, webhook_id AS "webhookId", list_id AS "listId", cursor::integer AS cursor, event, outcome,
      status_code AS "statusCode", error
    FROM deliveries WHERE ${where} AND kind = 'event'
    ORDER BY attempted_at, outcome = 'delivered', id`;
}

/** Whether a row is one the failure count, the health and the meter leave out: our own failure, nothing known to be sent. */
export const isInternal = (row: LoggedDelivery) => row.error === 'internal';

/**
 * A webhook's consecutive-failure count as DESIGN.md §6 gives it from its event rows, in the
 * order their attempts ended (since its last reactivation): a 2xx sets it to 0, a failure at
 * the receiver adds one, `internal` and skipped rows change nothing, and at
 * MAX_CONSECUTIVE_FAILURES the webhook pauses and the rows after change nothing.
 */
export function consecutiveFailuresByEndTime(rows: readonly LoggedDelivery[]): number {
  let count = 0;
  for (const row of rows) {
    if (row.outcome === 'skipped' || isInternal(row)) continue;
    count = row.outcome === 'delivered' ? 0 : count + 1;
    if (count === MAX_CONSECUTIVE_FAILURES) break;
  }
  return count;
}
