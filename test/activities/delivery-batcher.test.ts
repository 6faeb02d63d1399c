import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import {
  BULK_LOG_ROWS_GATHER_MS,
  createDeliveryBatcher,
  LOG_ROWS_GATHER_MS,
  LOG_ROWS_PER_STATEMENT,
  type DeliveryBatcher,
} from '../../activities/delivery-bookkeeping';
import type { Sql } from '../../src/db/sql';
import { newId } from '../../src/ids';
import { useMigratedDatabase } from '../support/database';
import { waitFor } from '../support/wait';
import { attemptRecord, insertWebhook } from '../../scripts/lib/webhook-rows';

const database = useMigratedDatabase();

/** The statements the batcher's own pool sends, in order, beside the moments the test notes. */
const events: string[] = [];
let counted: Sql;
let batcher: DeliveryBatcher;

beforeAll(() => {
  counted = postgres(inject('databaseUrl'), {
    // One connection, which postgres.js pipelines: a statement is built (and noted) as soon
    // as the batcher sends it, even while the one before it still waits.
    max: 1,
    onnotice: () => {},
    debug: (_connection, query) => {
      if (query.includes('INSERT INTO delivery_claims')) events.push('claim statement');
      else if (query.includes('INSERT INTO deliveries')) events.push('record statement');
    },
  });
  batcher = createDeliveryBatcher(counted);
});
afterAll(() => counted?.end());

async function newWebhook(): Promise<string> {
  const account = await createAccount(database.sql, 'delivery batcher test');
  return insertWebhook(database.sql, account.id);
}

/**
 * Runs `test` on a new webhook with no statement seen yet and only setTimeout faked: turns of
 * the event loop and the database's answers stay real.
 */
async function withFakeTimeouts(test: (webhookId: string) => Promise<void>): Promise<void> {
  const webhookId = await newWebhook();
  vi.useFakeTimers({ toFake: ['setTimeout'] });
  try {
    events.length = 0;
    await test(webhookId);
  } finally {
    vi.useRealTimers();
  }
}

/** What logging a row of a webhook with no failure answers. */
const logged = { logged: true, failuresToReset: false, lastDeliveredAt: expect.any(Number) };

describe('createDeliveryBatcher', () => {
  it('sends the claims and the log rows made in one turn of the event loop as one statement each', async () => {
    const webhookIds = [await newWebhook(), await newWebhook()];
    events.length = 0;
    const claims = Array.from({ length: 20 }, (_, i) => ({ webhookId: webhookIds[i % 2], deliveryId: newId('dlv') }));
    const targets = await Promise.all(claims.map((claim) => batcher.claim(claim)));
    expect(targets.map((target) => target && { claimed: target.claimed, url: target.url })).toEqual(
      claims.map(({ webhookId }) => ({ claimed: true, url: `https://receiver.test/${webhookId}` })),
    );
    const answers = await Promise.all(claims.map(({ webhookId }) => batcher.record(attemptRecord(webhookId))));
    expect(answers).toEqual(claims.map(() => logged));
    expect(events).toEqual(['claim statement', 'record statement']);
  });

  it('holds what comes while a statement runs for the next one, sent once the first has answered', async () => {
    const webhookId = await newWebhook();
    // The first statement is kept waiting on a claim of the same delivery that another
    // transaction has made and not yet committed.
    const held = newId('dlv');
    const blocker = await database.sql.reserve();
    await blocker`BEGIN`;
    await blocker`INSERT INTO delivery_claims (delivery_id) VALUES (${held})`;
    events.length = 0;
    const first = Promise.all([
      batcher.claim({ webhookId, deliveryId: held }),
      batcher.claim({ webhookId, deliveryId: newId('dlv') }),
    ]).then((targets) => {
      events.push('first answered');
      return targets;
    });
    await waitFor(
      async () => {
        const waiting =
          await database.sql`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO delivery_claims%'`;
        return waiting.length > 0 ? true : undefined;
      },
      { intervalMs: 5, what: 'the first statement to wait' },
    );
    const second = Promise.all([
      batcher.claim({ webhookId, deliveryId: newId('dlv') }),
      batcher.claim({ webhookId, deliveryId: newId('dlv') }),
    ]);
    await database.sql`SELECT 1`; // turns of the event loop, in which an ungated batch would be sent
    await blocker`ROLLBACK`;
    blocker.release();
    expect([...(await first), ...(await second)].map((target) => target?.claimed)).toEqual([true, true, true, true]);
    expect(events).toEqual(['claim statement', 'first answered', 'claim statement']);
  });

  it('holds a log row LOG_ROWS_GATHER_MS for the rows that come after it, and sends them together', async () => {
    await withFakeTimeouts(async (webhookId) => {
      const first = batcher.record(attemptRecord(webhookId));
      await database.sql`SELECT 1`;
      const second = batcher.record(attemptRecord(webhookId));
      await database.sql`SELECT 1`;
      vi.advanceTimersByTime(LOG_ROWS_GATHER_MS - 1);
      await database.sql`SELECT 1`;
      expect(events).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(await Promise.all([first, second])).toEqual([logged, logged]);
      expect(events).toEqual(['record statement']);
    });
  });

  it('sends a batch of LOG_ROWS_PER_STATEMENT log rows as soon as another row comes, without waiting out the gathering', async () => {
    await withFakeTimeouts(async (webhookId) => {
      const full = Array.from({ length: LOG_ROWS_PER_STATEMENT }, () => batcher.record(attemptRecord(webhookId)));
      await database.sql`SELECT 1`;
      expect(events).toEqual([]);
      const next = batcher.record(attemptRecord(webhookId));
      // No timer advances: the full batch goes on its own, the next row waits for its time.
      expect(await Promise.all(full)).toHaveLength(LOG_ROWS_PER_STATEMENT);
      expect(events).toEqual(['record statement']);
      vi.advanceTimersByTime(LOG_ROWS_GATHER_MS);
      await next;
      expect(events).toEqual(['record statement', 'record statement']);
    });
  });

  it("holds a large write's log row (the bulk task queue) only BULK_LOG_ROWS_GATHER_MS", async () => {
    await withFakeTimeouts(async (webhookId) => {
      const small = batcher.record(attemptRecord(webhookId));
      const bulk = batcher.record(attemptRecord(webhookId), { bulk: true });
      await database.sql`SELECT 1`;
      vi.advanceTimersByTime(BULK_LOG_ROWS_GATHER_MS);
      expect(await bulk).toEqual(logged);
      expect(events).toEqual(['record statement']);
      vi.advanceTimersByTime(LOG_ROWS_GATHER_MS - BULK_LOG_ROWS_GATHER_MS);
      await small;
      expect(events).toEqual(['record statement', 'record statement']);
    });
  });

  it.each(['ping', 'probe'] as const)("sends a %s's log row at once, while event deliveries' rows wait", async (kind) => {
    await withFakeTimeouts(async (webhookId) => {
      const event = batcher.record(attemptRecord(webhookId));
      await database.sql`SELECT 1`;
      // No timer advances: its statement goes on its own, the event's row keeps waiting.
      expect(await batcher.record(attemptRecord(webhookId, { kind }))).toMatchObject({ logged: true, failuresToReset: false });
      expect(events).toEqual(['record statement']);
      vi.advanceTimersByTime(LOG_ROWS_GATHER_MS);
      expect(await event).toEqual(logged);
      expect(events).toEqual(['record statement', 'record statement']);
    });
  });

  it('fails only the call whose row its statement refuses, the batch split until that row goes alone', async () => {
    const webhookId = await newWebhook();
    // A row the deliveries table refuses (it has no event): its NOT NULL fails the whole statement.
    const refused = { ...attemptRecord(webhookId), event: null as never };
    events.length = 0;
    const [good, failed] = [batcher.record(attemptRecord(webhookId)), batcher.record(refused)];
    await expect(failed).rejects.toThrow(/null value in column "event"/);
    await expect(good).resolves.toEqual(logged);
    // Both rows, then each half alone.
    expect(events).toEqual(['record statement', 'record statement', 'record statement']);
    const [{ count }] = await database.sql<
      { count: number }[]
    >`SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = ${webhookId}`;
    expect(count).toBe(1);
  });
});
