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
  return {
    listWrites: await deleteInBatches(
      async () =>
        (
          await sql`
      DELETE FROM list_writes WHERE (list_id, write_id) IN (
        SELECT list_id, write_id FROM list_writes WHERE created_at < ${cutoff} LIMIT ${BATCH})`
        ).count,
    ),
    registrations: await deleteInBatches(
      async () =>
        (
          await sql`
      DELETE FROM registrations WHERE id IN (
        SELECT id FROM registrations WHERE created_at < ${cutoff} LIMIT ${BATCH})`
        ).count,
    ),
    deliveryClaims: await deleteInBatches(
      async () =>
        (
          await sql`
      DELETE FROM delivery_claims WHERE delivery_id IN (
        SELECT delivery_id FROM delivery_claims WHERE claimed_at < ${cutoff} LIMIT ${BATCH})`
        ).count,
    ),
    notices: await deleteInBatches(
      async () =>
        (
          await sql`
      DELETE FROM notices WHERE id IN (
        SELECT id FROM notices WHERE created_at < ${cutoff} LIMIT ${BATCH})`
        ).count,
    ),
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
