import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { deliveryOutcomesSignal, lifecycleStateQuery } from '../../src/contract/messages';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

async function newWebhook(path: string, body: Record<string, unknown> = {}) {
  const account = await suite.stack.createAccount();
  const webhook = await suite.stack.registerWebhook(account.token, suite.receiver.urlFor(path), body);
  return { account, token: account.token, webhook };
}

/** Reports outcomes to the webhook's workflow as a list write would, and waits until the API shows the count. */
async function reportOutcomes(token: string, webhookId: string, delivered: boolean[], expectedCount: number) {
  await suite.stack.lifecycle(webhookId).signal(deliveryOutcomesSignal, { delivered });
  return suite.stack.waitForFailureCount(token, webhookId, expectedCount);
}

describe('GET /v3/webhooks and /v3/webhooks/{id}', () => {
  it("lists and reads only the caller's webhooks", async () => {
    const { token, webhook } = await newWebhook('/manage/a');
    const second = await suite.stack.request('POST', '/v3/webhooks', {
      token,
      body: { url: suite.receiver.urlFor('/manage/b'), events: ['item.added'] },
    });
    await newWebhook('/manage/other-account');

    const list = await suite.stack.request('GET', '/v3/webhooks', { token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([webhook.id, second.body.id]);
    expect(list.body.data[0]).not.toHaveProperty('secret');

    const one = await suite.stack.request('GET', `/v3/webhooks/${second.body.id}`, { token });
    expect(one.status).toBe(200);
    const { secret, ...withoutSecret } = second.body;
    expect(secret).toMatch(/^whsec_/);
    expect(one.body).toEqual(withoutSecret);
  });

  it('gives random, non-sequential ids', async () => {
    const { token } = await newWebhook('/manage/ids/0');
    const ids = [];
    for (let i = 1; i < 4; i++) {
      ids.push(
        (await suite.stack.request('POST', '/v3/webhooks', { token, body: { url: suite.receiver.urlFor(`/manage/ids/${i}`) } })).body.id,
      );
    }
    const numbers = ids.map((id: string) => BigInt(`0x${id.slice(3)}`));
    expect(new Set(ids).size).toBe(3);
    expect(numbers[1] - numbers[0]).not.toBe(numbers[2] - numbers[1]);
  });
});

describe('tenant isolation', () => {
  it("answers another account's webhook with a 404 byte-identical to an unknown id, on every route", async () => {
    const { webhook } = await newWebhook('/manage/isolated');
    const intruder = await suite.stack.createAccount();
    const routes: [string, string, unknown][] = [
      ['GET', '', undefined],
      ['PATCH', '', { status: 'paused' }],
      ['DELETE', '', undefined],
      ['POST', '/pings', undefined],
      ['GET', '/health', undefined],
    ];
    for (const [method, suffix, body] of routes) {
      const foreign = await suite.stack.request(method, `/v3/webhooks/${webhook.id}${suffix}`, { token: intruder.token, body });
      const unknown = await suite.stack.request(method, `/v3/webhooks/wh_000000000000000000000000${suffix}`, {
        token: intruder.token,
        body,
      });
      expect(foreign.status).toBe(404);
      expect(JSON.stringify(foreign.body)).toBe(JSON.stringify(unknown.body));
      expect(foreign.body).toEqual({ error: { code: 'WEBHOOK_NOT_FOUND', message: expect.any(String) } });
    }
    // Nothing happened to it.
    expect(await suite.stack.lifecycle(webhook.id).query(lifecycleStateQuery)).toMatchObject({ status: 'active' });
  });
});

describe('PATCH /v3/webhooks/{id}', () => {
  it('pauses by hand and reactivates, through the per-webhook workflow', async () => {
    const { token, webhook } = await newWebhook('/manage/patch-status');
    const paused = await suite.stack.request('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'paused' } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ id: webhook.id, status: 'paused', pausedReason: 'manual' });
    expect(await suite.stack.lifecycle(webhook.id).query(lifecycleStateQuery)).toMatchObject({ status: 'paused', pausedReason: 'manual' });

    const active = await suite.stack.request('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'active' } });
    expect(active.body).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 0 });
  });

  it('pauses at 20 consecutive failures, and reactivation resets the count to 0', async () => {
    const { token, webhook } = await newWebhook('/manage/auto-pause');
    await reportOutcomes(token, webhook.id, Array(19).fill(false), 19);
    await reportOutcomes(token, webhook.id, [true], 0);
    const paused = await reportOutcomes(token, webhook.id, Array(25).fill(false), 20);
    expect(paused).toMatchObject({ status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 });
    // Outcomes after the pause change nothing.
    await suite.stack.lifecycle(webhook.id).signal(deliveryOutcomesSignal, { delivered: [true] });
    expect(await suite.stack.lifecycle(webhook.id).query(lifecycleStateQuery)).toMatchObject({ status: 'paused', consecutiveFailures: 20 });

    const reactivated = await suite.stack.request('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'active' } });
    expect(reactivated.body).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 0 });
    expect(await suite.stack.lifecycle(webhook.id).query(lifecycleStateQuery)).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    // The count really restarted: one failure makes 1, not 21.
    await reportOutcomes(token, webhook.id, [false], 1);
  });

  it('changes events and listIds with the registration rules', async () => {
    const { account, token, webhook } = await newWebhook('/manage/patch-subscription');
    await suite.stack.putList('patch-list-1', account.id);
    const other = await suite.stack.createAccount();
    await suite.stack.putList('patch-list-foreign', other.id);

    const changed = await suite.stack.request('PATCH', `/v3/webhooks/${webhook.id}`, {
      token,
      body: { events: ['item.added', 'item.checked'], listIds: ['patch-list-1'] },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ events: ['item.added', 'item.checked'], listIds: ['patch-list-1'], status: 'active' });

    const foreign = await suite.stack.request('PATCH', `/v3/webhooks/${webhook.id}`, {
      token,
      body: { listIds: ['patch-list-foreign', 'nope'] },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatchObject({ code: 'INVALID_LIST_IDS', invalidListIds: ['patch-list-foreign', 'nope'] });
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhook.id}`, { token })).body.listIds).toEqual(['patch-list-1']);
  });

  it.each([
    ['an empty body', {}, '/'],
    ['no body', undefined, '/'],
    ['an unknown field', { url: 'https://example.com/' }, '/url'],
    ['an unknown status', { status: 'disabled' }, '/status'],
    ['an unknown topic', { events: ['nope'] }, '/events/0'],
    ['51 listIds', { listIds: Array.from({ length: 51 }, (_, i) => `l${i}`) }, '/listIds'],
  ])('answers 400 VALIDATION_FAILED for %s', async (_name, body, path) => {
    const { token, webhook } = await newWebhook(`/manage/patch-invalid`);
    const response = await suite.stack.request('PATCH', `/v3/webhooks/${webhook.id}`, { token, body });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual({
      code: 'VALIDATION_FAILED',
      message: expect.any(String),
      details: [{ path, message: expect.any(String) }],
    });
  });
});

describe('POST /v3/webhooks/{id}/pings', () => {
  it('sends a signed ping now, also to a paused webhook, and never changes the count', async () => {
    const { token, webhook } = await newWebhook('/manage/ping');
    await reportOutcomes(token, webhook.id, [false, false, false], 3);

    const ok = await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ delivered: true, statusCode: 200, durationMs: expect.any(Number), error: null });
    const ping = suite.receiver.requests.filter((r) => r.path === '/manage/ping').at(-1)!;
    expect(ping.headers['svc-event']).toBe('ping');
    expect(verifySignature(ping.rawBody, ping.headers['svc-signature'] as string, webhook.secret)).toBe(true);

    suite.receiver.respondWith((request) => (request.path === '/manage/ping' ? { status: 500 } : {}));
    const failed = await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token, body: {} });
    suite.receiver.respondWith({});
    expect(failed.body).toEqual({ delivered: false, statusCode: 500, durationMs: expect.any(Number), error: 'non_2xx' });

    await suite.stack.request('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'paused' } });
    const toPaused = await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    expect(toPaused.body.delivered).toBe(true);

    const state = await suite.stack.lifecycle(webhook.id).query(lifecycleStateQuery);
    expect(state).toMatchObject({ consecutiveFailures: 3, status: 'paused' });
    const logged = await suite.stack.service
      .sql`SELECT kind, event, outcome, status_code FROM deliveries WHERE webhook_id = ${webhook.id} ORDER BY attempted_at`;
    expect(logged.map((row) => [row.kind, row.event, row.outcome, row.status_code])).toEqual([
      ['ping', 'ping', 'delivered', 200],
      ['ping', 'ping', 'failed', 500],
      ['ping', 'ping', 'delivered', 200],
    ]);
  });

  it('refuses a body with fields', async () => {
    const { token, webhook } = await newWebhook('/manage/ping-body');
    const response = await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token, body: { event: 'ping' } });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: '/event', message: 'is not allowed' }] });
    const nullBody = await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, {
      token,
      rawBody: 'null',
      headers: { 'content-type': 'application/json' },
    });
    expect(nullBody.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: '/' }] });
  });
});

describe('DELETE /v3/webhooks/{id}', () => {
  it('answers 204, ends the per-webhook workflow, and the webhook is gone', async () => {
    const { token, webhook } = await newWebhook('/manage/delete');
    const deleted = await suite.stack.request('DELETE', `/v3/webhooks/${webhook.id}`, { token });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await suite.stack.lifecycle(webhook.id).describe()).status.name).toBe('COMPLETED');
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhook.id}`, { token })).status).toBe(404);
    expect((await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token })).status).toBe(404);
    expect((await suite.stack.request('DELETE', `/v3/webhooks/${webhook.id}`, { token })).status).toBe(404);
    expect((await suite.stack.request('GET', '/v3/webhooks', { token })).body).toEqual({ data: [] });
  });

  it('answers 405 with Allow for a method the route does not have', async () => {
    const { token, webhook } = await newWebhook('/manage/method');
    const response = await suite.stack.request('PUT', `/v3/webhooks/${webhook.id}`, { token, body: {} });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
    expect(response.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });
});
