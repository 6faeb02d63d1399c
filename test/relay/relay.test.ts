// Relay sessions against the real stack: a session is a webhook whose deliveries, pings and
// test events are signed and logged as any other's and handed over a WebSocket connection;
// the answer the connection sends is the outcome. The connection here is the test's own
// (test/support/relay-client.ts); test/cli forwards through `svc-webhooks listen`.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { TOPICS } from '../../src/topics';
import { connectRelay, openRelayConnection, relayedRequests } from '../support/relay-client';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

// Sessions closed for 2 s are deleted: the grace the tests wait out.
const suite = useStackWithReceiver({ RELAY_GRACE_SECONDS: '2' });

async function sessionOf(body: Record<string, unknown> = {}) {
  const owner = await suite.stack.createAccount();
  const created = await suite.stack.request('POST', '/v3/relay-sessions', { token: owner.token, body });
  expect(created.status).toBe(201);
  return { owner, token: owner.token, session: created.body };
}

const connect = (token: string, webhookId: string) =>
  connectRelay((method, path, options) => suite.stack.request(method, path, options), suite.stack.service.url, token, webhookId);

const logOf = async (token: string, webhookId: string, query = '') =>
  (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries${query}`, { token })).body.data;

describe('POST /v3/relay-sessions', () => {
  it('makes a webhook with relay: true, named relay://{id}, on every topic, with its secret shown once', async () => {
    const { token, session } = await sessionOf();
    expect(session).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: `relay://${session.id}`,
      events: [...TOPICS],
      listIds: [],
      status: 'active',
      pausedReason: null,
      consecutiveFailures: 0,
      relay: true,
      secret: expect.stringMatching(/^whsec_/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      health: { delivered24h: 0, failed24h: 0, skipped24h: 0, lastDeliveredAt: null, lastFailedAt: null },
      auth: null,
      clientCertificate: null,
    });
    const listed = await suite.stack.request('GET', '/v3/webhooks', { token });
    expect(listed.body.data).toEqual([{ ...session, secret: undefined }].map(({ secret: _, ...webhook }) => webhook));
  });

  it('allows two sessions an account, refuses a third with 409 RELAY_LIMIT_EXCEEDED, and counts none against the webhooks', async () => {
    const { owner, token } = await sessionOf({ events: ['list.changed'] });
    expect((await suite.stack.request('POST', '/v3/relay-sessions', { token })).status).toBe(201);
    const third = await suite.stack.request('POST', '/v3/relay-sessions', { token });
    expect(third.status).toBe(409);
    expect(third.body.error).toMatchObject({ code: 'RELAY_LIMIT_EXCEEDED' });
    for (let i = 0; i < 5; i += 1) await suite.stack.registerWebhook(owner.token, suite.receiver.urlFor(`/relay/limit/${i}`));
    expect((await suite.stack.request('GET', '/v3/webhooks', { token })).body.data).toHaveLength(7);
  });

  it('refuses a list the account does not own, a status for a session, and a connection ticket for a webhook that is no session', async () => {
    const { owner, token, session } = await sessionOf();
    const badList = await suite.stack.request('POST', '/v3/relay-sessions', { token, body: { listIds: ['not-mine'] } });
    expect(badList.status).toBe(400);
    expect(badList.body.error).toMatchObject({ code: 'INVALID_LIST_IDS', invalidListIds: ['not-mine'] });
    const paused = await suite.stack.request('PATCH', `/v3/webhooks/${session.id}`, { token, body: { status: 'paused' } });
    expect(paused.status).toBe(409);
    expect(paused.body.error.code).toBe('RELAY_SESSION');
    const webhook = await suite.stack.registerWebhook(owner.token, suite.receiver.urlFor('/relay/not-a-session'));
    const ticket = await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/relay-connections`, { token });
    expect(ticket.status).toBe(409);
    expect(ticket.body.error.code).toBe('NOT_A_RELAY_SESSION');
  });
});

describe('a connected session', () => {
  it('gets each matching delivery signed with its secret, and its answer is the outcome in the log', async () => {
    const { owner, token, session } = await sessionOf({ events: ['item.added'] });
    const listId = `relay-${randomBytes(4).toString('hex')}`;
    await suite.stack.putList(listId, owner.id);
    const connection = await connect(token, session.id);
    connection.answerWith({ status: 202, headers: { 'X-Local': 'yes' }, body: 'thanks' });

    await suite.stack.reportWrite(listId, 'w1', [{ type: 'item.added' }, { type: 'item.checked' }]);
    const [request] = await relayedRequests(connection, 1);
    expect(JSON.parse(request.body)).toMatchObject({ event: 'item.added', listId, cursor: 1 });
    expect(request.headers).toMatchObject({ 'svc-event': 'item.added', 'svc-webhook': session.id, 'content-type': 'application/json' });
    expect(verifySignature(Buffer.from(request.body), request.headers['svc-signature'], session.secret)).toBe(true);

    const [entry] = await logOf(token, session.id);
    expect(entry).toMatchObject({ id: request.headers['svc-delivery'], kind: 'event', outcome: 'delivered', statusCode: 202, error: null });
    const detail = await suite.stack.request('GET', `/v3/webhooks/${session.id}/deliveries/${entry.id}`, { token });
    expect(detail.body.request).toEqual({ url: `relay://${session.id}`, headers: request.headers, body: request.body });
    expect(detail.body.response).toEqual({ statusCode: 202, headers: { 'x-local': 'yes' }, body: 'thanks', bodyTruncated: false });
    expect(connection.requests).toHaveLength(1); // item.checked is not the session's
    await connection.close();
  });

  it('gets pings and test events, whose answers the API returns', async () => {
    const { token, session } = await sessionOf();
    const connection = await connect(token, session.id);
    const ping = await suite.stack.request('POST', `/v3/webhooks/${session.id}/pings`, { token });
    expect(ping.body).toMatchObject({ delivered: true, statusCode: 200, error: null });
    connection.answerWith({ error: 'connection' });
    const test = await suite.stack.request('POST', `/v3/webhooks/${session.id}/test-events`, { token, body: { event: 'item.checked' } });
    expect(test.body).toMatchObject({ delivered: false, statusCode: null, error: 'connection' });
    const [pinged, tested] = connection.requests;
    expect(pinged.headers['svc-event']).toBe('ping');
    expect(tested.headers).toMatchObject({ 'svc-event': 'item.checked', 'svc-test': '1' });
    await connection.close();
  });

  it('never pauses: its failures are logged, not counted', async () => {
    const { owner, token, session } = await sessionOf({ events: ['item.added'] });
    const listId = `relay-${randomBytes(4).toString('hex')}`;
    await suite.stack.putList(listId, owner.id);
    const connection = await connect(token, session.id);
    connection.answerWith({ status: 500, body: 'local bug' });
    for (let i = 1; i <= 21; i += 1) await suite.stack.reportWrite(listId, `fail-${i}`);
    const log = await logOf(token, session.id, '?outcome=failed&limit=100');
    expect(log).toHaveLength(21);
    expect(log[0]).toMatchObject({ statusCode: 500, error: 'non_2xx' });
    const webhook = await suite.stack.request('GET', `/v3/webhooks/${session.id}`, { token });
    expect(webhook.body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    await expect(suite.stack.lifecycle(session.id).describe()).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });
    await connection.close();
  });

  it('keeps the first 4 KiB of a long answer, as for any receiver', async () => {
    const { token, session } = await sessionOf();
    const connection = await connect(token, session.id);
    connection.answerWith({ status: 200, body: 'é'.repeat(3000) });
    const { body: sent } = await suite.stack.request('POST', `/v3/webhooks/${session.id}/test-events`, {
      token,
      body: { event: 'list.changed' },
    });
    const detail = await suite.stack.request('GET', `/v3/webhooks/${session.id}/deliveries/${sent.deliveryId}`, { token });
    expect(detail.body.response.body).toBe('é'.repeat(2048));
    expect(detail.body.response.bodyTruncated).toBe(true);
    await connection.close();
  });

  it('closes a connection that sends what is not an answer', async () => {
    const { token, session } = await sessionOf();
    const connection = await connect(token, session.id);
    connection.socket.send('{"type":"answer","id":"x","statusCode":"200"}');
    expect(await connection.closed).toBe(1008);
  });
});

describe('without a connection', () => {
  it('fails each delivery at once with relay_disconnected, before the first connection and after the last', async () => {
    const { token, session } = await sessionOf();
    const before = await suite.stack.request('POST', `/v3/webhooks/${session.id}/pings`, { token });
    expect(before.body).toMatchObject({ delivered: false, statusCode: null, error: 'relay_disconnected' });
    const connection = await connect(token, session.id);
    await connection.close();
    const after = await suite.stack.request('POST', `/v3/webhooks/${session.id}/pings`, { token });
    expect(after.body).toMatchObject({ delivered: false, error: 'relay_disconnected' });
  });

  it('fails a delivery handed over when the connection closes before answering', async () => {
    const { token, session } = await sessionOf();
    const connection = await connect(token, session.id);
    connection.answerWith('silence');
    const ping = suite.stack.request('POST', `/v3/webhooks/${session.id}/pings`, { token });
    await relayedRequests(connection, 1);
    connection.socket.terminate();
    expect((await ping).body).toMatchObject({ delivered: false, error: 'relay_disconnected' });
  });

  it('keeps the session and its secret for a connection that comes back within the grace, and deletes it after', async () => {
    const { token, session } = await sessionOf();
    const first = await connect(token, session.id);
    await first.close();
    const again = await connect(token, session.id);
    await suite.stack.request('POST', `/v3/webhooks/${session.id}/pings`, { token });
    const [ping] = await relayedRequests(again, 1);
    expect(verifySignature(Buffer.from(ping.body), ping.headers['svc-signature'], session.secret)).toBe(true);
    await again.close();
    await waitFor(
      async () => ((await suite.stack.request('GET', `/v3/webhooks/${session.id}`, { token })).status === 404 ? true : undefined),
      {
        what: 'the closed session deleted',
      },
    );
  });

  it('hands deliveries to the newest connection, and closes the one it replaced', async () => {
    const { token, session } = await sessionOf();
    const older = await connect(token, session.id);
    const newer = await connect(token, session.id);
    expect(await older.closed).toBe(4409);
    await suite.stack.request('POST', `/v3/webhooks/${session.id}/pings`, { token });
    await relayedRequests(newer, 1);
    expect(older.requests).toHaveLength(0);
    await newer.close();
  });

  it('closes the connection of a session its owner deletes', async () => {
    const { token, session } = await sessionOf();
    const connection = await connect(token, session.id);
    expect((await suite.stack.request('DELETE', `/v3/webhooks/${session.id}`, { token })).status).toBe(204);
    expect(await connection.closed).toBe(4404);
  });
});

describe('GET /v3/relay-connections/{ticket}', () => {
  it('opens one connection per ticket: a used, unknown or malformed ticket is refused', async () => {
    const { token, session } = await sessionOf();
    const issued = await suite.stack.request('POST', `/v3/webhooks/${session.id}/relay-connections`, { token });
    expect(issued.status).toBe(201);
    expect(issued.body).toEqual({ ticket: expect.stringMatching(/^rt_[A-Za-z0-9_-]{43}$/), expiresAt: expect.any(String) });
    const connection = await openRelayConnection(suite.stack.service.url, issued.body.ticket);
    await expect(openRelayConnection(suite.stack.service.url, issued.body.ticket)).rejects.toThrow('HTTP 401');
    await expect(openRelayConnection(suite.stack.service.url, `rt_${'a'.repeat(43)}`)).rejects.toThrow('HTTP 401');
    await expect(openRelayConnection(suite.stack.service.url, 'nonsense')).rejects.toThrow('HTTP 404');
    await connection.close();
  });

  it("refuses another account's session its tickets", async () => {
    const { session } = await sessionOf();
    const stranger = await suite.stack.createAccount();
    const issued = await suite.stack.request('POST', `/v3/webhooks/${session.id}/relay-connections`, { token: stranger.token });
    expect(issued.status).toBe(404);
  });
});
