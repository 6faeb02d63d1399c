// The event feed over HTTP, on the whole stack with a real receiver: every event delivery
// planned for a webhook, oldest first, with the pushes' ids and bodies; paging by `next`; the
// long poll of `wait`, woken by a write recorded through another API process; 410 past what is
// kept; 400s, 404 across accounts, and the scope.
import { describe, expect, inject, it } from 'vitest';
import type { ApiSchemas } from '../../src/client';
import { createSql } from '../../src/db/sql';
import { sample } from '../support/metrics';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();

type Item = ApiSchemas['FeedPage']['data'][number];

const setUp = (path: string, events = ['list.changed']) => suite.stack.setUpListWebhook(suite.receiver.urlFor(path), { events });

const feed = (token: string, webhookId: string, query = '') =>
  suite.stack.request('GET', `/v3/webhooks/${webhookId}/events${query}`, { token });

/**
 * The webhook's items once the feed shows `count` of them: an item shows once every
 * transaction older than its own has ended, in any database of the cluster.
 */
const itemsOnceThere = (token: string, webhookId: string, count: number): Promise<Item[]> =>
  waitFor(
    async () => {
      const page = await feed(token, webhookId);
      return page.body.data.length === count ? (page.body.data as Item[]) : undefined;
    },
    { what: `${count} items in the feed of ${webhookId}` },
  );

async function waitingRequests(): Promise<number> {
  return sample((await suite.stack.request('GET', '/metrics')).body, 'event_feed_waiting_requests', {});
}

describe('GET /v3/webhooks/{id}/events', () => {
  it("lists every event delivery planned, oldest first, with the pushed bodies and the pushes' SVC-Delivery ids, skipped ones too", async () => {
    const path = '/feed/order';
    const { owner, webhookId, listId } = await setUp(path, ['list.changed', 'item.added']);
    const token = owner.token;
    await suite.stack.reportWrite(listId, 'w1', [{ type: 'item.added', itemId: 'a' }]);
    await suite.stack.reportWrite(listId, 'w2', [{ type: 'item.checked', itemId: 'a' }]);
    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'paused' } });
    await suite.stack.reportWrite(listId, 'w3', [{ type: 'item.added', itemId: 'b' }]);

    const items = await itemsOnceThere(token, webhookId, 5);
    expect(items.map(({ event, cursor }) => [event, cursor])).toEqual([
      ['list.changed', 1],
      ['item.added', 1],
      ['list.changed', 2],
      ['list.changed', 3],
      ['item.added', 3],
    ]);
    for (const [i, item] of items.entries()) {
      expect(item.position).toMatch(/^[0-9a-f]{40}$/);
      if (i > 0) expect(item.position > items[i - 1].position).toBe(true);
    }
    // The three pushed: the same id as SVC-Delivery, the same fields as the body.
    const pushed = suite.receiver.requests
      .filter((request) => request.path === path && request.headers['svc-event'] !== 'ping')
      .map((request) => ({ deliveryId: request.headers['svc-delivery'], ...JSON.parse(request.rawBody.toString('utf8')) }));
    expect(items.slice(0, 3).map(({ position: _position, ...rest }) => rest)).toEqual(
      items.slice(0, 3).map((item) => pushed.find((push) => push.deliveryId === item.deliveryId)),
    );
    expect(pushed).toHaveLength(3);
    // The two skipped while paused: the log's ids.
    const skipped = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?outcome=skipped`, { token });
    expect(skipped.body.data.map((entry: { id: string }) => entry.id).sort()).toEqual([items[3].deliveryId, items[4].deliveryId].sort());
  });

  it("pages by next: the last item's position, or the after given when the page is empty", async () => {
    const { owner, webhookId, listId } = await setUp('/feed/pages');
    const token = owner.token;
    const empty = await feed(token, webhookId);
    expect(empty).toMatchObject({ status: 200, body: { data: [], next: null } });
    for (const writeId of ['w1', 'w2', 'w3']) await suite.stack.reportWrite(listId, writeId);
    const all = await itemsOnceThere(token, webhookId, 3);

    const first = await feed(token, webhookId, '?limit=2');
    expect(first.body).toEqual({ data: all.slice(0, 2), next: all[1].position });
    const second = await feed(token, webhookId, `?limit=2&after=${first.body.next}`);
    expect(second.body).toEqual({ data: all.slice(2), next: all[2].position });
    const last = await feed(token, webhookId, `?after=${second.body.next}`);
    expect(last.body).toEqual({ data: [], next: all[2].position });
    // With wait and nothing recorded, the same once its time is up.
    expect((await feed(token, webhookId, `?after=${second.body.next}&wait=1`)).body).toEqual({ data: [], next: all[2].position });
  });

  it('with wait, answers as soon as an item is recorded, written through another API process than the one holding it', async () => {
    const { owner, webhookId, listId } = await setUp('/feed/wait');
    const token = owner.token;
    await suite.stack.reportWrite(listId, 'w1');
    const [first] = await itemsOnceThere(token, webhookId, 1);

    // A second API process: its own pool, its own listening connection.
    const otherSql = createSql(inject('databaseUrl'));
    const other = await suite.stack.startApiWith({ sql: otherSql });
    try {
      const before = await waitingRequests();
      const held = other.request('GET', `/v3/webhooks/${webhookId}/events?after=${first.position}&wait=30`, { token });
      await waitFor(async () => ((await waitingRequests()) > before ? true : undefined), { what: 'the request to wait' });
      await suite.stack.reportWrite(listId, 'w2');
      const answer = await held;
      expect(answer.status).toBe(200);
      expect(answer.body.data).toMatchObject([{ cursor: 2, event: 'list.changed', listId }]);
      expect(answer.body.next).toBe(answer.body.data[0].position);
    } finally {
      await other.close();
      await otherSql.end();
    }
  });

  it('answers 410 POSITION_EXPIRED with oldestPosition for a position older than the oldest item kept', async () => {
    const { owner, webhookId, listId } = await setUp('/feed/expired');
    const token = owner.token;
    for (const writeId of ['w1', 'w2', 'w3']) await suite.stack.reportWrite(listId, writeId);
    const [one, two, three] = await itemsOnceThere(token, webhookId, 3);
    // As the retention job prunes them: the oldest first.
    await suite.stack.service
      .sql`DELETE FROM feed_items WHERE webhook_id = ${webhookId} AND delivery_id IN (${one.deliveryId}, ${two.deliveryId})`;

    for (const expired of [one, two]) {
      const answer = await feed(token, webhookId, `?after=${expired.position}`);
      expect(answer.status).toBe(410);
      expect(answer.body.error).toEqual({ code: 'POSITION_EXPIRED', message: expect.any(String), oldestPosition: three.position });
    }
    expect((await feed(token, webhookId)).body).toEqual({ data: [three], next: three.position });
    expect((await feed(token, webhookId, `?after=${three.position}`)).body).toEqual({ data: [], next: three.position });
  });

  it("answers 400 for a malformed query or another webhook's position, 404 for another account's webhook, 403 without deliveries:read", async () => {
    const { owner, webhookId, listId } = await setUp('/feed/refusals');
    const token = owner.token;
    const otherWebhook = await suite.stack.registerWebhook(token, suite.receiver.urlFor('/feed/refusals-other'));
    await suite.stack.reportWrite(listId, 'w1');
    const [ofOther] = await itemsOnceThere(token, otherWebhook.id, 1);

    for (const [query, path] of [
      ['?after=nope', '/query/after'],
      [`?after=${ofOther.position}`, '/query/after'],
      [`?after=${ofOther.position.toUpperCase()}`, '/query/after'],
      ['?limit=0', '/query/limit'],
      ['?limit=501', '/query/limit'],
      ['?wait=31', '/query/wait'],
      ['?wait=-1', '/query/wait'],
      ['?since=1', '/query/since'],
    ]) {
      const answer = await feed(token, webhookId, query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path, message: expect.any(String) }] });
    }
    expect((await feed(token, webhookId, '?limit=500&wait=0')).status).toBe(200);

    const stranger = await suite.stack.createAccount();
    const notFound = await feed(stranger.token, webhookId);
    expect(notFound).toMatchObject({ status: 404, body: { error: { code: 'WEBHOOK_NOT_FOUND' } } });

    const tokenOf = async (scopes: string[]) =>
      (await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: scopes.join(' '), scopes } })).body.token as string;
    const withoutIt = await feed(await tokenOf(['webhooks:read', 'deliveries:write']), webhookId);
    expect(withoutIt).toMatchObject({ status: 403, body: { error: { code: 'INSUFFICIENT_SCOPE', requiredScope: 'deliveries:read' } } });
    expect((await feed(await tokenOf(['deliveries:read']), webhookId)).status).toBe(200);
  });
});
