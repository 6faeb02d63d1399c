// What was sent and what came back (GET /v3/webhooks/{id}/deliveries/{deliveryId}), and the
// deliveries a paused webhook's writes would have had, logged as skipped.
import { describe, expect, it } from 'vitest';
import { KEPT_BODY_BYTES } from '../../src/delivery/response-capture';
import { verifySignature } from '../../src/delivery/signing';
import { TOPICS } from '../../src/topics';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

const received = (path: string) => suite.receiver.requests.filter((request) => request.path === path);

/** A webhook on `path` for every topic, with its secret, and a list its account owns. */
async function webhookOn(path: string) {
  const owner = await suite.stack.createAccount();
  const webhook = await suite.stack.registerWebhook(owner.token, suite.receiver.urlFor(path), { events: [...TOPICS] });
  const listId = `detail-${webhook.id}`;
  await suite.stack.putList(listId, owner.id);
  return { token: owner.token, webhookId: webhook.id, secret: webhook.secret, url: webhook.url, listId };
}

const log = async (token: string, webhookId: string, query = '') =>
  (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries${query}`, { token })).body.data;
const detailOf = (token: string, webhookId: string, deliveryId: string) =>
  suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries/${deliveryId}`, { token });

describe('GET /v3/webhooks/{id}/deliveries/{deliveryId}', () => {
  it('answers the log entry with the request exactly as the receiver got it and the response it gave', async () => {
    const { token, webhookId, secret, url, listId } = await webhookOn('/detail/event');
    suite.receiver.respondWith({ status: 201, headers: { 'X-Receipt': 'r-1', 'Content-Type': 'text/plain' }, body: 'thanks' });
    await suite.stack.reportWrite(listId, 'w1', [{ type: 'list.updated' }]);
    const [entry] = await log(token, webhookId);
    expect(entry).not.toHaveProperty('request');
    expect(entry).not.toHaveProperty('response');

    const detail = await detailOf(token, webhookId, entry.id);
    expect(detail.status).toBe(200);
    const { request, response, ...logged } = detail.body;
    expect(logged).toEqual(entry);
    const sent = received('/detail/event').find((r) => r.headers['svc-delivery'] === entry.id)!;
    expect(request.url).toBe(url);
    expect(request.body).toBe(sent.rawBody.toString('utf8'));
    expect(Object.keys(request.headers)).toEqual([
      'svc-event',
      'svc-signature',
      'svc-delivery',
      'svc-webhook',
      'content-type',
      'user-agent',
    ]);
    for (const [name, value] of Object.entries(request.headers)) expect(sent.headers[name], name).toBe(value);
    expect(verifySignature(request.body, request.headers['svc-signature'], secret)).toBe(true);
    expect(JSON.stringify(detail.body)).not.toContain(secret);
    expect(response).toMatchObject({ statusCode: 201, body: 'thanks', bodyTruncated: false });
    expect(Object.keys(response.headers).slice(0, 2)).toEqual(['x-receipt', 'content-type']);
    expect(response.headers['x-receipt']).toBe('r-1');
  });

  it("keeps a failing receiver's status, headers and the first 4 KiB of its body, for events, pings and redeliveries", async () => {
    const { token, webhookId, listId } = await webhookOn('/detail/failing');
    const page = `<html><body><h1>502 Bad Gateway</h1>${'<p>upstream unavailable</p>'.repeat(400)}</body></html>`;
    suite.receiver.respondWith({ status: 502, headers: { 'content-type': 'text/html' }, body: page });
    await suite.stack.reportWrite(listId, 'w1', [{ type: 'list.updated' }]);
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
    const [ping, event] = await log(token, webhookId);
    const redelivered = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${event.id}/redeliveries`, { token });
    expect(redelivered.body).toMatchObject({ statusCode: 502, error: 'non_2xx' });

    for (const [kind, id] of [
      ['event', event.id],
      ['ping', ping.id],
      ['redelivery', redelivered.body.deliveryId],
    ]) {
      const { body } = await detailOf(token, webhookId, id);
      expect(body, kind).toMatchObject({ kind, outcome: 'failed', statusCode: 502, error: 'non_2xx' });
      expect(body.response, kind).toEqual({
        statusCode: 502,
        headers: expect.objectContaining({ 'content-type': 'text/html' }),
        body: page.slice(0, KEPT_BODY_BYTES),
        bodyTruncated: true,
      });
      expect(body.request.headers['svc-delivery'], kind).toBe(id);
    }
    const pingDetail = (await detailOf(token, webhookId, ping.id)).body;
    expect(JSON.parse(pingDetail.request.body)).toMatchObject({ event: 'ping', webhookId });
    const redeliveryDetail = (await detailOf(token, webhookId, redelivered.body.deliveryId)).body;
    expect(redeliveryDetail.request.body).toBe((await detailOf(token, webhookId, event.id)).body.request.body);
  });

  it('has a request and no response when none arrived', async () => {
    const { token, webhookId, listId } = await webhookOn('/detail/gone');
    const closed = await suite.stack.startReceiver();
    const url = closed.urlFor('/closed');
    await closed.close();
    await suite.stack.service.sql`UPDATE webhooks SET url = ${url} WHERE id = ${webhookId}`;
    await suite.stack.reportWrite(listId, 'w1', [{ type: 'list.updated' }]);
    const [entry] = await log(token, webhookId);
    const { body } = await detailOf(token, webhookId, entry.id);
    expect(body).toMatchObject({ outcome: 'failed', error: 'connection', statusCode: null, response: null });
    expect(body.request).toMatchObject({ url, headers: { 'svc-delivery': entry.id } });
  });

  it("answers 404 DELIVERY_NOT_FOUND for an unknown id, one that is no id, and another webhook's; 404 WEBHOOK_NOT_FOUND for another account's", async () => {
    const mine = await webhookOn('/detail/mine');
    await suite.stack.request('POST', `/v3/webhooks/${mine.webhookId}/pings`, { token: mine.token });
    const [ping] = await log(mine.token, mine.webhookId);
    const sibling = await suite.stack.registerWebhook(mine.token, suite.receiver.urlFor('/detail/sibling'));
    for (const [webhookId, deliveryId] of [
      [mine.webhookId, 'dlv_000000000000000000000000'],
      [mine.webhookId, 'not-an-id'],
      [sibling.id, ping.id],
    ]) {
      const answer = await detailOf(mine.token, webhookId, deliveryId);
      expect(answer, deliveryId).toMatchObject({ status: 404, body: { error: { code: 'DELIVERY_NOT_FOUND' } } });
    }
    const stranger = await suite.stack.createAccount();
    const foreign = await detailOf(stranger.token, mine.webhookId, ping.id);
    expect(foreign).toMatchObject({ status: 404, body: { error: { code: 'WEBHOOK_NOT_FOUND' } } });
  });
});

describe('deliveries skipped while paused', () => {
  it("logs a paused webhook's deliveries as skipped (error paused, no status, 0 ms), never sent and never counted", async () => {
    const { token, webhookId, listId } = await webhookOn('/detail/paused');
    suite.receiver.respondWith((request) => (request.path === '/detail/paused' ? { status: 500 } : {}));
    await suite.stack.reportWrite(listId, 'failing', [{ type: 'list.updated' }]);
    await suite.stack.waitForFailureCount(token, webhookId, 1);
    const signalsBefore = await suite.stack.outcomeSignals(webhookId);
    const paused = await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'paused' } });
    expect(paused.body).toMatchObject({ status: 'paused', consecutiveFailures: 1 });
    const sentBefore = received('/detail/paused').length;

    // A write firing two topics while paused: two deliveries, both skipped.
    await suite.stack.reportWrite(listId, 'while-paused', [{ type: 'item.added', itemId: 'milk' }]);
    expect(received('/detail/paused')).toHaveLength(sentBefore);
    const skipped = await log(token, webhookId, '?outcome=skipped');
    expect(skipped).toHaveLength(2);
    expect(skipped.map((entry: { event: string }) => entry.event).sort()).toEqual(['item.added', 'list.changed']);
    for (const entry of skipped) {
      expect(entry).toMatchObject({
        kind: 'event',
        listId,
        cursor: 2,
        outcome: 'skipped',
        error: 'paused',
        statusCode: null,
        durationMs: 0,
      });
      expect((await detailOf(token, webhookId, entry.id)).body).toMatchObject({ ...entry, request: null, response: null });
    }
    expect(await log(token, webhookId, '?outcome=failed')).toHaveLength(1);

    // Never counted: the count and the outcomes webhook/{id} was told are as before.
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body.consecutiveFailures).toBe(1);
    expect(await suite.stack.outcomeSignals(webhookId)).toEqual(signalsBefore);

    // Reactivated, the next write is delivered; what was skipped is not sent by itself.
    suite.receiver.respondWith({});
    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'active' } });
    await suite.stack.reportWrite(listId, 'after', [{ type: 'list.updated' }]);
    expect(
      received('/detail/paused')
        .slice(sentBefore)
        .map((request) => JSON.parse(request.rawBody.toString()).cursor),
    ).toEqual([3]);
    expect(await log(token, webhookId, '?outcome=skipped')).toHaveLength(2);
  });
});
