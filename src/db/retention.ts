import type { Pruned } from '../contract/payloads';
import type { Sql } from './sql';

/** Rows deleted per statement: short transactions, so writes and registrations never wait long. */
const BATCH = 1000;

/**
 * Deletes the writes, registrations, notices and finished recoveries recorded (or finished)
 * more than `retentionDays` ago. A write's row only makes a repeat of its writeId idempotent:
 * once pruned, the same writeId is a new write. A registration's row answers retries of its
 * workflow, which ends within minutes. A delivery's claim answers a re-run of its attempt,
 * which comes while its write's workflow runs: within minutes, unless no worker runs for days.
 * A notice is the account's record of what happened; its mail is tried for a day at most,
 * well within the window. A finished recovery's row only tells its owner what it came to; an
 * unfinished one has no finish time, and stays.
 */
/** What is pruned, by the name `Pruned` gives its count: each table, its key, and when a row was made. */
const PRUNED_TABLES: Record<keyof Pruned, { table: string; key: string[]; madeAt: string }> = {
  listWrites: { table: 'list_writes', key: ['list_id', 'write_id'], madeAt: 'created_at' },
  registrations: { table: 'registrations', key: ['id'], madeAt: 'created_at' },
  deliveryClaims: { table: 'delivery_claims', key: ['delivery_id'], madeAt: 'claimed_at' },
  notices: { table: 'notices', key: ['id'], madeAt: 'created_at' },
  recoveries: { table: 'recoveries', key: ['id'], madeAt: 'finished_at' },
};

export async function deleteRecordsOlderThan(sql: Sql, retentionDays: number): Promise<Pruned> {
  const cutoff = sql`now() - make_interval(days => ${retentionDays})`;
  const pruned: Partial<Pruned> = {};
  for (const [name, { table, key, madeAt }] of Object.entries(PRUNED_TABLES) as [keyof Pruned, (typeof PRUNED_TABLES)[keyof Pruned]][]) {
    pruned[name] = await deleteInBatches(
      async () =>
        (
          await sql`
            DELETE FROM ${sql(table)} WHERE (${sql(key)}) IN (
              SELECT ${sql(key)} FROM ${sql(table)} WHERE ${sql(madeAt)} < ${cutoff} LIMIT ${BATCH})`
        ).count,
    );
  }
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
