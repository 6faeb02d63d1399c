import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { lifecycleStateQuery } from '../../src/contract/messages';
import { useStackWithReceiver } from '../support/stack';
import { freePort } from '../support/ports';

const suite = useStackWithReceiver();

const pingsTo = (path: string) => suite.receiver.requests.filter((request) => request.path === path);

function register(token: string, body: unknown) {
  return suite.stack.request('POST', '/v3/webhooks', { token, body });
}

async function webhookRows(accountId: string) {
  return suite.stack.service.sql<{ id: string; url: string; events: string[] }[]>`
    SELECT id, url, events FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at`;
}

describe('POST /v3/webhooks: creation and update', () => {
  it('creates a webhook with defaults, answers 201 with the secret once, and pings the url signed with it', async () => {
    const account = await suite.stack.createAccount();
    const url = suite.receiver.urlFor('/hooks/created');
    const response = await register(account.token, { url });

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
      relay: false,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // A new webhook has had no event delivery; the registration's ping is none.
      health: { delivered24h: 0, failed24h: 0, skipped24h: 0, lastDeliveredAt: null, lastFailedAt: null },
      auth: null,
      clientCertificate: null,
    });
    expect(response.headers.get('location')).toBe(`/v3/webhooks/${webhook.id}`);

    const pings = pingsTo('/hooks/created');
    expect(pings).toHaveLength(1);
    const ping = pings[0];
    expect(ping.method).toBe('POST');
    expect(ping.headers['content-type']).toBe('application/json');
    expect(ping.headers['svc-event']).toBe('ping');
    expect(ping.headers['svc-webhook']).toBe(webhook.id);
    expect(ping.headers['svc-delivery']).toMatch(/^dlv_[0-9a-f]{24}$/);
    expect(ping.headers['user-agent']).toMatch(/^svc-webhooks\/\d+\.\d+\.\d+$/);
    expect(verifySignature(ping.rawBody, ping.headers['svc-signature'] as string, secret)).toBe(true);
    expect(verifySignature(ping.rawBody, ping.headers['svc-signature'] as string, `${secret}x`)).toBe(false);
    const payload = JSON.parse(ping.rawBody.toString('utf8'));
    expect(Object.keys(payload)).toEqual(['event', 'webhookId', 'at']);
    expect(payload).toEqual({ event: 'ping', webhookId: webhook.id, at: expect.stringMatching(/^\d{4}-.*\.\d{3}Z$/) });

    const lifecycle = suite.stack.lifecycle(webhook.id);
    expect(await lifecycle.query(lifecycleStateQuery)).toEqual({
      webhookId: webhook.id,
      accountId: account.id,
      status: 'active',
      pausedReason: null,
      consecutiveFailures: 0,
      failuresCounted: 0,
    });
  });

  it('treats the normalised url as the identity: registering it again answers 200, same id, no secret, pinged with the same secret', async () => {
    const account = await suite.stack.createAccount();
    const { port } = suite.receiver;
    const created = await register(account.token, {
      url: `https://127.0.0.1:${port}/hooks/same`,
      events: ['item.added', 'item.checked'],
    });
    expect(created.status).toBe(201);
    const lifecycle = suite.stack.lifecycle(created.body.id);
    const { runId } = await lifecycle.describe();

    // Same URL after WHATWG normalisation; events omitted, so they return to the default.
    const updated = await register(account.token, { url: `HTTPS://127.0.0.1:${port}/hooks/x/../same` });
    expect(updated.status).toBe(200);
    expect(updated.body).not.toHaveProperty('secret');
    expect(updated.body).toMatchObject({
      id: created.body.id,
      url: `https://127.0.0.1:${port}/hooks/same`,
      events: ['list.changed'],
      listIds: [],
      createdAt: created.body.createdAt,
    });
    expect(await webhookRows(account.id)).toHaveLength(1);

    const pings = pingsTo('/hooks/same');
    expect(pings).toHaveLength(2);
    for (const ping of pings) {
      expect(verifySignature(ping.rawBody, ping.headers['svc-signature'] as string, created.body.secret)).toBe(true);
    }
    // The per-webhook workflow is kept, not restarted.
    expect((await lifecycle.describe()).runId).toBe(runId);
  });

  it('lets two accounts register the same url as two webhooks', async () => {
    const [first, second] = [await suite.stack.createAccount(), await suite.stack.createAccount()];
    const url = suite.receiver.urlFor('/hooks/shared');
    const a = await register(first.token, { url });
    const b = await register(second.token, { url });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.id).not.toBe(b.body.id);
    expect(a.body.secret).not.toBe(b.body.secret);
  });

  it('stores events and owned listIds as given', async () => {
    const account = await suite.stack.createAccount();
    expect((await suite.stack.putList('list-own-1', account.id)).status).toBe(201);
    expect((await suite.stack.putList('list-own-2', account.id)).status).toBe(201);
    const response = await register(account.token, {
      url: suite.receiver.urlFor('/hooks/filtered'),
      events: ['item.removed', 'list.members.changed'],
      listIds: ['list-own-2', 'list-own-1'],
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ events: ['item.removed', 'list.members.changed'], listIds: ['list-own-2', 'list-own-1'] });
  });
});

describe('POST /v3/webhooks: rejections', () => {
  it('answers 401 UNAUTHORIZED with WWW-Authenticate for a missing, malformed or unknown token, before reading the body', async () => {
    const cases: { token?: string; headers?: Record<string, string> }[] = [
      {},
      { headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      { headers: { authorization: 'Bearer' } },
      { token: 'tok_unknown' },
    ];
    for (const { token, headers } of cases) {
      const response = await suite.stack.request('POST', '/v3/webhooks', {
        token,
        headers: { ...headers, 'content-type': 'application/json' },
        rawBody: '{not json',
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
    }
  });

  it('answers 400 MALFORMED_JSON, 415 for non-JSON and 413 over 64 KiB', async () => {
    const { token } = await suite.stack.createAccount();
    const malformed = await suite.stack.request('POST', '/v3/webhooks', {
      token,
      rawBody: '{"url": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('MALFORMED_JSON');

    const text = await suite.stack.request('POST', '/v3/webhooks', {
      token,
      rawBody: 'url=https://example.com',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');

    const large = await register(token, { url: suite.receiver.urlFor('/hooks/large'), padding: 'x'.repeat(65 * 1024) });
    expect(large.status).toBe(413);
    expect(large.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it.each([
    ['a missing body', undefined, '/'],
    ['a missing url', { events: ['list.changed'] }, '/url'],
    ['an unknown field', { url: 'https://example.com/', secret: 'mine' }, '/secret'],
    ['a non-string url', { url: 42 }, '/url'],
    ['a url over 2048 characters', { url: `https://example.com/${'a'.repeat(2030)}` }, '/url'],
    ['an unknown topic', { url: 'https://example.com/', events: ['list.deleted'] }, '/events/0'],
    ['an empty events array', { url: 'https://example.com/', events: [] }, '/events'],
    ['duplicate events', { url: 'https://example.com/', events: ['item.added', 'item.added'] }, '/events'],
    ['51 listIds', { url: 'https://example.com/', listIds: Array.from({ length: 51 }, (_, i) => `l${i}`) }, '/listIds'],
    ['a non-string list id', { url: 'https://example.com/', listIds: [7] }, '/listIds/0'],
  ])('answers 400 VALIDATION_FAILED for %s', async (_name, body, path) => {
    const { token } = await suite.stack.createAccount();
    const response = await register(token, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: { code: 'VALIDATION_FAILED', message: expect.any(String), details: [{ path, message: expect.any(String) }] },
    });
  });

  it.each([
    ['http://127.0.0.1/hook', 'scheme'],
    ['ftp://example.com/hook', 'scheme'],
    ['https://user:pass@example.com/hook', 'credentials'],
    ['https://10.0.0.1/hook', 'blocked_address'],
    ['https://169.254.169.254/latest/meta-data', 'blocked_address'],
    ['https://[::ffff:192.168.1.1]/hook', 'blocked_address'],
    ['https://0x0a000001/hook', 'blocked_address'],
    ['https://nothing-here.invalid/hook', 'invalid_host'],
    ['not a url', 'invalid_host'],
  ])('answers 400 URL_NOT_ALLOWED for %s (%s)', async (url, reason) => {
    const { token } = await suite.stack.createAccount();
    const response = await register(token, { url });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: { code: 'URL_NOT_ALLOWED', message: expect.any(String), reason } });
  });

  it('answers 400 INVALID_LIST_IDS naming every unknown or not-owned list, and sends no ping', async () => {
    const [owner, other] = [await suite.stack.createAccount(), await suite.stack.createAccount()];
    await suite.stack.putList('list-mine', owner.id);
    await suite.stack.putList('list-theirs', other.id, [owner.id]);
    const response = await register(owner.token, {
      url: suite.receiver.urlFor('/hooks/invalid-lists'),
      listIds: ['list-mine', 'list-theirs', 'list-unknown'],
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: { code: 'INVALID_LIST_IDS', message: expect.any(String), invalidListIds: ['list-theirs', 'list-unknown'] },
    });
    expect(pingsTo('/hooks/invalid-lists')).toHaveLength(0);
    expect(await webhookRows(owner.id)).toHaveLength(0);
  });

  it('answers 409 WEBHOOK_LIMIT_EXCEEDED for a sixth webhook but still updates the five', async () => {
    const account = await suite.stack.createAccount();
    for (let i = 0; i < 5; i++) {
      expect((await register(account.token, { url: suite.receiver.urlFor(`/hooks/limit/${i}`) })).status).toBe(201);
    }
    const sixth = await register(account.token, { url: suite.receiver.urlFor('/hooks/limit/5') });
    expect(sixth.status).toBe(409);
    expect(sixth.body.error.code).toBe('WEBHOOK_LIMIT_EXCEEDED');
    expect(pingsTo('/hooks/limit/5')).toHaveLength(0);

    const again = await register(account.token, { url: suite.receiver.urlFor('/hooks/limit/0'), events: ['item.added'] });
    expect(again.status).toBe(200);
    expect(await webhookRows(account.id)).toHaveLength(5);
  });

  it('checks in the contract order: schema, URL policy, webhook count, listIds, then the ping', async () => {
    const account = await suite.stack.createAccount();
    for (let i = 0; i < 5; i++) await register(account.token, { url: suite.receiver.urlFor(`/hooks/order/${i}`) });
    const blocked = 'https://10.1.2.3/hook';
    const fresh = suite.receiver.urlFor('/hooks/order/new');

    const schemaFirst = await register(account.token, { url: blocked, events: ['nope'], listIds: ['unknown'] });
    expect(schemaFirst.body.error.code).toBe('VALIDATION_FAILED');
    const urlSecond = await register(account.token, { url: blocked, listIds: ['unknown'] });
    expect(urlSecond.body.error.code).toBe('URL_NOT_ALLOWED');
    const countThird = await register(account.token, { url: fresh, listIds: ['unknown'] });
    expect(countThird.body.error.code).toBe('WEBHOOK_LIMIT_EXCEEDED');
    const listsFourth = await register(account.token, { url: suite.receiver.urlFor('/hooks/order/0'), listIds: ['unknown'] });
    expect(listsFourth.body.error.code).toBe('INVALID_LIST_IDS');
    expect(pingsTo('/hooks/order/new')).toHaveLength(0);
    expect(pingsTo('/hooks/order/0')).toHaveLength(1);
  });
});

describe('POST /v3/webhooks: an unreachable url', () => {
  it('answers 422 WEBHOOK_UNREACHABLE with the status code when the ping gets a non-2xx, and stores nothing', async () => {
    const account = await suite.stack.createAccount();
    suite.receiver.respondWith((request) => (request.path === '/hooks/500' ? { status: 500 } : {}));
    const response = await register(account.token, { url: suite.receiver.urlFor('/hooks/500') });
    suite.receiver.respondWith({});
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      error: { code: 'WEBHOOK_UNREACHABLE', message: expect.any(String), reason: 'non_2xx', statusCode: 500 },
    });
    expect(pingsTo('/hooks/500')).toHaveLength(1);
    expect(await webhookRows(account.id)).toHaveLength(0);
  });

  it('does not follow a redirect: 422 with reason redirect, and the target is never requested', async () => {
    const account = await suite.stack.createAccount();
    suite.receiver.respondWith((request) =>
      request.path === '/hooks/moved' ? { status: 302, headers: { location: suite.receiver.urlFor('/hooks/target') } } : {},
    );
    const response = await register(account.token, { url: suite.receiver.urlFor('/hooks/moved') });
    suite.receiver.respondWith({});
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({ code: 'WEBHOOK_UNREACHABLE', reason: 'redirect', statusCode: 302 });
    expect(pingsTo('/hooks/target')).toHaveLength(0);
  });

  it('answers 422 with reason connection when nothing listens, and timeout when the receiver never answers', async () => {
    const account = await suite.stack.createAccount();
    const refused = await register(account.token, { url: `https://127.0.0.1:${await freePort()}/hook` });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toEqual({ code: 'WEBHOOK_UNREACHABLE', message: expect.any(String), reason: 'connection' });

    suite.receiver.respondWith((request) => (request.path === '/hooks/silent' ? { hang: true } : {}));
    const silent = await register(account.token, { url: suite.receiver.urlFor('/hooks/silent') });
    suite.receiver.respondWith({});
    expect(silent.status).toBe(422);
    expect(silent.body.error).toMatchObject({ code: 'WEBHOOK_UNREACHABLE', reason: 'timeout' });
    expect(await webhookRows(account.id)).toHaveLength(0);
  });

  it('leaves an existing webhook unchanged when its re-registration ping fails', async () => {
    const account = await suite.stack.createAccount();
    const url = suite.receiver.urlFor('/hooks/flaky');
    const created = await register(account.token, { url, events: ['item.added'] });
    expect(created.status).toBe(201);
    suite.receiver.respondWith((request) => (request.path === '/hooks/flaky' ? { status: 503 } : {}));
    const failed = await register(account.token, { url, events: ['item.removed'] });
    suite.receiver.respondWith({});
    expect(failed.status).toBe(422);
    expect(await webhookRows(account.id)).toEqual([{ id: created.body.id, url, events: ['item.added'] }]);
  });
});

describe('POST /v3/webhooks: concurrency', () => {
  it('makes one webhook of ten concurrent registrations of one url', async () => {
    const account = await suite.stack.createAccount();
    const url = suite.receiver.urlFor('/hooks/race');
    const responses = await Promise.all(Array.from({ length: 10 }, () => register(account.token, { url })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    expect(responses.filter((r) => 'secret' in r.body)).toHaveLength(1);
    expect(await webhookRows(account.id)).toHaveLength(1);
  });

  it('never makes a sixth webhook from concurrent registrations of new urls', async () => {
    const account = await suite.stack.createAccount();
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => register(account.token, { url: suite.receiver.urlFor(`/hooks/burst/${i}`) })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    expect(await webhookRows(account.id)).toHaveLength(5);
  });
});
