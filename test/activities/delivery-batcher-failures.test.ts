import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BOOKKEEPING_STATEMENT_TIMEOUT_MS } from '../../activities/batched-statements';
import { createDeliveryBatcher, type DeliveryBatcher } from '../../activities/delivery-bookkeeping';
import { createAccount } from '../../src/db/accounts';
import { createSql, type Sql } from '../../src/db/sql';
import { attemptRecord, insertWebhook } from '../../scripts/lib/webhook-rows';
import { useMigratedDatabase } from '../support/database';
import { waitFor } from '../support/wait';

const database = useMigratedDatabase();

/** A pool as a worker's bookkeeping has: its statements cut off at BOOKKEEPING_STATEMENT_TIMEOUT_MS. */
let bookkeepingSql: Sql;
let batcher: DeliveryBatcher;

beforeAll(() => {
  bookkeepingSql = createSql(inject('databaseUrl'), { max: 4, statementTimeoutMs: BOOKKEEPING_STATEMENT_TIMEOUT_MS });
  batcher = createDeliveryBatcher(bookkeepingSql);
});
afterAll(() => bookkeepingSql?.end());

/** `count` new webhooks, of two accounts. */
async function newWebhooks(count: number): Promise<string[]> {
  const accounts = [await createAccount(database.sql, 'batcher failures a'), await createAccount(database.sql, 'batcher failures b')];
  const webhookIds: string[] = [];
  for (let i = 0; i < count; i++) webhookIds.push(await insertWebhook(database.sql, accounts[i % 2].id));
  return webhookIds;
}

describe('createDeliveryBatcher: a failed or slow statement', () => {
  it('logs the rows of a statement beside one PostgreSQL refuses, and fails that one alone', async () => {
    const webhookIds = await newWebhooks(5);
    const rows = webhookIds.map((webhookId, i) => attemptRecord(webhookId, { error: i % 2 === 1 ? 'timeout' : null }));
    // A NUL character, which no text column of PostgreSQL can hold.
    const refused = { ...rows[2], listId: 'list-\u0000' };
    const settled = await Promise.allSettled([rows[0], rows[1], refused, rows[3], rows[4]].map((row) => batcher.record(row)));

    expect(settled[2]).toMatchObject({ status: 'rejected', reason: { code: '22P05' } });
    // Every other row its own answer: a failure logged has one to reset, a success alone none.
    expect(settled.filter((_, i) => i !== 2)).toEqual(
      [rows[0], rows[1], rows[3], rows[4]].map((row) => ({
        status: 'fulfilled',
        value: expect.objectContaining({ logged: true, failuresToReset: row.response === null }),
      })),
    );
    const logged = await database.sql<{ id: string; outcome: string; statusCode: number | null; error: string | null }[]>`
      SELECT id, outcome, status_code AS "statusCode", error FROM deliveries WHERE webhook_id = ANY(${webhookIds}) ORDER BY webhook_id`;
    expect(new Map(logged.map(({ id, ...outcome }) => [id, outcome]))).toEqual(
      new Map(
        [rows[0], rows[1], rows[3], rows[4]].map((row) => [
          row.id,
          row.response === null
            ? { outcome: 'failed', statusCode: null, error: 'timeout' }
            : { outcome: 'delivered', statusCode: 200, error: null },
        ]),
      ),
    );
  });

  it('cancels a statement waiting on a row lock past the time-out, and tries it again until the lock is gone', async () => {
    const [webhookId] = await newWebhooks(1);
    const blocker = await database.sql.reserve();
    try {
      await blocker`BEGIN`;
      await blocker`SELECT 1 FROM webhooks WHERE id = ${webhookId} FOR UPDATE`;
      const [{ pid: blockerPid }] = await blocker<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      // Each try of the statement, known by its backend and its start, as it waits on the lock.
      const waitingTry = async () => {
        const [waiting] = await database.sql<{ pid: number; queryStart: Date }[]>`
          SELECT pid, query_start AS "queryStart" FROM pg_stat_activity WHERE ${blockerPid}::int = ANY(pg_blocking_pids(pid))`;
        return waiting && `${waiting.pid} ${waiting.queryStart.toISOString()}`;
      };

      // A ping's row: sent at once, its statement locks the webhook's row to count the attempt.
      const ping = attemptRecord(webhookId, { kind: 'ping' });
      const logged = batcher.record(ping);
      const firstTry = await waitFor(waitingTry, { intervalMs: 10, what: 'the statement to wait on the lock' });
      // Another try waiting: the first was cancelled, and a lone row's statement runs again
      // only after a transient error (any other would fail the row).
      await waitFor(async () => ((await waitingTry()) ?? firstTry) !== firstTry || undefined, {
        intervalMs: 10,
        what: 'the statement to be cancelled and tried again',
      });
      await blocker`ROLLBACK`;

      expect(await logged).toMatchObject({ logged: true, failuresToReset: false });
      const [row] = await database.sql`SELECT outcome FROM deliveries WHERE id = ${ping.id}`;
      expect(row).toEqual({ outcome: 'delivered' });
    } finally {
      await blocker`ROLLBACK`;
      blocker.release();
    }
  });
});
