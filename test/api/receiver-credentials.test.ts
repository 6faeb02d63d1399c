// Receivers behind gateways (docs/api.md, "Receivers behind gateways"), on the whole stack over
// real HTTPS with the test's CA: receivers that refuse a request without a header, a bearer token
// from a real token endpoint, or a client certificate; every kind of request presents them; the
// API validates them exactly and never answers one back; the audit log records the change only.
import { X509Certificate, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestCa, issueClientCert, issueServerCert } from '../../scripts/lib/tls';
import type { Receiver, ReceivedRequest, Reply } from '../support/receiver';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();

/** A receiver that answers 401 to any request without `name: value`. */
async function receiverRequiring(name: string, value: string): Promise<Receiver> {
  const receiver = await suite.stack.startReceiver();
  receiver.respondWith((request) => (request.headers[name.toLowerCase()] === value ? {} : { status: 401 }));
  return receiver;
}

/**
 * A real OAuth2 token endpoint (client credentials, client_secret_basic) and a receiver that
 * accepts only the tokens it issued and has not revoked.
 */
async function oauth2Pair(clientId: string, clientSecret: string, { expiresIn = 3600 }: { expiresIn?: number } = {}) {
  const tokenEndpoint = await suite.stack.startReceiver();
  const receiver = await suite.stack.startReceiver();
  const valid = new Set<string>();
  // RFC 6749 §2.3.1: the id and the secret each form-encoded (a colon in the id becomes %3A), then joined.
  const expectedBasic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
  tokenEndpoint.respondWith((request) => {
    const form = new URLSearchParams(request.rawBody.toString('utf8'));
    if (request.headers.authorization !== expectedBasic || form.get('grant_type') !== 'client_credentials') {
      return { status: 401, body: '{"error":"invalid_client"}', headers: { 'content-type': 'application/json' } };
    }
    const token = `at-${randomBytes(12).toString('hex')}`;
    valid.add(token);
    return {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: expiresIn }),
    };
  });
  receiver.respondWith((request) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    return token !== undefined && valid.has(token) ? {} : { status: 401 };
  });
  return { tokenEndpoint, receiver, revokeAll: () => valid.clear() };
}

/** The reasons the service's log gives for the tokens `tokenEndpoint` did not give, once there are `count`. */
function tokenFailuresLogged(tokenEndpoint: Receiver, count: number): Promise<string[]> {
  const origin = new URL(tokenEndpoint.urlFor('/')).origin;
  return waitFor(
    async () => {
      const reasons = suite.stack.logs
        .map((line) => JSON.parse(line) as { msg?: string; tokenUrl?: string; reason?: string })
        .filter((entry) => entry.msg === 'no OAuth2 token for the webhook' && entry.tokenUrl === origin)
        .map((entry) => String(entry.reason));
      return reasons.length >= count ? reasons : undefined;
    },
    { what: `${count} token failures logged` },
  );
}

const oauth2 = (tokenEndpoint: Receiver, clientId: string, clientSecret: string, extra: Record<string, string> = {}) => ({
  type: 'oauth2',
  tokenUrl: tokenEndpoint.urlFor('/oauth/token'),
  clientId,
  clientSecret,
  ...extra,
});

/** A new account's token, a list it owns, and what delivering to it takes. */
async function owner() {
  const account = await suite.stack.createAccount();
  const listId = `creds-${randomBytes(6).toString('hex')}`;
  await suite.stack.putList(listId, account.id);
  return { ...account, listId };
}

const register = (token: string, body: Record<string, unknown>) => suite.stack.request('POST', '/v3/webhooks', { token, body });
const patch = (token: string, id: string, body: Record<string, unknown>) =>
  suite.stack.request('PATCH', `/v3/webhooks/${id}`, { token, body });

/** Every kind of request an owner can make happen: an event delivery, a ping, a test event and a redelivery. */
async function sendEveryKind(token: string, webhookId: string, listId: string, writeId: string) {
  await suite.stack.reportWrite(listId, writeId);
  const ping = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
  const test = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/test-events`, { token, body: { event: 'list.changed' } });
  const [event] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event`, { token })).body.data;
  expect(event).toMatchObject({ outcome: 'delivered' });
  const redelivery = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${event.id}/redeliveries`, { token });
  return { ping: ping.body, test: test.body, redelivery: redelivery.body };
}

const byWebhook = (receiver: Receiver, webhookId: string): ReceivedRequest[] =>
  receiver.requests.filter((request) => request.headers['svc-webhook'] === webhookId);

describe('validation of auth and clientCertificate', () => {
  it('refuses each way of being wrong with 400 VALIDATION_FAILED at its path, on POST and on PATCH', async () => {
    const { token } = await owner();
    const url = suite.receiver.urlFor('/creds/validation');
    const ca = suite.stack.ca;
    const [one, other] = await Promise.all([issueClientCert(ca, 'one'), issueClientCert(ca, 'other')]);
    const headers = (entries: Record<string, string>) => ({ auth: { type: 'headers', headers: entries } });
    const cases: [Record<string, unknown>, string][] = [
      [headers({}), '/auth/headers'],
      [headers(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, 'v']))), '/auth/headers'],
      [headers({ 'Bad Name': 'v' }), '/auth/headers/Bad Name'],
      [headers({ 'X-Key(1)': 'v' }), '/auth/headers/X-Key(1)'],
      [headers({ 'content-TYPE': 'text/plain' }), '/auth/headers/content-TYPE'],
      [headers({ HOST: 'example.com' }), '/auth/headers/HOST'],
      [headers({ 'User-Agent': 'me' }), '/auth/headers/User-Agent'],
      [headers({ 'svc-signature': 'x' }), '/auth/headers/svc-signature'],
      [headers({ 'X-Key': 'a', 'x-key': 'b' }), '/auth/headers/x-key'],
      [headers({ 'X-Key': '' }), '/auth/headers/X-Key'],
      [headers({ 'X-Key': 'a\nb' }), '/auth/headers/X-Key'],
      [headers({ 'X-Key': 'a\u0000' }), '/auth/headers/X-Key'],
      [headers({ 'X-Key': 'k'.repeat(1025) }), '/auth/headers/X-Key'],
      [{ auth: { type: 'basic' } }, '/auth/type'],
      [{ auth: { type: 'headers', headers: { 'X-Key': 'v' }, extra: 1 } }, '/auth/extra'],
      [{ auth: { type: 'oauth2', tokenUrl: 'http://auth.example/token', clientId: 'c', clientSecret: 's' } }, '/auth/tokenUrl'],
      [{ auth: { type: 'oauth2', tokenUrl: 'https://u:p@auth.example/token', clientId: 'c', clientSecret: 's' } }, '/auth/tokenUrl'],
      [{ auth: { type: 'oauth2', tokenUrl: 'https://auth.example/token', clientId: 'c' } }, '/auth/clientSecret'],
      [{ auth: { type: 'oauth2', tokenUrl: 'https://auth.example/token', clientId: '', clientSecret: 's' } }, '/auth/clientId'],
      [{ clientCertificate: { certificate: 'not a certificate', privateKey: one.key } }, '/clientCertificate/certificate'],
      [{ clientCertificate: { certificate: one.cert, privateKey: 'not a key' } }, '/clientCertificate/privateKey'],
      [{ clientCertificate: { certificate: one.cert, privateKey: other.key } }, '/clientCertificate/privateKey'],
      [{ clientCertificate: { certificate: one.cert } }, '/clientCertificate/privateKey'],
    ];
    const created = await register(token, { url });
    expect(created.status).toBe(201);
    for (const [body, path] of cases) {
      for (const response of [await register(token, { url, ...body }), await patch(token, created.body.id, body)]) {
        expect(response.status, JSON.stringify(body).slice(0, 200)).toBe(400);
        expect(response.body.error.code).toBe('VALIDATION_FAILED');
        expect(response.body.error.details[0].path, JSON.stringify(body).slice(0, 200)).toBe(path);
      }
    }
    // A token URL the SSRF policy refuses is refused as the receiver's would be.
    const blocked = await register(token, {
      url,
      auth: { type: 'oauth2', tokenUrl: 'https://169.254.169.254/token', clientId: 'c', clientSecret: 's' },
    });
    expect(blocked.status).toBe(400);
    expect(blocked.body.error.details[0].path).toBe('/auth/tokenUrl');
    // Nothing of any of them was stored.
    expect((await suite.stack.request('GET', `/v3/webhooks/${created.body.id}`, { token })).body).toMatchObject({
      auth: null,
      clientCertificate: null,
    });
  });
});

describe('a receiver that requires a header', () => {
  it('gets it on the ping, events, pings, test events and redeliveries; the API and the log never show its value', async () => {
    const value = `key-${randomBytes(16).toString('hex')}`;
    const receiver = await receiverRequiring('X-Api-Key', value);
    const { token, listId } = await owner();
    const url = receiver.urlFor('/headers');

    const refused = await register(token, { url });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'WEBHOOK_UNREACHABLE', statusCode: 401 });

    const created = await register(token, { url, auth: { type: 'headers', headers: { 'X-Api-Key': value, 'X-Tenant': 'acme' } } });
    expect(created.status).toBe(201);
    expect(created.body.auth).toEqual({ type: 'headers', headerNames: ['X-Api-Key', 'X-Tenant'] });
    expect(JSON.stringify(created.body)).not.toContain(value);
    const webhookId = created.body.id as string;

    const sent = await sendEveryKind(token, webhookId, listId, 'headers');
    expect([sent.ping.delivered, sent.test.delivered, sent.redelivery.delivered]).toEqual([true, true, true]);
    const requests = byWebhook(receiver, webhookId);
    expect(requests.map((request) => request.headers['svc-event'])).toEqual([
      'ping',
      'list.changed',
      'ping',
      'list.changed',
      'list.changed',
    ]);
    for (const request of requests) expect([request.headers['x-api-key'], request.headers['x-tenant']]).toEqual([value, 'acme']);

    // What was sent, as the log shows it: the header named, its value redacted.
    const log = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token })).body.data;
    expect(log).toHaveLength(4);
    for (const entry of log) {
      const detail = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries/${entry.id}`, { token })).body;
      expect(detail.request.headers).toMatchObject({ 'x-api-key': '[redacted]', 'x-tenant': '[redacted]' });
      expect(JSON.stringify(detail)).not.toContain(value);
    }
    const listed = await suite.stack.request('GET', '/v3/webhooks', { token });
    expect(JSON.stringify(listed.body)).not.toContain(value);

    // Registered again without auth: it keeps its own, and the ping presents it.
    const again = await register(token, { url });
    expect(again.status).toBe(200);
    expect(again.body.auth).toEqual({ type: 'headers', headerNames: ['X-Api-Key', 'X-Tenant'] });
  });
});

describe('a receiver behind an OAuth2 token endpoint', () => {
  it('gets a bearer token on every request, fetched once and fetched again once after a 401', async () => {
    const clientSecret = `cs-${randomBytes(16).toString('hex')}`;
    const { tokenEndpoint, receiver, revokeAll } = await oauth2Pair('sender:one', clientSecret);
    const { token, listId } = await owner();
    const auth = oauth2(tokenEndpoint, 'sender:one', clientSecret, { scope: 'webhooks.write' });

    const created = await register(token, { url: receiver.urlFor('/oauth2'), auth });
    expect(created.status).toBe(201);
    expect(created.body.auth).toEqual({
      type: 'oauth2',
      tokenUrl: tokenEndpoint.urlFor('/oauth/token'),
      clientId: 'sender:one',
      scope: 'webhooks.write',
      audience: null,
    });
    expect(JSON.stringify(created.body)).not.toContain(clientSecret);
    const webhookId = created.body.id as string;

    const sent = await sendEveryKind(token, webhookId, listId, 'oauth2');
    expect([sent.ping.delivered, sent.test.delivered, sent.redelivery.delivered]).toEqual([true, true, true]);
    // One token for the registration's ping and all that followed.
    expect(tokenEndpoint.requests).toHaveLength(1);
    const [grant] = tokenEndpoint.requests;
    expect(grant.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(grant.rawBody.toString()))).toEqual({
      grant_type: 'client_credentials',
      scope: 'webhooks.write',
    });
    const bearer = byWebhook(receiver, webhookId).map((request) => request.headers.authorization);
    expect(bearer).toHaveLength(5);
    expect(new Set(bearer).size).toBe(1);

    // The receiver stops accepting it: the next delivery fetches a new one and is sent again with it.
    revokeAll();
    await suite.stack.reportWrite(listId, 'oauth2-after-revocation');
    expect(tokenEndpoint.requests).toHaveLength(2);
    const [latest] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event&limit=1`, { token })).body.data;
    expect(latest).toMatchObject({ outcome: 'delivered', statusCode: 200 });
    const afterRevocation = byWebhook(receiver, webhookId).slice(5);
    expect(afterRevocation.map((request) => request.headers.authorization)).toEqual([bearer[0], expect.not.stringMatching(bearer[0]!)]);
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body.consecutiveFailures).toBe(0);
  });

  it('fails a registration with 422 auth_failed, and a delivery with auth_failed, counted, when no token can be had', async () => {
    const { tokenEndpoint, receiver } = await oauth2Pair('sender:two', 'secret-two', { expiresIn: 30 });
    const { token, listId } = await owner();
    const url = receiver.urlFor('/oauth2/failing');
    const answers: Reply[] = [
      { status: 500, body: 'down' },
      { status: 200, body: 'not json at all', headers: { 'content-type': 'text/plain' } },
      { status: 200, body: JSON.stringify({ token_type: 'Bearer', expires_in: 60 }) },
      { status: 200, body: JSON.stringify({ access_token: 'x', token_type: 'mac' }) },
      { status: 302, headers: { location: receiver.urlFor('/elsewhere') } },
    ];
    for (const answer of answers) {
      tokenEndpoint.respondWith(answer);
      const refused = await register(token, { url, auth: oauth2(tokenEndpoint, 'sender:two', 'secret-two') });
      expect(refused.status, JSON.stringify(answer)).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'WEBHOOK_UNREACHABLE', reason: 'auth_failed' });
      expect(JSON.stringify(refused.body)).not.toContain('secret-two');
    }
    expect(receiver.requests).toHaveLength(0);
    // Each time, the worker's log says why, and names no credential.
    expect(await tokenFailuresLogged(tokenEndpoint, answers.length)).toEqual([
      'the token endpoint answered 500',
      'the token endpoint answered something other than JSON',
      'the answer holds no usable access_token',
      'the answer is not a bearer token',
      'the token endpoint answered 302',
    ]);
    expect(suite.stack.logs.join('\n')).not.toContain('secret-two');

    // Tokens of 30 s are never kept (30 s before expiry is now): each delivery fetches its own.
    const pair = await oauth2Pair('sender:two', 'secret-two', { expiresIn: 30 });
    const created = await register(token, {
      url: pair.receiver.urlFor('/oauth2/failing'),
      auth: oauth2(pair.tokenEndpoint, 'sender:two', 'secret-two'),
    });
    expect(created.status).toBe(201);
    pair.tokenEndpoint.respondWith({ status: 503 });
    await suite.stack.reportWrite(listId, 'auth-failed');
    const [failed] = (await suite.stack.request('GET', `/v3/webhooks/${created.body.id}/deliveries?kind=event`, { token })).body.data;
    expect(failed).toMatchObject({ outcome: 'failed', error: 'auth_failed', statusCode: null });
    await suite.stack.waitForFailureCount(token, created.body.id, 1);
    expect(pair.receiver.requests).toHaveLength(1); // the ping; the event was never sent
  });

  it('fails the ping with auth_failed when the token endpoint never answers within the deadline', async () => {
    const { tokenEndpoint, receiver } = await oauth2Pair('sender:slow', 'secret-slow');
    tokenEndpoint.respondWith({ hang: true });
    const { token } = await owner();
    const refused = await register(token, {
      url: receiver.urlFor('/oauth2/slow'),
      auth: oauth2(tokenEndpoint, 'sender:slow', 'secret-slow'),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'WEBHOOK_UNREACHABLE', reason: 'auth_failed' });
    expect(tokenEndpoint.requests).toHaveLength(1);
    expect(receiver.requests).toHaveLength(0);
    expect(await tokenFailuresLogged(tokenEndpoint, 1)).toEqual(['no answer within the delivery deadline']);
  });
});

describe('a receiver that requires a client certificate', () => {
  it('completes the handshake with the webhook’s certificate, on every request; without one nothing gets through', async () => {
    const { token, listId } = await owner();
    const receiver = await suite.stack.startReceiver({ clientCa: suite.stack.ca.cert });
    const url = receiver.urlFor('/mtls');
    const refused = await register(token, { url });
    expect(refused.status).toBe(422);
    expect(receiver.requests).toHaveLength(0);

    const client = await issueClientCert(suite.stack.ca, 'sender.example');
    const created = await register(token, { url, clientCertificate: { certificate: client.cert, privateKey: client.key } });
    expect(created.status).toBe(201);
    const parsed = new X509Certificate(client.cert);
    expect(created.body.clientCertificate).toEqual({
      subject: 'CN=sender.example',
      notAfter: new Date(parsed.validTo).toISOString(),
      fingerprintSha256: parsed.fingerprint256,
    });
    expect(JSON.stringify(created.body)).not.toContain('PRIVATE KEY');
    const webhookId = created.body.id as string;

    const sent = await sendEveryKind(token, webhookId, listId, 'mtls');
    expect([sent.ping.delivered, sent.test.delivered, sent.redelivery.delivered]).toEqual([true, true, true]);
    const requests = byWebhook(receiver, webhookId);
    expect(requests).toHaveLength(5);
    for (const request of requests) expect(request.clientCommonName).toBe('sender.example');

    // Removed: the next ping's handshake presents none, and fails.
    expect((await patch(token, webhookId, { clientCertificate: null })).body.clientCertificate).toBeNull();
    const ping = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
    expect(ping.body.delivered).toBe(false);
    expect(byWebhook(receiver, webhookId)).toHaveLength(5);
  });

  it('presents a certificate not issued by the CA the receiver trusts to no avail', async () => {
    const { token } = await owner();
    const receiver = await suite.stack.startReceiver({ clientCa: suite.stack.ca.cert });
    // A leaf of another CA: the receiver refuses the handshake.
    const stranger = await issueClientCert(await createTestCa(), 'stranger');
    const refused = await register(token, {
      url: receiver.urlFor('/mtls/stranger'),
      clientCertificate: { certificate: stranger.cert, privateKey: stranger.key },
    });
    expect(refused.status).toBe(422);
    expect(receiver.requests).toHaveLength(0);
    // A server certificate of the right CA is no help either: it is not for client authentication.
    const server = await issueServerCert(suite.stack.ca, ['sender.example']);
    const wrongUse = await register(token, {
      url: receiver.urlFor('/mtls/server-cert'),
      clientCertificate: { certificate: server.cert, privateKey: server.key },
    });
    expect(wrongUse.status).toBe(422);
  });
});

describe('changing credentials with PATCH', () => {
  it('sets, replaces and removes them, each recorded in the audit log as the kind and header names only', async () => {
    const { token } = await owner();
    const first = `v1-${randomBytes(8).toString('hex')}`;
    const second = `v2-${randomBytes(8).toString('hex')}`;
    const receiver = await suite.stack.startReceiver();
    const url = receiver.urlFor('/patched');
    const created = await register(token, { url });
    expect(created.status).toBe(201);
    const webhookId = created.body.id as string;
    receiver.respondWith((request) => (request.headers['x-api-key'] === second ? {} : { status: 401 }));
    const ping = async () => (await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token })).body;

    const set = await patch(token, webhookId, { auth: { type: 'headers', headers: { 'X-Api-Key': first } } });
    expect(set.status).toBe(200);
    expect(set.body.auth).toEqual({ type: 'headers', headerNames: ['X-Api-Key'] });
    expect(await ping()).toMatchObject({ delivered: false, statusCode: 401 });
    const replaced = await patch(token, webhookId, { auth: { type: 'headers', headers: { 'X-Api-Key': second } }, events: ['item.added'] });
    expect(replaced.body).toMatchObject({ auth: { type: 'headers', headerNames: ['X-Api-Key'] }, events: ['item.added'] });
    expect(await ping()).toMatchObject({ delivered: true });
    const removed = await patch(token, webhookId, { auth: null });
    expect(removed.body.auth).toBeNull();
    expect(await ping()).toMatchObject({ delivered: false, statusCode: 401 });

    const log = (await suite.stack.request('GET', '/v3/account/audit-log?action=webhook.updated', { token })).body.data;
    expect(log.map((entry: { details: unknown }) => entry.details).reverse()).toEqual([
      { auth: { type: 'headers', headerNames: ['X-Api-Key'] } },
      { events: ['item.added'], auth: { type: 'headers', headerNames: ['X-Api-Key'] } },
      { auth: null },
    ]);
    const everything = JSON.stringify((await suite.stack.request('GET', '/v3/account/audit-log', { token })).body);
    for (const value of [first, second]) expect(everything).not.toContain(value);
  });

  it('refuses credentials for a relay session, which delivers to its own machine', async () => {
    const { token } = await owner();
    const session = await suite.stack.request('POST', '/v3/relay-sessions', { token, body: {} });
    expect(session.status).toBe(201);
    const refused = await patch(token, session.body.id, { auth: { type: 'headers', headers: { 'X-Api-Key': 'k' } } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('RELAY_SESSION');
  });
});
