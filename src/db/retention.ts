import type { PendingQuery, Row } from 'postgres';
import type { Pruned } from '../contract/payloads';
import type { Sql } from './sql';

/** Rows deleted per statement: short transactions, so writes and registrations never wait long. */
const BATCH = 1000;

/**
 * Deletes the writes, registrations, claims and finished recoveries recorded (or finished)
 * more than `retentionDays` ago. A write's row only makes a repeat of its writeId idempotent:
 * once pruned, the same writeId is a new write. A registration's row answers retries of its
 * workflow, which ends within minutes. A delivery's claim answers a re-run of its attempt,
 * which comes while its write's workflow runs: within minutes, unless no worker runs for days.
 * A finished recovery's row only tells its owner what it came to.
 */
export async function deleteRecordsOlderThan(sql: Sql, retentionDays: number): Promise<Pruned> {
  const cutoff = sql`now() - make_interval(days => ${retentionDays})`;
  /** Deletes the rows of `table` (whose key is `key`) that `picked` selects, a batch a statement. */
  const prune = (table: string, key: string[], picked: PendingQuery<Row[]>) =>
    deleteInBatches(
      async () =>
        (
          await sql`
      DELETE FROM ${sql(table)} WHERE (${sql(key)}) IN (
        SELECT ${sql(key)} FROM ${sql(table)} WHERE ${picked} LIMIT ${BATCH})`
        ).count,
    );
  return {
    listWrites: await prune('list_writes', ['list_id', 'write_id'], sql`created_at < ${cutoff}`),
    registrations: await prune('registrations', ['id'], sql`created_at < ${cutoff}`),
    deliveryClaims: await prune('delivery_claims', ['delivery_id'], sql`claimed_at < ${cutoff}`),
    recoveries: await prune('recoveries', ['id'], sql`finished_at < ${cutoff} AND settled_at IS NOT NULL`),
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
