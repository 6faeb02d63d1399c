import type { PendingQuery, Row } from 'postgres';
import type { Pruned } from '../contract/payloads';
import { USAGE_DAYS } from '../limits';
import { pruneEventFeed } from './event-feed';
import type { Db } from './sql';
import { healthWindowStart } from './webhook-health';

/** Rows deleted per statement: short transactions, so writes and registrations never wait long. */
const BATCH = 1000;

type Fragment = PendingQuery<Row[]>;

/** A table that is pruned: its key, and which of its rows are past the window. */
interface PrunedTable {
  table: string;
  key: string[];
  expired: (sql: Db, retentionDays: number) => Fragment;
}

/** Rows whose `column` (when the row was made, or finished) is more than `retentionDays` ago. */
const madeBefore =
  (column: string): PrunedTable['expired'] =>
  (sql, retentionDays) =>
    sql`${sql(column)} < now() - make_interval(days => ${retentionDays})`;

/** What is pruned row by row, by the name `Pruned` gives its count (the event feed has a walk of its own). */
const PRUNED_TABLES: Record<Exclude<keyof Pruned, 'feedItems'>, PrunedTable> = {
  listWrites: { table: 'list_writes', key: ['list_id', 'write_id'], expired: madeBefore('created_at') },
  registrations: { table: 'registrations', key: ['id'], expired: madeBefore('created_at') },
  deliveryClaims: { table: 'delivery_claims', key: ['delivery_id'], expired: madeBefore('claimed_at') },
  notices: { table: 'notices', key: ['id'], expired: madeBefore('created_at') },
  recoveries: { table: 'recoveries', key: ['id'], expired: madeBefore('finished_at') },
  auditLog: { table: 'audit_log', key: ['id'], expired: madeBefore('at') },
  // UTC days: the last max(retentionDays, USAGE_DAYS) are kept, today included.
  accountUsage: {
    table: 'account_usage',
    key: ['account_id', 'day'],
    expired: (sql, retentionDays) => sql`day < (now() AT TIME ZONE 'UTC')::date - ${Math.max(retentionDays, USAGE_DAYS) - 1}::int`,
  },
  // UTC hours of the webhooks' health: those before the window the API sums, whatever the retention.
  webhookHealthHours: {
    table: 'webhook_health_hours',
    key: ['webhook_id', 'hour'],
    expired: (sql) => sql`hour < ${healthWindowStart(sql)}`,
  },
};

/**
 * Deletes the writes, registrations, notices, finished recoveries, audit log entries and event feed items
 * recorded (or finished) more than `retentionDays` ago, the fair-use meter's days older than
 * both that and what GET /v3/account/usage shows, and the hours of the webhooks' health before
 * those the API sums. A write's row only makes a repeat of its writeId idempotent:
 * once pruned, the same writeId is a new write. A registration's row answers retries of its
 * workflow, which ends within minutes. A delivery's claim answers a re-run of its attempt,
 * which comes while its write's workflow runs: within minutes, unless no worker runs for days.
 * A notice is the account's record of what happened; its mail is tried for a day at most,
 * well within the window. A finished recovery's row only tells its owner what it came to; an
 * unfinished one has no finish time, and stays. An audit log entry is kept for the window, as
 * the account's record of who changed what. A day of the meter is read only by the usage
 * route (which the dashboard's chart draws): the last USAGE_DAYS UTC days, today included.
 * An hour of a webhook's health is read only while it is among the last HEALTH_HOURS UTC
 * hours, the current one included (webhook-health.ts): the hours before those go. An item of
 * a webhook's event feed is kept the window and, whatever its age, while it is among the
 * webhook's newest FEED_KEPT, as long as the delivery log may show its delivery (event-feed.ts).
 */
export async function deleteRecordsOlderThan(sql: Db, retentionDays: number): Promise<Pruned> {
  const pruned: Partial<Pruned> = {};
  for (const [name, { table, key, expired }] of Object.entries(PRUNED_TABLES) as [keyof typeof PRUNED_TABLES, PrunedTable][]) {
    const past = expired(sql, retentionDays);
    pruned[name] = await deleteInBatches(
      async () =>
        (
          await sql`
            DELETE FROM ${sql(table)} WHERE (${sql(key)}) IN (
              SELECT ${sql(key)} FROM ${sql(table)} WHERE ${past} LIMIT ${BATCH})`
        ).count,
    );
  }
  pruned.feedItems = await pruneEventFeed(sql, retentionDays, BATCH);
  return pruned as Pruned;
}

async function deleteInBatches(deleteBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < BATCH) return total;
  }
}
