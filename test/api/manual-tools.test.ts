// An owner's manual tools: redeliver one logged delivery, and rotate the signing secret.
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { TOPICS } from '../../src/topics';
import { lifecycleWorkflowId, redeliveryWorkflowId } from '../../src/contract/workflows';
import type { ReceivedRequest } from '../support/receiver';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

const received = (path: string) => suite.receiver.requests.filter((request) => request.path === path);
const lastReceived = (path: string): ReceivedRequest => received(path).at(-1)!;

/** A webhook on `path` with one logged delivery of a write that fired item.added and list.changed. */
async function webhookWithDelivery(path: string) {
  const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor(path), { events: [...TOPICS] });
  const webhook = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token: owner.token })).body;
  await suite.stack.reportWrite(listId, 'first', [{ type: 'item.added', itemId: 'milk' }]);
  const log = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?event=item.added`, { token: owner.token });
  const [logged] = log.body.data;
  const original = received(path).find((request) => request.headers['svc-delivery'] === logged.id)!;
  return { token: owner.token, webhookId, listId, logged, original, url: webhook.url as string };
}

/** How many signals `webhook/{id}` has received: each delivery outcome it counts comes as one. */
async function lifecycleSignals(webhookId: string): Promise<number> {
  const history = await suite.stack.service.client.workflow.getHandle(lifecycleWorkflowId(webhookId)).fetchHistory();
  return (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes).length;
}

const redeliver = (token: string, webhookId: string, deliveryId: string) =>
  suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${deliveryId}/redeliveries`, { token });

describe('redelivery', () => {
  it('sends the same body byte for byte and the same SVC-Event, under a new SVC-Delivery, and logs it as a redelivery', async () => {
    const { token, webhookId, logged, original } = await webhookWithDelivery('/redeliver/same');
    const response = await redeliver(token, webhookId, logged.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      deliveryId: expect.stringMatching(/^dlv_[0-9a-f]{24}$/),
      delivered: true,
      statusCode: 200,
      durationMs: expect.any(Number),
      error: null,
    });
    const again = lastReceived('/redeliver/same');
    expect(again.rawBody.equals(original.rawBody)).toBe(true);
    expect(again.headers['svc-event']).toBe('item.added');
    expect(again.headers['svc-webhook']).toBe(webhookId);
    expect(again.headers['svc-delivery']).toBe(response.body.deliveryId);
    expect(again.headers['svc-signature']).toBe(original.headers['svc-signature']);

    const [newest] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=1`, { token })).body.data;
    expect(newest).toEqual({
      ...logged,
      id: response.body.deliveryId,
      kind: 'redelivery',
      redeliveryOf: logged.id,
      durationMs: expect.any(Number),
      attemptedAt: expect.any(String),
      traceId: null,
    });
    expect(logged).toMatchObject({ kind: 'event', redeliveryOf: null });

    // A redelivery can itself be redelivered; the new entry names the one it repeats.
    const second = await redeliver(token, webhookId, response.body.deliveryId);
    expect(lastReceived('/redeliver/same').rawBody.equals(original.rawBody)).toBe(true);
    const [repeat] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=1`, { token })).body.data;
    expect(repeat).toMatchObject({ id: second.body.deliveryId, kind: 'redelivery', redeliveryOf: response.body.deliveryId });
  });

  it('runs as the workflow redelivery/{webhookId}/{deliveryId}, whose result is what the receiver answered', async () => {
    const { token, webhookId, logged } = await webhookWithDelivery('/redeliver/workflow');
    suite.receiver.respondWith({ status: 500 });
    const response = await redeliver(token, webhookId, logged.id);
    suite.receiver.respondWith({});
    expect(response.body).toMatchObject({ delivered: false, statusCode: 500, error: 'non_2xx' });
    const handle = suite.stack.service.client.workflow.getHandle(redeliveryWorkflowId(webhookId, response.body.deliveryId));
    expect(await handle.result()).toEqual({ delivered: false, statusCode: 500, durationMs: response.body.durationMs, error: 'non_2xx' });
    const { searchAttributes } = await handle.describe();
    expect(searchAttributes).toMatchObject({ WebhookId: [webhookId] });
  });

  it('never changes the failure count, in either direction, and reaches a paused webhook', async () => {
    const { token, webhookId, logged, listId } = await webhookWithDelivery('/redeliver/uncounted');
    suite.receiver.respondWith((request) => ({ status: request.path === '/redeliver/uncounted' ? 503 : 200 }));
    // item.checked and list.changed: two failures.
    await suite.stack.reportWrite(listId, 'fails', [{ type: 'item.checked' }]);
    await suite.stack.waitForFailureCount(token, webhookId, 2);
    const signalsBefore = await lifecycleSignals(webhookId);
    expect(signalsBefore, 'the failures reached webhook/{id} as signals').toBeGreaterThan(0);
    const failed = await redeliver(token, webhookId, logged.id);
    expect(failed.body).toMatchObject({ delivered: false, statusCode: 503 });
    suite.receiver.respondWith({});
    const delivered = await redeliver(token, webhookId, logged.id);
    expect(delivered.body).toMatchObject({ delivered: true });
    // A success would have reset the count, a failure raised it: neither happened, and
    // webhook/{id} never heard of either.
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body.consecutiveFailures).toBe(2);
    expect(await lifecycleSignals(webhookId)).toBe(signalsBefore);

    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'paused' } });
    const whilePaused = await redeliver(token, webhookId, logged.id);
    expect(whilePaused.body).toMatchObject({ delivered: true });
    expect(lastReceived('/redeliver/uncounted').headers['svc-delivery']).toBe(whilePaused.body.deliveryId);
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body).toMatchObject({
      status: 'paused',
      consecutiveFailures: 2,
    });
  });

  it('refuses a ping (409), and an id of another webhook or account (404), sending nothing', async () => {
    const { token, webhookId, logged } = await webhookWithDelivery('/redeliver/refused');
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
    const [ping] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=ping`, { token })).body.data;
    const before = received('/redeliver/refused').length;

    expect((await redeliver(token, webhookId, ping.id)).body.error.code).toBe('NOT_REDELIVERABLE');
    const stranger = await webhookWithDelivery('/redeliver/stranger');
    const foreign = await redeliver(stranger.token, stranger.webhookId, logged.id);
    expect(foreign).toMatchObject({ status: 404, body: { error: { code: 'DELIVERY_NOT_FOUND' } } });
    expect((await redeliver(stranger.token, webhookId, logged.id)).body.error.code).toBe('WEBHOOK_NOT_FOUND');
    expect(received('/redeliver/refused')).toHaveLength(before);
  });
});

describe('secret rotation', () => {
  it('signs every delivery, redelivery and ping after the answer with the new secret, and never again with the old', async () => {
    const path = '/rotate/random';
    const { token, webhookId, listId, logged, original } = await webhookWithDelivery(path);
    const oldSecret = await suite.stack.secretOf(webhookId);
    expect(verifySignature(original.rawBody, original.headers['svc-signature'] as string, oldSecret)).toBe(true);

    const rotated = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/secret`, { token });
    expect(rotated.status).toBe(200);
    const { secret } = rotated.body;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(oldSecret);

    const sentBefore = received(path).length;
    await suite.stack.reportWrite(listId, 'after-rotation', [{ type: 'item.removed' }]);
    await redeliver(token, webhookId, logged.id);
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
    const after = received(path).slice(sentBefore);
    expect(after.map((request) => request.headers['svc-event']).sort()).toEqual(['item.added', 'item.removed', 'list.changed', 'ping']);
    for (const request of after) {
      const signature = request.headers['svc-signature'] as string;
      expect(verifySignature(request.rawBody, signature, secret), String(request.headers['svc-event'])).toBe(true);
      expect(verifySignature(request.rawBody, signature, oldSecret)).toBe(false);
    }
    // The webhook object never holds it.
    expect(JSON.stringify((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body)).not.toContain(secret);
  });

  it("takes the caller's own secret, so a receiver that accepts both rotates with no failed verification", async () => {
    const path = '/rotate/own';
    const { token, webhookId, listId } = await webhookWithDelivery(path);
    const oldSecret = await suite.stack.secretOf(webhookId);
    const newSecret = `whsec_${'0123456789abcdef'.repeat(3)}`;
    // The receiver learns the new secret first, then accepts either while the switch happens.
    suite.receiver.respondWith((request) => {
      if (request.path !== path) return {};
      const signature = request.headers['svc-signature'] as string;
      return {
        status:
          verifySignature(request.rawBody, signature, oldSecret) || verifySignature(request.rawBody, signature, newSecret) ? 200 : 401,
      };
    });
    const rotated = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/secret`, { token, body: { secret: newSecret } });
    expect(rotated).toMatchObject({ status: 200, body: { secret: newSecret } });
    await suite.stack.reportWrite(listId, 'during-switch');
    suite.receiver.respondWith({});
    const log = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?outcome=failed`, { token });
    expect(log.body.data).toEqual([]);
    const last = lastReceived(path);
    expect(verifySignature(last.rawBody, last.headers['svc-signature'] as string, newSecret)).toBe(true);
  });

  it('keeps the secret out of Temporal and out of the logs', async () => {
    const { token, webhookId, logged } = await webhookWithDelivery('/rotate/private');
    const { secret } = (await suite.stack.request('POST', `/v3/webhooks/${webhookId}/secret`, { token })).body;
    const { deliveryId } = (await redeliver(token, webhookId, logged.id)).body;
    const history = await suite.stack.service.client.workflow.getHandle(redeliveryWorkflowId(webhookId, deliveryId)).fetchHistory();
    expect(JSON.stringify(history)).not.toContain(secret);
    expect(suite.stack.logs.join('')).not.toContain(secret);
  });
});
