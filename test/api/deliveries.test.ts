import { describe, expect, it } from 'vitest';
import { DELIVERY_LOG_KEPT, DELIVERY_LOG_PRUNE_EVERY } from '../../src/db/deliveries';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

const setUp = (path: string) => suite.stack.setUpListWebhook(suite.receiver.urlFor(path));

describe('GET /v3/webhooks/{id}/deliveries', () => {
  it('lists events and pings newest first, page by page', async () => {
    const { owner, webhookId, listId } = await setUp('/log/pages');
    for (let i = 1; i <= 3; i++) await suite.stack.reportWrite(listId, `w${i}`);
    suite.receiver.respondWith({ status: 500 });
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token: owner.token });
    suite.receiver.respondWith({});

    const first = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=2`, { token: owner.token });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([
      {
        id: expect.stringMatching(/^dlv_/),
        event: 'ping',
        listId: null,
        cursor: null,
        at: null,
        kind: 'ping',
        redeliveryOf: null,
        outcome: 'failed',
        statusCode: 500,
        error: 'non_2xx',
        durationMs: expect.any(Number),
        attemptedAt: expect.any(String),
        // Nothing is traced in a service started without tracing.
        traceId: null,
      },
      expect.objectContaining({
        kind: 'event',
        event: 'list.changed',
        listId,
        cursor: 3,
        outcome: 'delivered',
        statusCode: 200,
        error: null,
      }),
    ]);
    expect(first.body.next).toBe(first.body.data[1].id);

    const second = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=2&before=${first.body.next}`, {
      token: owner.token,
    });
    expect(second.body.data.map((d: { cursor: number }) => d.cursor)).toEqual([2, 1]);
    expect(second.body.next).toBeNull();
    const everything = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token: owner.token });
    expect(everything.body.data).toHaveLength(4);
  });

  it("validates the query and hides other accounts' logs", async () => {
    const { owner, webhookId } = await setUp('/log/query');
    for (const query of [
      'limit=0',
      'limit=101',
      'limit=x',
      'before=nope',
      'page=2',
      'outcome=lost',
      'kind=retry',
      'event=list',
      'event=PING',
      'outcome=failed&outcome=delivered',
    ]) {
      const response = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?${query}`, { token: owner.token });
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_FAILED');
      expect(response.body.error.details[0].path).toMatch(/^\/query/);
    }
    const intruder = await suite.stack.createAccount();
    const foreign = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token: intruder.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('WEBHOOK_NOT_FOUND');
  });

  it('filters by outcome, kind and event, combined with each other and with paging', async () => {
    const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/log/filters'), {
      events: ['item.added', 'list.changed'],
    });
    const log = async (query: string) => {
      const response = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?${query}`, { token: owner.token });
      expect(response.status, query).toBe(200);
      return response.body as {
        data: { id: string; kind: string; event: string; outcome: string; cursor: number | null }[];
        next: string | null;
      };
    };
    // cursor 1 delivered, cursor 2 failed (both item.added and list.changed), then a failed ping and a redelivery.
    await suite.stack.reportWrite(listId, 'ok', [{ type: 'item.added' }]);
    suite.receiver.respondWith({ status: 500 });
    await suite.stack.reportWrite(listId, 'fails', [{ type: 'item.added' }]);
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token: owner.token });
    suite.receiver.respondWith({});
    const [firstAdded] = (await log('event=item.added&outcome=delivered')).data;
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${firstAdded.id}/redeliveries`, { token: owner.token });

    const summary = (page: Awaited<ReturnType<typeof log>>) => page.data.map((d) => `${d.kind} ${d.event} ${d.cursor} ${d.outcome}`);
    expect(summary(await log('outcome=failed'))).toEqual([
      'ping ping null failed',
      expect.stringMatching(/^event (item\.added|list\.changed) 2 failed$/),
      expect.stringMatching(/^event (item\.added|list\.changed) 2 failed$/),
    ]);
    expect(summary(await log('kind=redelivery'))).toEqual(['redelivery item.added 1 delivered']);
    expect(summary(await log('kind=ping'))).toEqual(['ping ping null failed']);
    expect(summary(await log('event=ping'))).toEqual(['ping ping null failed']);
    expect(summary(await log('event=item.added&kind=event'))).toEqual(['event item.added 2 failed', 'event item.added 1 delivered']);
    expect(summary(await log('event=list.changed&outcome=delivered'))).toEqual(['event list.changed 1 delivered']);
    expect((await log('event=item.removed')).data).toEqual([]);

    // Paging through a filter: one entry a page, each page filtered the same way.
    const first = await log('outcome=delivered&limit=1');
    expect(summary(first)).toEqual(['redelivery item.added 1 delivered']);
    const second = await log(`outcome=delivered&limit=1&before=${first.next}`);
    const third = await log(`outcome=delivered&limit=1&before=${second.next}`);
    expect([...summary(second), ...summary(third)].sort()).toEqual(['event item.added 1 delivered', 'event list.changed 1 delivered']);
    expect(third.next).toBeNull();
  });

  it(`keeps the newest ${DELIVERY_LOG_KEPT} attempts and prunes older ones`, async () => {
    const { owner, webhookId, listId } = await setUp('/log/prune');
    // An old backlog, as if the webhook had been busy for a while; the next attempt is due to prune.
    await suite.stack.service.sql`
      INSERT INTO deliveries (id, webhook_id, kind, event, outcome, duration_ms, attempted_at)
      SELECT 'dlv_old' || lpad(n::text, 20, '0'), ${webhookId}, 'ping', 'ping', 'delivered', 1, now() - n * interval '1 second'
      FROM generate_series(1, ${DELIVERY_LOG_KEPT + 50}) AS n`;
    await suite.stack.service.sql`UPDATE webhooks SET deliveries_logged = ${DELIVERY_LOG_PRUNE_EVERY - 1} WHERE id = ${webhookId}`;
    await suite.stack.reportWrite(listId, 'after-backlog');
    const [{ count }] = await suite.stack.service.sql`SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = ${webhookId}`;
    expect(count).toBe(DELIVERY_LOG_KEPT);
    const newest = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=1`, { token: owner.token });
    expect(newest.body.data[0]).toMatchObject({ kind: 'event', listId });
    const oldest = await suite.stack.service.sql`SELECT id FROM deliveries WHERE webhook_id = ${webhookId} ORDER BY attempted_at LIMIT 1`;
    expect(oldest[0].id).toBe(`dlv_old${String(DELIVERY_LOG_KEPT - 1).padStart(20, '0')}`);
  });
});
