// Relay sessions with the service's parts as processes of their own (dist/src/main.js): two
// API processes and a worker, on the run's Temporal dev server and database. A delivery
// reaches the session's connection whichever API holds it, and a connection moves between
// APIs; killing the command line, the API that holds its connection, or the worker in the
// middle of a stream of writes loses nothing silently: every delivery ends delivered, failed
// with relay_disconnected, or internal, and is logged once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../support/ports';
import { ids, prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import { connectRelay, relayedRequests, type RelayConnection } from '../support/relay-client';
import { requestTo, type RequestFunction } from '../support/stack';
import { recordScenario, type ScenarioFigures } from './support/scenarios';

const WRITES = 30;

let dir: string;
let processes: ServiceProcesses;
/** The two API processes, and how clients call each. */
const apis: { process: PartProcess; port: number; url: string; request: RequestFunction }[] = [];
let worker: { process: PartProcess; port: number };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-relay-processes-'));
  processes = await prepareServiceProcesses({ databaseUrl: inject('databaseUrl'), temporalAddress: inject('temporalAddress'), dir });
  for (const port of [processes.apiPort, await freePort()]) {
    const url = `http://127.0.0.1:${port}`;
    apis.push({ process: await startPart('api', processes.env, port), port, url, request: requestTo(url) });
  }
  const workerPort = await freePort();
  worker = { process: await startPart('worker', processes.env, workerPort), port: workerPort };
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([...apis.map((api) => api.process.stop()), worker?.process.stop()]);
  await processes?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** An account with a list and a relay session on it (opened through the first API). */
async function sessionOn(name: string) {
  const internal = processes.internal;
  const account = (await apis[0].request('POST', '/internal/v3/accounts', { ...internal, body: { name } })).body;
  const listId = `relay-${name}`;
  await apis[0].request('PUT', `/internal/v3/lists/${listId}`, { ...internal, body: { ownerAccountId: account.id } });
  const session = await apis[0].request('POST', '/v3/relay-sessions', { token: account.token, body: { events: ['list.changed'] } });
  expect(session.status).toBe(201);
  return { token: account.token as string, listId, webhookId: session.body.id as string };
}

const connectThrough = (api: (typeof apis)[number], token: string, webhookId: string) =>
  connectRelay(api.request, api.url, token, webhookId);

/** Reports writes (through the first API) and waits for their workflows. */
async function writeAndSettle(listId: string, writeIds: string[]): Promise<number> {
  const answers = await processes.report(listId, writeIds, 5);
  await processes.settle(listId, writeIds);
  return [...answers.values()].filter((answer) => answer.status === 202).length;
}

/**
 * What the session's log holds for the writes: each cursor logged exactly once, as
 * delivered, relay_disconnected or internal; and each delivered one handed to a connection.
 */
async function logOf(webhookId: string, connections: RelayConnection[]) {
  const rows = await processes.sql<{ cursor: string; outcome: string; error: string | null; id: string }[]>`
    SELECT cursor, outcome, error, id FROM deliveries WHERE webhook_id = ${webhookId} AND kind = 'event'`;
  const handedOver = new Set(connections.flatMap((connection) => connection.requests.map((request) => request.headers['svc-delivery'])));
  const ends = new Map<string, number>();
  for (const row of rows) ends.set(row.error ?? row.outcome, (ends.get(row.error ?? row.outcome) ?? 0) + 1);
  return {
    cursors: rows.map((row) => Number(row.cursor)).sort((a, b) => a - b),
    ends: Object.fromEntries(ends),
    unexpected: rows.filter(
      (row) => !['delivered', null].includes(row.error ?? null) && !['relay_disconnected', 'internal'].includes(row.error!),
    ),
    deliveredNotHandedOver: rows.filter((row) => row.outcome === 'delivered' && !handedOver.has(row.id)).length,
  };
}

function fill(row: ScenarioFigures, accepted: number, log: Awaited<ReturnType<typeof logOf>>) {
  row.writesAccepted = accepted;
  row.writesLost = accepted - log.cursors.length;
  row.outcome = Object.entries(log.ends)
    .map(([end, count]) => `${end}×${count}`)
    .join(' ');
}

const range = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

/**
 * A session whose connection, held by `holder`, answers 10 deliveries and then none; once 12
 * are handed over, `cut` ends it while WRITES writes keep coming; then a connection through
 * `reconnect` gets one write more.
 */
async function cutMidStream(
  name: string,
  holder: (typeof apis)[number],
  cut: (connection: RelayConnection) => unknown,
  reconnect: (typeof apis)[number],
) {
  const { token, listId, webhookId } = await sessionOn(name);
  const connection = await connectThrough(holder, token, webhookId);
  connection.answerWith(() => (connection.requests.length > 10 ? 'silence' : { status: 200 }));
  const writing = writeAndSettle(listId, ids('w', WRITES));
  await relayedRequests(connection, 12);
  await cut(connection);
  const accepted = await writing;
  const again = await connectThrough(reconnect, token, webhookId);
  const after = await writeAndSettle(listId, ['after']);
  const log = await logOf(webhookId, [connection, again]);
  await again.close();
  return { connection, accepted: accepted + after, log };
}

/** Every write of a cut stream logged once, as delivered (and then handed over), relay_disconnected or internal. */
function expectEachLoggedOnce(log: Awaited<ReturnType<typeof logOf>>): void {
  expect(log.cursors).toEqual(range(WRITES + 1));
  expect(log.unexpected).toEqual([]);
  expect(log.deliveredNotHandedOver).toBe(0);
  expect(log.ends.relay_disconnected).toBeGreaterThanOrEqual(1);
}

describe('relay sessions across processes', () => {
  it('a write reported to one API reaches the connection another API holds, and the connection moves between them', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'relay: the API and the worker apart, two APIs' });
    const { token, listId, webhookId } = await sessionOn('two-apis');
    // Writes go through the first API; the connection is the second's, then the first's.
    const onFirst = await connectThrough(apis[1], token, webhookId);
    const accepted = await writeAndSettle(listId, ids('first', 5));
    await relayedRequests(onFirst, 5);
    const onSecond = await connectThrough(apis[0], token, webhookId);
    expect(await onFirst.closed).toBe(4409);
    const more = await writeAndSettle(listId, ids('second', 5));
    await relayedRequests(onSecond, 5);
    const log = await logOf(webhookId, [onFirst, onSecond]);
    fill(row, accepted + more, log);
    expect(log.cursors).toEqual(range(10));
    expect(log.ends).toEqual({ delivered: 10 });
    await onSecond.close();
  });

  it('kill the command line mid-stream: what it had not answered fails relay_disconnected, then a new connection gets the rest', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'relay: the command line killed mid-stream' });
    const cut = await cutMidStream('cli-killed', apis[0], (connection) => connection.socket.terminate(), apis[0]);
    fill(row, cut.accepted, cut.log);
    expectEachLoggedOnce(cut.log);
  });

  it('kill -9 the API that holds the connection mid-stream: its deliveries fail relay_disconnected, and the connection opens on the other', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'relay: kill -9 the API holding the connection' });
    // Writes are reported through the first API, which stays up.
    const cut = await cutMidStream('api-killed', apis[1], () => apis[1].process.kill(), apis[0]);
    apis[1].process = await startPart('api', processes.env, apis[1].port);
    fill(row, cut.accepted, cut.log);
    expect(await cut.connection.closed).not.toBe(1000);
    expectEachLoggedOnce(cut.log);
  });

  it('kill -9 the worker mid-stream: each delivery is handed over at most once and logged once', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'relay: kill -9 the worker mid-stream' });
    const { token, listId, webhookId } = await sessionOn('worker-killed');
    const connection = await connectThrough(apis[1], token, webhookId);
    const answers = processes.report(listId, ids('w', WRITES), 5);
    await relayedRequests(connection, 5);
    await worker.process.kill();
    worker.process = await startPart('worker', processes.env, worker.port);
    const accepted = [...(await answers).values()].filter((answer) => answer.status === 202).length;
    await processes.settle(listId, ids('w', WRITES));
    const log = await logOf(webhookId, [connection]);
    fill(row, accepted, log);
    const handedOver = connection.requests.map((request) => JSON.parse(request.body).cursor as number);
    expect(new Set(handedOver).size).toBe(handedOver.length);
    expect(log.cursors).toEqual(range(WRITES));
    expect(log.unexpected).toEqual([]);
    await connection.close();
  });
});
