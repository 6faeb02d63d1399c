// Issue 6 §1: processes dying. The API and the worker run as processes of their own
// (dist/src/main.js api|worker) on a file-backed Temporal dev server and an embedded
// PostgreSQL of this file's own, so that each can be killed or restarted. Whatever happens,
// every accepted write's delivery is received or recorded as failed: none is lost, none sent twice.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded';
import { createSql, type Sql } from '../../src/db/sql';
import { findTemporalCli, startDevServer } from '../../src/temporal/dev-server';
import { freePort } from '../support/ports';
import { startReceiver, type Receiver } from '../support/receiver';
import { requestTo } from '../support/stack';
import { createTestCa, issueServerCert } from '../support/tls';
import { waitFor } from '../support/wait';
import { startPart, type PartProcess } from './support/processes';
import { recordScenario } from './support/scenarios';

const INTERNAL_TOKEN = `int_${'p'.repeat(40)}`;
/** The worker runs at most this many activities at once (the SDK's default): the most a kill can leave in doubt. */
const MAX_IN_FLIGHT = 100;

let dir: string;
let cliPath: string;
let temporalPort: number;
let temporal: TestWorkflowEnvironment;
let databasePort: number;
let database: EmbeddedDatabase;
let sql: Sql;
let client: Client;
let receiver: Receiver;
let env: Record<string, string>;
let api: PartProcess;
let worker: PartProcess;
const ports = { api: 0, worker: 0 };

const startTemporal = () =>
  startDevServer({ cliPath, namespace: 'default', port: temporalPort, dbFilename: path.join(dir, 'temporal.sqlite') });
const startDatabase = () => startEmbeddedPostgres(dir, databasePort);
const request = (...args: Parameters<ReturnType<typeof requestTo>>) => requestTo(api.url)(...args);
const internal = { token: INTERNAL_TOKEN };

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: path.resolve(__dirname, '../..') });
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-faults-'));
  await chmod(dir, 0o755); // PostgreSQL runs as user postgres when we are root
  [cliPath, temporalPort, databasePort, ports.api, ports.worker] = await Promise.all([findTemporalCli(), freePort(), freePort(), freePort(), freePort()]);
  [temporal, database] = await Promise.all([startTemporal(), startDatabase()]);
  sql = createSql(database.url, { max: 2 });
  client = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${temporalPort}` }) });

  const ca = await createTestCa();
  receiver = await startReceiver(await issueServerCert(ca));
  const caFile = path.join(dir, 'ca.pem');
  await writeFile(caFile, ca.cert);
  env = {
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    NODE_EXTRA_CA_CERTS: caFile,
    DELIVERY_TIMEOUT_MS: '2000',
  };
  [api, worker] = await Promise.all([startPart('api', env, ports.api), startPart('worker', env, ports.worker)]);
}, 240_000);

afterAll(async () => {
  await Promise.allSettled([api?.stop(), worker?.stop()]);
  await receiver?.close();
  await client?.connection.close();
  await sql?.end({ timeout: 1 });
  await Promise.allSettled([temporal?.teardown(), database?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

/** An account with a list and a webhook on it, registered through the API. */
async function setUp(name: string) {
  const account = (await request('POST', '/internal/v3/accounts', { ...internal, body: { name } })).body;
  const listId = `faults-${name}`;
  expect((await request('PUT', `/internal/v3/lists/${listId}`, { ...internal, body: { ownerAccountId: account.id } })).status).toBe(201);
  const webhook = await request('POST', '/v3/webhooks', { token: account.token, body: { url: receiver.urlFor(`/${name}`) } });
  expect(webhook.status).toBe(201);
  return { listId, webhookId: webhook.body.id as string, path: `/${name}` };
}

/**
 * Reports the writes, `concurrency` at a time; an answer of 202 gives the write's cursor.
 * `answers` fills as they come, for a test that acts part-way.
 */
async function report(listId: string, writeIds: string[], concurrency = 20, answers = new Map<string, { status: number; cursor?: number }>()) {
  const queue = [...writeIds];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let writeId = queue.shift(); writeId; writeId = queue.shift()) {
        const body = { writeId, changes: [{ type: 'list.updated' }] };
        const answer = await request('POST', `/internal/v3/lists/${listId}/writes`, { ...internal, body }).catch(() => ({ status: 0, body: null }));
        answers.set(writeId, { status: answer.status, cursor: answer.body?.cursor });
      }
    }),
  );
  return answers;
}

/** Waits until every write's workflow has finished (through restarts of Temporal). */
async function settle(listId: string, writeIds: string[]) {
  for (const writeId of writeIds) {
    await waitFor(() => client.workflow.getHandle(`list-write/${listId}/${writeId}`).result().then(() => true), {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: `list-write/${listId}/${writeId} to finish`,
    });
  }
}

/** Every accepted write's delivery, received or recorded as failed; lost and duplicates listed. */
async function ledger(scenario: { listId: string; path: string }, cursors: number[]) {
  const received = new Map<number, number>();
  for (const delivery of receiver.requests.filter((r) => r.path === scenario.path && r.headers['svc-event'] !== 'ping')) {
    const { cursor } = JSON.parse(delivery.rawBody.toString('utf8'));
    received.set(cursor, (received.get(cursor) ?? 0) + 1);
  }
  const failedRows = await sql<{ cursor: string; error: string }[]>`
    SELECT cursor, error FROM deliveries WHERE list_id = ${scenario.listId} AND outcome = 'failed'`;
  const failed = new Map(failedRows.map((row) => [Number(row.cursor), row.error]));
  return {
    lost: cursors.filter((cursor) => !received.has(cursor) && !failed.has(cursor)),
    duplicates: [...received].filter(([, count]) => count > 1).map(([cursor]) => cursor),
    internal: [...failed.values()].filter((error) => error === 'internal').length,
    failedOtherwise: [...failed.values()].filter((error) => error !== 'internal'),
  };
}

const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

/**
 * A write and /readyz while a backing service is down, then its restart, then the
 * upstream's retries of the same write until one is accepted.
 */
async function writeThroughOutage(listId: string, restart: () => Promise<void>) {
  const write = () => request('POST', `/internal/v3/lists/${listId}/writes`, { ...internal, body: { writeId: 'during', changes: [{ type: 'list.updated' }] } });
  const whileDown = await write();
  const readiness = await request('GET', '/readyz');
  await restart();
  const retried = await waitFor(async () => {
    const answer = await write();
    return answer.status === 202 ? answer : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500, what: 'the API to accept writes again' });
  return { whileDown, readiness, retried };
}

describe('processes dying', () => {
  it('kill -9 the worker in the middle of a burst of 1000 accepted writes, then start it again', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'kill -9 the worker mid-burst' });
    const scenario = await setUp('worker-killed');
    const writeIds = ids('w', 1000);
    const reporting = report(scenario.listId, writeIds);
    // Kill it once deliveries are flowing.
    await receiver.waitForRequests(receiver.requests.length + 100, { timeoutMs: 60_000 });
    await worker.kill();
    const answers = await reporting;
    worker = await startPart('worker', env, ports.worker);
    await settle(scenario.listId, writeIds);

    const cursors = [...answers.values()].map((answer) => answer.cursor!);
    const { lost, duplicates, internal, failedOtherwise } = await ledger(scenario, cursors);
    Object.assign(row, { writesAccepted: cursors.length, writesLost: lost.length, fiveXx: [...answers.values()].filter((a) => a.status >= 500).length });
    row.outcome = `${internal} recorded internal`;
    expect([...answers.values()].every((answer) => answer.status === 202)).toBe(true);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(failedOtherwise).toEqual([]);
    expect(internal).toBeLessThanOrEqual(MAX_IN_FLIGHT);
  }, 300_000);

  it('kill -9 the API between writes and their 202; the upstream retries and every write is delivered once', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'kill -9 the API mid-burst, then retry' });
    const scenario = await setUp('api-killed');
    const writeIds = ids('w', 300);
    const first = new Map<string, { status: number; cursor?: number }>();
    const reporting = report(scenario.listId, writeIds, 20, first);
    // Kill it while writes are still coming in.
    await waitFor(async () => (first.size >= 50 ? true : undefined), { timeoutMs: 60_000, intervalMs: 5, what: '50 answers' });
    await api.kill();
    await reporting;
    api = await startPart('api', env, ports.api);
    const unanswered = writeIds.filter((writeId) => first.get(writeId)!.status !== 202);
    const retried = await report(scenario.listId, unanswered);
    await settle(scenario.listId, writeIds);

    const cursors = writeIds.map((writeId) => (first.get(writeId)!.status === 202 ? first : retried).get(writeId)!.cursor!);
    const { lost, duplicates } = await ledger(scenario, cursors);
    Object.assign(row, { writesAccepted: cursors.length, writesLost: lost.length, requests: writeIds.length + unanswered.length });
    row.outcome = `${unanswered.length} unanswered, then retried`;
    expect(unanswered.length).toBeGreaterThan(0);
    expect([...retried.values()].every((answer) => answer.status === 202)).toBe(true);
    expect(new Set(cursors).size).toBe(writeIds.length);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
  }, 300_000);

  it('restart the Temporal dev server: 503 with Retry-After while it is down, recovery by itself, nothing lost', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'restart Temporal (file-backed)' });
    const scenario = await setUp('temporal-restart');
    const before = await report(scenario.listId, ids('before', 50));
    await temporal.teardown();

    const { whileDown, readiness, retried } = await writeThroughOutage(scenario.listId, async () => {
      temporal = await startTemporal();
    });
    const after = await report(scenario.listId, ids('after', 50));
    await settle(scenario.listId, [...ids('before', 50), 'during', ...ids('after', 50)]);

    const cursors = [...before.values(), retried.body, ...after.values()].map((answer) => answer.cursor!);
    const { lost, duplicates } = await ledger(scenario, cursors);
    Object.assign(row, { writesAccepted: cursors.length, writesLost: lost.length, outcome: `while down: ${whileDown.status}, readyz ${readiness.status}` });
    expect(whileDown.status).toBe(503);
    expect(whileDown.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(whileDown.body.error.code).toBe('UNAVAILABLE');
    expect(readiness.status).toBe(503);
    expect([...before.values(), ...after.values()].every((answer) => answer.status === 202)).toBe(true);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
  }, 300_000);

  it('restart PostgreSQL: 503 with Retry-After while it is down, recovery by itself, nothing lost', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'restart PostgreSQL' });
    const scenario = await setUp('postgres-restart');
    const before = await report(scenario.listId, ids('before', 50));
    await settle(scenario.listId, ids('before', 50));
    await database.stop();

    const { whileDown, readiness, retried } = await writeThroughOutage(scenario.listId, async () => {
      database = await startDatabase();
    });
    const after = await report(scenario.listId, ids('after', 50));
    await settle(scenario.listId, ['during', ...ids('after', 50)]);

    const cursors = [...before.values(), retried.body, ...after.values()].map((answer) => answer.cursor!);
    const { lost, duplicates } = await ledger(scenario, cursors);
    Object.assign(row, { writesAccepted: cursors.length, writesLost: lost.length, outcome: `while down: ${whileDown.status}, readyz ${readiness.status}` });
    expect(whileDown.status).toBe(503);
    expect(whileDown.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(readiness.status).toBe(503);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
  }, 300_000);
});
