// Slow and idle clients (src/api/connections.ts): headers sent a byte at a time, bodies
// trickled, thousands of idle keep-alive connections, all from one address, against a stack
// with short time-outs and a small cap per address. Linux answers all of 127.0.0.0/8 on
// loopback: the attacker's sockets are bound to 127.0.0.2, the other client's come from
// 127.0.0.1. While each attack holds, the other client registers a webhook, writes to its
// list through the internal API and reads; each of its requests must be answered, each
// accepted write delivered to its HTTPS receiver; each attacking socket must end closed by
// the server (408, or refused as it was accepted), and each refusal counted.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sample } from '../support/metrics';
import { connectRelay, relayedRequests, type RelayConnection } from '../support/relay-client';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';
import { deliveryLedger, NO_MISMATCHES } from './support/delivery-ledger';
import { recordScenario, type ScenarioFigures } from './support/scenarios';

const MAX_CONNECTIONS_PER_ADDRESS = 8;
const suite = useStackWithReceiver({
  HTTP_HEADERS_TIMEOUT_MS: '2000',
  HTTP_REQUEST_TIMEOUT_MS: '4000',
  HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
  MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS_PER_ADDRESS),
});

const ATTACKER = '127.0.0.2';
/** The other client's writes (and as many reads) while an attack holds, at least. */
const WRITES = 5;
/** How often a trickling socket sends its next byte: far slower than any time-out lets a request take. */
const TRICKLE_EVERY_MS = 200;

/** One attacking socket: what the server sent it, and whether the server has closed it. */
interface AttackSocket {
  socket: net.Socket;
  received: string;
  closed: boolean;
}

interface Attack {
  sockets: AttackSocket[];
  /** Sockets closed without a byte: refused as they were accepted. */
  refused(): number;
  /** Stops replacing sockets and waits until the server has closed every one. */
  stop(): Promise<void>;
}

const attacks: Attack[] = [];
const relays: RelayConnection[] = [];
afterEach(async () => {
  // A test that failed may leave its sockets open: they would count against the next test's address.
  for (const attack of attacks.splice(0)) for (const { socket } of attack.sockets) socket.destroy();
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
});

const apiPort = () => Number(new URL(suite.stack.service.url).port);

/**
 * `count` sockets from `from`, each doing `begin` once connected; the attacker never closes
 * one. Each one the server admitted (it sent something before it closed it) is replaced until
 * stop(), so that the attacker keeps every slot the server gives it.
 */
function startAttack(count: number, begin: (socket: net.Socket) => void, from = ATTACKER): Attack {
  const sockets: AttackSocket[] = [];
  let holding = true;
  const open = () => {
    const socket = net.connect({ port: apiPort(), host: '127.0.0.1', localAddress: from });
    const entry: AttackSocket = { socket, received: '', closed: false };
    sockets.push(entry);
    socket.on('error', () => {}); // a refused socket may end in a reset
    socket.on('connect', () => begin(socket));
    socket.on('data', (chunk: Buffer) => (entry.received += chunk.toString('latin1')));
    socket.on('close', () => {
      entry.closed = true;
      if (holding && entry.received !== '') open();
    });
  };
  for (let i = 0; i < count; i++) open();
  const attack: Attack = {
    sockets,
    refused: () => sockets.filter(({ closed, received }) => closed && received === '').length,
    async stop() {
      holding = false;
      await waitFor(async () => (sockets.every(({ closed }) => closed) ? true : undefined), {
        what: 'the server to close every attacking socket',
      });
    },
  };
  attacks.push(attack);
  return attack;
}

/** Sends `complete` at once, then `slowly` a byte every TRICKLE_EVERY_MS, then an `a` every as often, until the socket closes. */
function trickle(socket: net.Socket, complete: string, slowly: string) {
  socket.write(complete);
  let sent = 0;
  const timer = setInterval(() => socket.write(slowly[sent++] ?? 'a'), TRICKLE_EVERY_MS);
  socket.on('close', () => clearInterval(timer));
}

const GET_HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/** The first line of what each socket got (`refused` for none), counted. */
function outcomes(attack: Attack): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { received } of attack.sockets) {
    const outcome = received === '' ? 'refused' : received.slice(0, received.indexOf('\r\n'));
    counts[outcome] = (counts[outcome] ?? 0) + 1;
  }
  return counts;
}

const refusedTotal = async () =>
  sample((await suite.stack.request('GET', '/metrics')).body, 'http_connections_refused_total', { reason: 'per_address' });

/**
 * The other client, from 127.0.0.1: a new account registers a webhook on the receiver (its
 * ping answered) for a list it owns, then writes to the list and reads the webhook, in turn,
 * WRITES times and on until `until()`. Each request must be answered as it should; returns
 * where the deliveries go and the cursors accepted.
 */
async function servedMeanwhile(row: ScenarioFigures, until: () => boolean) {
  const { stack, receiver } = suite;
  const path = `/slow-clients/${randomBytes(4).toString('hex')}`;
  const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor(path));
  const statuses: number[] = [];
  const cursors: number[] = [];
  for (let i = 0; i < WRITES || !until(); i++) {
    const write = await stack.request('POST', `/internal/v3/lists/${listId}/writes`, {
      token: stack.internalApiToken,
      body: { writeId: `w${i}`, changes: [{ type: 'item.added' }] },
    });
    const read = await stack.request('GET', `/v3/webhooks/${webhookId}`, { token: owner.token });
    statuses.push(write.status, read.status);
    if (write.status === 202) cursors.push(write.body.cursor as number);
  }
  row.requests = 3 + statuses.length; // the account, the registration and the list, then the writes and reads
  row.fiveXx = statuses.filter((status) => status >= 500).length;
  row.writesAccepted = cursors.length;
  expect(statuses).toEqual(Array.from({ length: statuses.length / 2 }, () => [202, 200]).flat());
  return { path, listId, cursors };
}

/** Waits until each accepted write reached the receiver, and holds the list's log to its plan: nothing lost. */
async function expectDelivered(row: ScenarioFigures, { path, listId, cursors }: Awaited<ReturnType<typeof servedMeanwhile>>) {
  const received = () =>
    new Set(
      suite.receiver.requests
        .filter((request) => request.path === path && request.headers['svc-event'] !== 'ping')
        .map((request) => (JSON.parse(request.rawBody.toString('utf8')) as { cursor: number }).cursor),
    );
  await waitFor(async () => (cursors.every((cursor) => received().has(cursor)) ? true : undefined), {
    what: `the writes ${cursors.join(', ')} delivered`,
  }).catch(() => {});
  row.writesLost = cursors.filter((cursor) => !received().has(cursor)).length;
  expect(row.writesLost).toBe(0);
  const ledger = await deliveryLedger(suite.stack.service.sql, listId);
  expect(ledger.mismatches).toEqual(NO_MISMATCHES);
  expect(ledger.rows.map((delivery) => delivery.outcome)).toEqual(cursors.map(() => 'delivered'));
}

/**
 * Holds the attack while the other client is served, then waits for the server to close every
 * attacking socket; each ended as `admitted` (the one answer the server gave an admitted socket)
 * or refused, refusals and admissions as the cap allows, each refusal counted in the metric.
 */
async function underAttack(row: ScenarioFigures, start: () => Attack, admitted: string) {
  const refusedBefore = await refusedTotal();
  const attack = start();
  // The cap is in force once the attacker's first socket over it is refused.
  await waitFor(async () => (attack.refused() > 0 ? true : undefined), { what: 'a refused socket' });
  // Served while the attacker holds its slots, and on until the server has closed each (and the attacker taken it again).
  const closedAdmitted = () => attack.sockets.filter(({ closed, received }) => closed && received !== '').length;
  const served = await servedMeanwhile(row, () => closedAdmitted() >= MAX_CONNECTIONS_PER_ADDRESS);
  await attack.stop();
  const counts = outcomes(attack);
  row.outcome = Object.entries(counts)
    .map(([outcome, count]) => `${outcome} ×${count}`)
    .join(', ');
  expect(Object.keys(counts).sort()).toEqual([admitted, 'refused'].sort());
  expect(counts[admitted]).toBeGreaterThanOrEqual(MAX_CONNECTIONS_PER_ADDRESS);
  expect((await refusedTotal()) - refusedBefore).toBe(counts.refused);
  await expectDelivered(row, served);
  return counts;
}

describe('slow and idle clients from one address', () => {
  it('headers sent a byte at a time on many connections: each answered 408 at the headers time-out, or refused over the cap', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'headers a byte at a time, 48 connections' });
    const started = performance.now();
    const counts = await underAttack(
      row,
      () => startAttack(48, (socket) => trickle(socket, '', 'GET /v3/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')),
      'HTTP/1.1 408 Request Timeout',
    );
    row.durationMs = Math.round(performance.now() - started);
    row.note = `${counts.refused} refused as accepted; the cap (${MAX_CONNECTIONS_PER_ADDRESS}) refilled as each was closed`;
  });

  it('bodies trickled after complete headers: each answered 408 at the request time-out, or refused over the cap', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'bodies trickled, 32 connections' });
    const started = performance.now();
    // A tenant of its own, with a valid token: its requests pass the token check and reach the body.
    const { token } = await suite.stack.createAccount();
    const headers =
      'POST /v3/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${token}\r\nContent-Length: 4096\r\n\r\n`;
    const counts = await underAttack(
      row,
      () => startAttack(32, (socket) => trickle(socket, headers, '{"url":"https://example.com/')),
      'HTTP/1.1 408 Request Timeout',
    );
    row.durationMs = Math.round(performance.now() - started);
    row.note = `${counts.refused} refused as accepted; no webhook made by the attacker`;
    const made = await suite.stack.request('GET', '/v3/webhooks', { token });
    expect(made.body.data).toEqual([]);
  });

  it('2,000 idle keep-alive connections: each answered once and closed idle, or refused over the cap, in a few summary log lines', async ({
    task,
  }) => {
    const count = 2_000;
    // Each attacking socket is two descriptors in this process: its end and the server's, until refused.
    const openFiles = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
    expect(openFiles, 'ulimit -n').toBeGreaterThan(2 * count + 1_000);
    const row = recordScenario(task, { scenario: 'idle keep-alive, 2,000 connections' });
    const started = performance.now();
    const logsFrom = suite.stack.logs.length;
    const counts = await underAttack(row, () => startAttack(count, (socket) => socket.write(GET_HEALTHZ)), 'HTTP/1.1 200 OK');
    row.durationMs = Math.round(performance.now() - started);

    // Refusals are logged a window at a time (10 s), a window perhaps holding the last test's
    // too: the lines of the whole run add up to the metric, and this test's are far fewer than its refusals.
    const summaries = (from = 0) =>
      suite.stack.logs
        .slice(from)
        .map((line) => JSON.parse(line) as { msg: string; refused?: { per_address: number }; topAddresses?: { address: string }[] })
        .filter((line) => line.msg === 'connections refused');
    const refusedInAll = await refusedTotal();
    await waitFor(async () => (summaries().reduce((sum, line) => sum + line.refused!.per_address, 0) === refusedInAll ? true : undefined), {
      what: `summary log lines adding up to ${refusedInAll} refusals`,
    });
    expect(summaries(logsFrom).length).toBeLessThan(counts.refused / 100);
    expect(summaries(logsFrom).every((line) => line.topAddresses![0].address === ATTACKER)).toBe(true);
    row.note = `ulimit -n ${openFiles}; ${summaries(logsFrom).length} summary log line(s)`;
  });

  it("relay WebSockets count against their address while open, and outlive the time-outs that close the others' sockets", async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'relay connections fill the cap' });
    const { stack } = suite;
    // Two sessions an account: the cap's worth of connections from the attacker's address.
    const sessions: { token: string; id: string; listId: string }[] = [];
    for (let a = 0; a < MAX_CONNECTIONS_PER_ADDRESS / 2; a++) {
      const owner = await stack.createAccount();
      const listId = `slow-relay-${randomBytes(4).toString('hex')}`;
      await stack.putList(listId, owner.id);
      for (let s = 0; s < 2; s++) {
        const created = await stack.request('POST', '/v3/relay-sessions', { token: owner.token, body: { listIds: [listId] } });
        expect(created.status).toBe(201);
        sessions.push({ token: owner.token, id: created.body.id, listId });
      }
    }
    const request = stack.request.bind(stack);
    for (const session of sessions) {
      relays.push(await connectRelay(request, stack.service.url, session.token, session.id, { localAddress: ATTACKER }));
    }

    // Full: the next connection from the address is refused.
    const overCap = startAttack(1, (socket) => socket.write(GET_HEALTHZ));
    await overCap.stop();
    expect(outcomes(overCap)).toEqual({ refused: 1 });

    // A body trickled from another address outlasts the request time-out, which the relays' connections then have too.
    const internalAccount =
      'POST /internal/v3/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${stack.internalApiToken}\r\nContent-Length: 100\r\n\r\n`;
    const slowBody = startAttack(1, (socket) => trickle(socket, internalAccount, '{"name":"'), '127.0.0.3');
    await slowBody.stop();
    expect(outcomes(slowBody)).toEqual({ 'HTTP/1.1 408 Request Timeout': 1 });

    // The relays' connections are handed their deliveries, and are all still open.
    const [first] = sessions;
    await stack.reportWrite(first.listId, 'after-the-time-outs');
    const [handed] = await relayedRequests(relays[0], 1);
    expect(JSON.parse(handed.body)).toMatchObject({ listId: first.listId, cursor: 1 });
    expect(relays.map((relay) => relay.socket.readyState)).toEqual(relays.map((relay) => relay.socket.OPEN));

    // One closes: the address may connect again.
    await relays[0].close();
    await waitFor(
      async () => {
        const again = startAttack(1, (socket) => socket.write(GET_HEALTHZ));
        await again.stop();
        return outcomes(again)['HTTP/1.1 200 OK'] === 1 ? true : undefined;
      },
      { what: 'a connection from the address admitted once a relay closed' },
    );
    row.outcome = `${MAX_CONNECTIONS_PER_ADDRESS} relay connections: the next refused; open past a 408 at the request time-out`;
  });
});
