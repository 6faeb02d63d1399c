// The typed client (svc-webhooks/client) against the real service: its paths, bodies and
// answers are the generated types of the document the service serves.
import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/client';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

describe('createApiClient', () => {
  it('registers a webhook, lists it, sends it a test event and reads the log, each answer typed', async () => {
    const owner = await suite.stack.createAccount();
    const client = createApiClient({ apiUrl: suite.stack.service.url, token: owner.token });
    const url = suite.receiver.urlFor('/client/typed');

    const created = await client.POST('/v3/webhooks', { body: { url, events: ['item.checked', 'list.changed'] } });
    expect(created.response.status).toBe(201);
    const webhookId = created.data!.id;
    expect(created.data).toMatchObject({
      url,
      events: ['item.checked', 'list.changed'],
      status: 'active',
      secret: expect.stringMatching(/^whsec_/),
    });

    const listed = await client.GET('/v3/webhooks');
    expect(listed.data!.data.map((webhook) => webhook.id)).toEqual([webhookId]);

    const sent = await client.POST('/v3/webhooks/{id}/test-events', {
      params: { path: { id: webhookId } },
      body: { event: 'item.checked' },
    });
    expect(sent.data).toMatchObject({ delivered: true, statusCode: 200, error: null });

    const log = await client.GET('/v3/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query: { kind: 'test' } } });
    expect(log.data!.data).toEqual([expect.objectContaining({ id: sent.data!.deliveryId, kind: 'test', event: 'item.checked' })]);
  });

  it("gives the API's error envelope as `error`, typed by the operation's documented answers", async () => {
    const owner = await suite.stack.createAccount();
    const client = createApiClient({ apiUrl: suite.stack.service.url, token: owner.token });
    const missing = await client.GET('/v3/webhooks/{id}', { params: { path: { id: 'wh_000000000000000000000000' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ error: { code: 'WEBHOOK_NOT_FOUND', message: expect.any(String) } });

    const anonymous = createApiClient({ apiUrl: suite.stack.service.url });
    expect((await anonymous.GET('/v3/webhooks')).error?.error.code).toBe('UNAUTHORIZED');
  });
});
