import type { Pruned } from '../contract/payloads';
import type { Sql } from './sql';

/** Rows deleted per statement: short transactions, so writes and registrations never wait long. */
const BATCH = 1000;

/**
 * Deletes the writes, registrations and notices recorded more than `retentionDays` ago. A write's
 * row only makes a repeat of its writeId idempotent: once pruned, the same writeId is a new
 * write. A registration's row answers retries of its workflow, which ends within minutes.
 * A delivery's claim answers a re-run of its attempt, which comes while its write's
 * workflow runs: within minutes, unless no worker runs for days. A notice is the account's
 * record of what happened; its mail is tried for a day at most, well within the window.
 */
export async function deleteRecordsOlderThan(sql: Sql, retentionDays: number): Promise<Pruned> {
  const cutoff = sql`now() - make_interval(days => ${retentionDays})`;
  /** Deletes the rows of `table` whose `time` is before the cutoff, BATCH at a time, by their key. */
  const prune = (table: string, key: string[], time: string) =>
    deleteInBatches(
      async () =>
        (
          await sql`
      DELETE FROM ${sql(table)} WHERE (${sql(key)}) IN (
        SELECT ${sql(key)} FROM ${sql(table)} WHERE ${sql(time)} < ${cutoff} LIMIT ${BATCH})`
        ).count,
    );
  return {
    listWrites: await prune('list_writes', ['list_id', 'write_id'], 'created_at'),
    registrations: await prune('registrations', ['id'], 'created_at'),
    deliveryClaims: await prune('delivery_claims', ['delivery_id'], 'claimed_at'),
    notices: await prune('notices', ['id'], 'created_at'),
  };
}

async function deleteInBatches(deleteBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < BATCH) return total;
  }
}
