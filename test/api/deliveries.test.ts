import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_LOG_KEPT, DELIVERY_LOG_PRUNE_EVERY } from '../../src/db/deliveries';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let receiver: Receiver;
beforeAll(async () => {
  stack = await startTestStack();
  receiver = await stack.startReceiver();
});
afterAll(() => stack?.stop());

const setUp = (path: string) => stack.setUpListWebhook(receiver.urlFor(path));

describe('GET /v3/webhooks/{id}/deliveries', () => {
  it('lists events and pings newest first, page by page', async () => {
    const { owner, webhookId, listId } = await setUp('/log/pages');
    for (let i = 1; i <= 3; i++) await stack.reportWrite(listId, `w${i}`);
    receiver.respondWith({ status: 500 });
    await stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token: owner.token });
    receiver.respondWith({});

    const first = await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=2`, { token: owner.token });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([
      {
        id: expect.stringMatching(/^dlv_/),
        event: 'ping',
        listId: null,
        cursor: null,
        at: null,
        kind: 'ping',
        outcome: 'failed',
        statusCode: 500,
        error: 'non_2xx',
        durationMs: expect.any(Number),
        attemptedAt: expect.any(String),
      },
      expect.objectContaining({ kind: 'event', event: 'list.changed', listId, cursor: 3, outcome: 'delivered', statusCode: 200, error: null }),
    ]);
    expect(first.body.next).toBe(first.body.data[1].id);

    const second = await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=2&before=${first.body.next}`, { token: owner.token });
    expect(second.body.data.map((d: { cursor: number }) => d.cursor)).toEqual([2, 1]);
    expect(second.body.next).toBeNull();
    const everything = await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token: owner.token });
    expect(everything.body.data).toHaveLength(4);
  });

  it('validates the query and hides other accounts\' logs', async () => {
    const { owner, webhookId } = await setUp('/log/query');
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'before=nope', 'page=2']) {
      const response = await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?${query}`, { token: owner.token });
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_FAILED');
      expect(response.body.error.details[0].path).toMatch(/^\/query/);
    }
    const intruder = await stack.createAccount();
    const foreign = await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token: intruder.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('WEBHOOK_NOT_FOUND');
  });

  it(`keeps the newest ${DELIVERY_LOG_KEPT} attempts and prunes older ones`, async () => {
    const { owner, webhookId, listId } = await setUp('/log/prune');
    // An old backlog, as if the webhook had been busy for a while; the next attempt is due to prune.
    await stack.service.sql`
      INSERT INTO deliveries (id, webhook_id, kind, event, outcome, duration_ms, attempted_at)
      SELECT 'dlv_old' || lpad(n::text, 20, '0'), ${webhookId}, 'ping', 'ping', 'delivered', 1, now() - n * interval '1 second'
      FROM generate_series(1, ${DELIVERY_LOG_KEPT + 50}) AS n`;
    await stack.service.sql`UPDATE webhooks SET deliveries_logged = ${DELIVERY_LOG_PRUNE_EVERY - 1} WHERE id = ${webhookId}`;
    await stack.reportWrite(listId, 'after-backlog');
    const [{ count }] = await stack.service.sql`SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = ${webhookId}`;
    expect(count).toBe(DELIVERY_LOG_KEPT);
    const newest = await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=1`, { token: owner.token });
    expect(newest.body.data[0]).toMatchObject({ kind: 'event', listId });
    const oldest = await stack.service.sql`SELECT id FROM deliveries WHERE webhook_id = ${webhookId} ORDER BY attempted_at LIMIT 1`;
    expect(oldest[0].id).toBe(`dlv_old${String(DELIVERY_LOG_KEPT - 1).padStart(20, '0')}`);
  });
});
