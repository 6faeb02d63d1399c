import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { lifecycleStateQuery } from '../../workflows';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await stack.startReceiver();
});
afterAll(() => stack?.stop());

describe('POST /v3/webhooks', () => {
  it('creates a webhook with defaults, answers 201 with the secret once, and pings the url signed with it', async () => {
    const account = await stack.createAccount();
    const url = receiver.urlFor('/hooks/created');
    const response = await stack.request('POST', '/v3/webhooks', { token: account.token, body: { url } });

    expect(response.status).toBe(201);
    const { secret, ...webhook } = response.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(webhook).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-f]{24}$/),
      url,
      events: ['list.changed'],
      listIds: [],
      status: 'active',
      pausedReason: null,
      consecutiveFailures: 0,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(response.headers.get('location')).toBe(`/v3/webhooks/${webhook.id}`);

    const pings = receiver.requests.filter((r) => r.path === '/hooks/created');
    expect(pings).toHaveLength(1);
    const ping = pings[0]!;
    expect(ping.method).toBe('POST');
    expect(ping.headers['content-type']).toBe('application/json');
    expect(ping.headers['svc-event']).toBe('ping');
    expect(ping.headers['svc-webhook']).toBe(webhook.id);
    expect(ping.headers['svc-delivery']).toMatch(/^dlv_[0-9a-f]{24}$/);
    expect(ping.headers['user-agent']).toMatch(/^svc-webhooks\/\d+\.\d+\.\d+$/);
    expect(verifySignature(ping.rawBody, ping.headers['svc-signature'] as string, secret)).toBe(true);
    const payload = JSON.parse(ping.rawBody.toString('utf8'));
    expect(Object.keys(payload)).toEqual(['event', 'webhookId', 'at']);
    expect(payload).toEqual({ event: 'ping', webhookId: webhook.id, at: expect.stringMatching(/Z$/) });

    const lifecycle = stack.service.client.workflow.getHandle(`webhook/${webhook.id}`);
    expect(await lifecycle.query(lifecycleStateQuery)).toEqual({
      webhookId: webhook.id,
      accountId: account.id,
      status: 'active',
      consecutiveFailures: 0,
    });
  });
});
