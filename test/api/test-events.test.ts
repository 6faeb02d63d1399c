// Test events: one signed delivery of a topic the owner chooses, sent now to a real receiver,
// marked SVC-Test, logged as `test` and never counted.
import { describe, expect, it } from 'vitest';
import { testEventWorkflowId } from '../../src/contract/workflows';
import { verifySignature } from '../../src/delivery/signing';
import { TOPICS } from '../../src/topics';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

/** What reached `path` but the registration's ping. */
const received = (path: string) =>
  suite.receiver.requests.filter((request) => request.path === path && request.headers['svc-event'] !== 'ping');

async function webhookOn(path: string) {
  const owner = await suite.stack.createAccount();
  const webhook = await suite.stack.registerWebhook(owner.token, suite.receiver.urlFor(path), { events: [...TOPICS] });
  return { owner, token: owner.token, webhookId: webhook.id, secret: webhook.secret };
}

const sendTestEvent = (token: string, webhookId: string, body: unknown) =>
  suite.stack.request('POST', `/v3/webhooks/${webhookId}/test-events`, { token, body });

describe('POST /v3/webhooks/{id}/test-events', () => {
  it('sends the topic chosen with the body of an event (list "test", cursor 0, now), signed and marked SVC-Test: 1', async () => {
    const { token, webhookId, secret } = await webhookOn('/test-events/sent');
    const before = Date.now();
    const response = await sendTestEvent(token, webhookId, { event: 'item.checked' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      deliveryId: expect.stringMatching(/^dlv_[0-9a-f]{24}$/),
      delivered: true,
      statusCode: 200,
      durationMs: expect.any(Number),
      error: null,
    });
    const [request] = received('/test-events/sent');
    const body = JSON.parse(request.rawBody.toString('utf8'));
    expect(Object.keys(body)).toEqual(['event', 'listId', 'cursor', 'at']);
    expect(body).toMatchObject({ event: 'item.checked', listId: 'test', cursor: 0 });
    expect(Date.parse(body.at)).toBeGreaterThanOrEqual(before - 1000);
    expect(request.headers).toMatchObject({
      'svc-event': 'item.checked',
      'svc-test': '1',
      'svc-delivery': response.body.deliveryId,
      'svc-webhook': webhookId,
    });
    expect(verifySignature(request.rawBody, String(request.headers['svc-signature']), secret)).toBe(true);
  });

  it('logs it with kind "test", which the kind filter finds, and runs as test-event/{webhookId}/{deliveryId}', async () => {
    const { token, webhookId } = await webhookOn('/test-events/logged');
    const { body: sent } = await sendTestEvent(token, webhookId, { event: 'list.changed' });
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
    const tests = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=test`, { token });
    expect(tests.body.data).toEqual([
      expect.objectContaining({
        id: sent.deliveryId,
        kind: 'test',
        event: 'list.changed',
        listId: 'test',
        cursor: 0,
        outcome: 'delivered',
      }),
    ]);
    const handle = suite.stack.service.client.workflow.getHandle(testEventWorkflowId(webhookId, sent.deliveryId));
    expect(await handle.result()).toEqual({ delivered: true, statusCode: 200, durationMs: sent.durationMs, error: null });
  });

  it('is never counted, reaches a paused webhook, and cannot be redelivered', async () => {
    const { token, webhookId } = await webhookOn('/test-events/uncounted');
    suite.receiver.respondWith((request) => ({ status: request.path === '/test-events/uncounted' ? 503 : 200 }));
    const failed = await sendTestEvent(token, webhookId, { event: 'item.added' });
    expect(failed.body).toMatchObject({ delivered: false, statusCode: 503, error: 'non_2xx' });
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body.consecutiveFailures).toBe(0);

    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'paused' } });
    suite.receiver.respondWith({});
    const whilePaused = await sendTestEvent(token, webhookId, { event: 'item.added' });
    expect(whilePaused.body).toMatchObject({ delivered: true });
    expect(received('/test-events/uncounted')).toHaveLength(2);

    const redelivered = await suite.stack.request(
      'POST',
      `/v3/webhooks/${webhookId}/deliveries/${whilePaused.body.deliveryId}/redeliveries`,
      {
        token,
      },
    );
    expect(redelivered.status).toBe(409);
    expect(redelivered.body.error.code).toBe('NOT_REDELIVERABLE');
    expect(received('/test-events/uncounted')).toHaveLength(2);
  });

  it('takes a list the account owns or is a member of, and refuses any other with 400 INVALID_LIST_IDS', async () => {
    const { owner, token, webhookId } = await webhookOn('/test-events/lists');
    const other = await suite.stack.createAccount();
    await suite.stack.putList('test-events-owned', owner.id);
    await suite.stack.putList('test-events-member', other.id, [owner.id]);
    await suite.stack.putList('test-events-foreign', other.id);
    for (const listId of ['test-events-owned', 'test-events-member']) {
      const response = await sendTestEvent(token, webhookId, { event: 'item.removed', listId });
      expect(response.status, listId).toBe(200);
      expect(JSON.parse(received('/test-events/lists').at(-1)!.rawBody.toString('utf8')).listId).toBe(listId);
    }
    for (const listId of ['test-events-foreign', 'test-events-unknown']) {
      const refused = await sendTestEvent(token, webhookId, { event: 'item.removed', listId });
      expect(refused.status, listId).toBe(400);
      expect(refused.body.error).toEqual({ code: 'INVALID_LIST_IDS', message: expect.any(String), invalidListIds: [listId] });
    }
    expect(received('/test-events/lists')).toHaveLength(2);
  });

  it('refuses an unknown topic, a missing one and other fields with 400 VALIDATION_FAILED, sending nothing', async () => {
    const { token, webhookId } = await webhookOn('/test-events/invalid');
    for (const body of [{ event: 'ping' }, { event: 'item.renamed' }, {}, undefined, { event: 'item.added', cursor: 5 }]) {
      const refused = await sendTestEvent(token, webhookId, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
    }
    expect(received('/test-events/invalid')).toHaveLength(0);
  });
});
