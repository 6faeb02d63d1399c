// The event feed in PostgreSQL: the items record_list_write writes with a write (the ids its
// recipients carry), positions, what a reader may return while an older transaction runs, and
// what the retention job keeps.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import { decodePosition, encodePosition, FEED_KEPT, pruneEventFeed, readEventFeed, type FeedPoint } from '../../src/db/event-feed';
import { recordListWrite } from '../../src/db/list-writes';
import { putList } from '../../src/db/lists';
import type { Sql } from '../../src/db/sql';
import { newId } from '../../src/ids';
import { migrate } from '../../src/db/migrate';
import { useMigratedDatabase, withSchemaBefore } from '../support/database';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { waitFor } from '../support/wait';
import { insertWebhook } from '../../scripts/lib/webhook-rows';

const database = useMigratedDatabase({ connections: 4 });

/** An account with a list and a webhook on list.changed. */
async function listWithWebhook() {
  const account = await createAccount(database.sql, 'feed test');
  const listId = `list-${randomUUID()}`;
  await putList(database.sql, { id: listId, ownerAccountId: account.id, memberAccountIds: [] });
  return { listId, webhookId: await insertWebhook(database.sql, account.id) };
}

const write = (listId: string, writeId: string, sql: Sql = database.sql) =>
  recordListWrite(sql, { listId, writeId, at: '2026-11-29T10:00:00.123Z', changes: [{ type: 'item.added', itemId: 'i1' }] });

/**
 * The webhook's items after `after`, once they are settled: a transaction of any database of
 * the cluster (another suite's) may hold them back a moment.
 */
const settledFeed = (webhookId: string, after: FeedPoint | null = null) =>
  waitFor(
    async () => {
      const read = await readEventFeed(database.sql, webhookId, after, 100);
      return read.unsettled ? undefined : read.items;
    },
    { what: `the settled feed of ${webhookId}` },
  );

/** `count` items of the webhook recorded `daysAgo` days ago, in one statement. */
const insertItems = (webhookId: string, count: number, daysAgo: number) => database.sql`
  INSERT INTO feed_items (webhook_id, delivery_id, event, list_id, cursor, at, recorded_at)
  SELECT ${webhookId}, 'dlv_' || lpad(to_hex(n), 24, '0'), 'list.changed', 'pruned-list', n, now(), now() - make_interval(days => ${daysAgo})
  FROM generate_series(1, ${count}) AS n`;

async function itemsOf(webhookId: string): Promise<{ daysAgo: number }[]> {
  return database.sql<{ daysAgo: number }[]>`
    SELECT extract(day FROM now() - recorded_at)::int AS "daysAgo" FROM feed_items WHERE webhook_id = ${webhookId} ORDER BY xid, seq`;
}

describe('the event feed', () => {
  it("records a write's deliveries with the ids its recipients carry, and a repeat plans the same ids", async () => {
    const { listId, webhookId } = await listWithWebhook();
    const first = await write(listId, 'w1');
    if (first.outcome !== 'recorded') throw new Error(`recorded ${first.outcome}`);
    const [recipient] = first.recipients;
    expect(recipient).toEqual({ webhookId, topics: ['list.changed'], deliveryIds: [expect.stringMatching(/^dlv_[0-9a-f]{24}$/)] });

    expect(await settledFeed(webhookId)).toEqual([
      {
        position: expect.stringMatching(/^[0-9a-f]{40}$/),
        deliveryId: recipient.deliveryIds![0],
        event: 'list.changed',
        listId,
        cursor: 1,
        at: '2026-11-29T10:00:00.123Z',
      },
    ]);
    expect(await write(listId, 'w1')).toEqual({ ...first, outcome: 'repeated' });
    expect(await settledFeed(webhookId)).toHaveLength(1);
  });

  it('answers a repeat of a write recorded before the feed with its recipients as they are now, without delivery ids', async () => {
    await withSchemaBefore('026', async (sql) => {
      const account = await createAccount(sql, 'before the feed');
      const listId = `list-${randomUUID()}`;
      await putList(sql, { id: listId, ownerAccountId: account.id, memberAccountIds: [] });
      // A webhook as the schema before sealed secrets' code step holds it: its secret in clear.
      const webhookId = newId('wh');
      await sql`
        INSERT INTO webhooks (id, account_id, url, secret, events)
        VALUES (${webhookId}, ${account.id}, ${`https://receiver.test/${webhookId}`}, 'whsec_before-the-feed', ${['list.changed']})`;
      // Recorded by the function of migration 024, whose recipients this code no longer reads.
      expect((await write(listId, 'w1', sql)).outcome).toBe('recorded');
      await migrate(sql, { secrets: fixedSecretBox() });
      expect(await write(listId, 'w1', sql)).toMatchObject({ outcome: 'repeated', recipients: [{ webhookId, topics: ['list.changed'] }] });
      const repeated = await write(listId, 'w1', sql);
      expect(repeated.outcome === 'repeated' && repeated.recipients[0].deliveryIds).toBeUndefined();
      expect(await sql`SELECT 1 FROM feed_items`).toHaveLength(0);
    });
  });

  it('reads no item while a transaction older than its own still runs, then all of them in order', async () => {
    const { listId, webhookId } = await listWithWebhook();
    await write(listId, 'w1');
    const [first] = await settledFeed(webhookId);
    const older = await database.sql.reserve();
    try {
      // A transaction with an xid, begun before the write: a row it wrote could come before the write's.
      await older`BEGIN`;
      await older`SELECT pg_current_xact_id()`;
      await write(listId, 'w2');
      const point = decodePosition(webhookId, first.position);
      if (typeof point === 'string') throw new Error(point);
      expect(await readEventFeed(database.sql, webhookId, point, 100)).toEqual({ items: [], unsettled: true });
      await older`COMMIT`;
      const after = await settledFeed(webhookId, point);
      expect(after).toMatchObject([{ cursor: 2 }]);
      expect(after[0].position > first.position).toBe(true);
    } finally {
      older.release();
    }
  });

  it("tells a position of another webhook's feed, and a malformed one", async () => {
    const point = { xid: '1234', seq: '5' };
    const ofOne = encodePosition('wh_aaaaaaaaaaaaaaaaaaaaaaaa', point);
    expect(decodePosition('wh_aaaaaaaaaaaaaaaaaaaaaaaa', ofOne)).toEqual(point);
    expect(decodePosition('wh_bbbbbbbbbbbbbbbbbbbbbbbb', ofOne)).toBe('other_webhook');
    for (const malformed of ['', ofOne.slice(1), `${ofOne}0`, ofOne.toUpperCase(), `g${ofOne.slice(1)}`]) {
      expect(decodePosition('wh_aaaaaaaaaaaaaaaaaaaaaaaa', malformed), malformed).toBe('malformed');
    }
  });

  it("prunes items past the window but each webhook's newest FEED_KEPT, and a deleted webhook's all", async () => {
    const { webhookId: busy } = await listWithWebhook();
    await insertItems(busy, FEED_KEPT + 100, 40);
    await insertItems(busy, 5, 0);
    const { webhookId: quiet } = await listWithWebhook();
    await insertItems(quiet, 3, 40);
    const gone = newId('wh');
    await insertItems(gone, 10, 40);
    await insertItems(gone, 2, 0);

    expect(await pruneEventFeed(database.sql, 30, 1000)).toBeGreaterThanOrEqual(100 + 5 + 10);
    const busyItems = await itemsOf(busy);
    expect(busyItems).toHaveLength(FEED_KEPT);
    expect(busyItems.filter((item) => item.daysAgo === 0)).toHaveLength(5);
    expect(await itemsOf(quiet)).toHaveLength(3);
    expect(await itemsOf(gone)).toEqual([{ daysAgo: 0 }, { daysAgo: 0 }]);
  });
});
