// Issue 6 §1: processes dying. The API and the worker run as processes of their own
// (dist/src/main.js api|worker) on a file-backed Temporal dev server and an embedded
// PostgreSQL of this file's own, so that each can be killed or restarted. Whatever happens,
// every accepted write's delivery is received or recorded as failed: none is lost, none sent twice.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded';
import { findTemporalCli, startDevServer } from '../../src/temporal/dev-server';
import { listWriteWorkflowId, registrationWorkflowId } from '../../src/contract/workflows';
import { sample } from '../support/metrics';
import { freePort } from '../support/ports';
import { ids, prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import { waitFor } from '../support/wait';
import { recordScenario } from './support/scenarios';
import {
  consecutiveFailuresByEndTime,
  deliveryLedger,
  isInternal,
  NO_MISMATCHES,
  type DeliveryLedger,
  type LoggedDelivery,
} from './support/delivery-ledger';
import { startStatementHoldingProxy } from './support/statement-holding-proxy';

/** The worker runs at most this many activities at once (the SDK's default): the most a kill can leave in doubt. */
const MAX_IN_FLIGHT = 100;

let dir: string;
let cliPath: string;
let temporalPort: number;
let temporal: TestWorkflowEnvironment;
let databasePort: number;
let database: EmbeddedDatabase;
let processes: ServiceProcesses;
let api: PartProcess;
let worker: PartProcess;
let workerPort: number;

const startTemporal = () =>
  startDevServer({ cliPath, namespace: 'default', port: temporalPort, dbFilename: path.join(dir, 'temporal.sqlite') });
const startDatabase = () => startEmbeddedPostgres(dir, databasePort);
const request: ServiceProcesses['request'] = (...args) => processes.request(...args);

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: path.resolve(__dirname, '../..') });
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-faults-'));
  await chmod(dir, 0o755); // PostgreSQL runs as user postgres when we are root
  [cliPath, temporalPort, databasePort, workerPort] = await Promise.all([findTemporalCli(), freePort(), freePort(), freePort()]);
  [temporal, database] = await Promise.all([startTemporal(), startDatabase()]);
  processes = await prepareServiceProcesses({ databaseUrl: database.url, temporalAddress: `127.0.0.1:${temporalPort}`, dir });
  [api, worker] = await Promise.all([startPart('api', processes.env, processes.apiPort), startPart('worker', processes.env, workerPort)]);
}, 240_000);

afterAll(async () => {
  await Promise.allSettled([api?.stop(), worker?.stop()]);
  await processes?.close();
  await Promise.allSettled([temporal?.teardown(), database?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

const setUp = (name: string) => processes.setUp(name);
const report: ServiceProcesses['report'] = (...args) => processes.report(...args);
const settle: ServiceProcesses['settle'] = (...args) => processes.settle(...args);
const ledger: ServiceProcesses['ledger'] = (...args) => processes.ledger(...args);
const logOf = (listId: string) => deliveryLedger(processes.sql, listId);

/** The failure messages of a workflow's local activities, as its history records them. */
async function localActivityFailures(workflowId: string): Promise<string[]> {
  const history = await temporal.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((event) => event.markerRecordedEventAttributes?.failure?.message ?? []);
}

/**
 * A write and /readyz while a backing service is down, then its restart, then the
 * upstream's retries of the same write until one is accepted.
 */
async function writeThroughOutage(listId: string, restart: () => Promise<void>) {
  const write = () =>
    request('POST', `/internal/v3/lists/${listId}/writes`, {
      ...processes.internal,
      body: { writeId: 'during', changes: [{ type: 'list.updated' }] },
    });
  const whileDown = await write();
  const readiness = await request('GET', '/readyz');
  await restart();
  const retried = await waitFor(
    async () => {
      const answer = await write();
      return answer.status === 202 ? answer : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'the API to accept writes again' },
  );
  return { whileDown, readiness, retried };
}

/**
 * Reports `writeIds` as a client does after an outage: a write answered otherwise than 202 (a
 * 503 while the API's connections come back, on a loaded machine) is sent again until it is
 * accepted. Returns the answers and how many were sent again.
 */
async function reportUntilAccepted(listId: string, writeIds: string[]) {
  const answers = await report(listId, writeIds);
  let sentAgain = 0;
  await waitFor(
    async () => {
      const refused = writeIds.filter((writeId) => answers.get(writeId)?.status !== 202);
      if (refused.length === 0) return true;
      sentAgain += refused.length;
      await report(listId, refused, 20, answers);
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'every write after the outage to be accepted' },
  );
  return { answers, sentAgain };
}

describe('processes dying', () => {
  it('kill -9 the worker in the middle of a burst of 1000 accepted writes, then start it again', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'kill -9 the worker mid-burst' });
    const scenario = await setUp('worker-killed');
    const writeIds = ids('w', 1000);
    const reporting = report(scenario.listId, writeIds);
    // Kill it once deliveries are flowing.
    await processes.receiver.waitForRequests(processes.receiver.requests.length + 100, { timeoutMs: 60_000 });
    await worker.kill();
    const answers = await reporting;
    worker = await startPart('worker', processes.env, workerPort);
    await settle(scenario.listId, writeIds);

    const cursors = [...answers.values()].map((answer) => answer.cursor!);
    const { lost, duplicates, internal, failedOtherwise } = await ledger(scenario, cursors);
    const log = await logOf(scenario.listId);
    Object.assign(row, {
      writesAccepted: cursors.length,
      writesLost: lost.length,
      fiveXx: [...answers.values()].filter((a) => a.status >= 500).length,
    });
    row.outcome = `${internal} recorded internal`;
    expect([...answers.values()].every((answer) => answer.status === 202)).toBe(true);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(log.planned).toBe(cursors.length);
    expect(log.mismatches).toEqual(NO_MISMATCHES);
    expect(failedOtherwise).toEqual([]);
    expect(internal).toBeLessThanOrEqual(MAX_IN_FLIGHT);
  }, 300_000);

  it('kill -9 the worker while its deliveries wait at the receiver: the re-run finds each attempt claimed and sends nothing', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'kill -9 the worker mid-POST' });
    const scenario = await setUp('worker-killed-mid-post');
    const writeIds = ids('held', 5);
    const heldAt = (path: string) =>
      processes.receiver.requests.filter((request) => request.path === path && request.headers['svc-event'] !== 'ping');
    // The receiver holds every delivery, so each attempt is under way when the worker dies.
    processes.receiver.respondWith((request) => (request.path === scenario.path ? { hang: true } : {}));
    const answers = await report(scenario.listId, writeIds);
    await waitFor(async () => (heldAt(scenario.path).length === writeIds.length ? true : undefined), {
      timeoutMs: 30_000,
      what: 'every delivery at the receiver',
    });
    await worker.kill();
    processes.receiver.respondWith({});
    worker = await startPart('worker', processes.env, workerPort);
    await settle(scenario.listId, writeIds);

    const cursors = [...answers.values()].map((answer) => answer.cursor!);
    const { lost, duplicates, internal, failedOtherwise } = await ledger(scenario, cursors);
    const log = await logOf(scenario.listId);
    Object.assign(row, {
      writesAccepted: cursors.length,
      writesLost: lost.length,
      fiveXx: [...answers.values()].filter((a) => a.status >= 500).length,
    });
    row.outcome = `${internal} recorded internal, ${heldAt(scenario.path).length} received`;
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(log.planned).toBe(cursors.length);
    expect(log.mismatches).toEqual(NO_MISMATCHES);
    expect(failedOtherwise).toEqual([]);
    expect(internal).toBe(writeIds.length);
    expect(heldAt(scenario.path)).toHaveLength(writeIds.length);
    // Each write's delivery was run again after the worker died, and found its claim taken.
    for (const writeId of writeIds) {
      const failures = await localActivityFailures(listWriteWorkflowId(scenario.listId, writeId));
      expect(failures).toEqual([expect.stringContaining('already attempted by an earlier run: nothing sent')]);
    }
  }, 120_000);

  it('kill -9 the worker while the log rows of answered POSTs (2xx and 500) and of a skip wait in it: one row each, the count by end time, the skip stays skipped', async ({
    task,
    onTestFinished,
  }) => {
    const row = recordScenario(task, { scenario: 'kill -9 the worker while log rows wait' });
    // Three webhooks on one list ('2xx between' fails, answers 2xx to the killed write, then
    // fails again); a paused one alone on the list of another account, so that its skip is
    // the only row the worker has to log when it writes that list.
    const main = await setUp('rows-waiting');
    const [failing, between] = await Promise.all(
      ['/rows-waiting-failing', '/rows-waiting-2xx-between'].map(async (path) => ({
        path,
        ...(await processes.registerWebhook(main.token, path)),
      })),
    );
    const paused = await setUp('rows-waiting-paused');
    const roleOf = new Map([
      [main.webhookId, 'ok'],
      [failing.id, 'failing'],
      [between.id, '2xx between'],
      [paused.webhookId, 'paused'],
    ]);
    const webhookIds = [...roleOf.keys()];
    /** The paths whose deliveries get a 500 (pings always get a 200). */
    let failingPaths = [failing.path, between.path];
    processes.receiver.respondWith((received) =>
      received.headers['svc-event'] !== 'ping' && failingPaths.includes(received.path) ? { status: 500 } : {},
    );
    onTestFinished(() => processes.receiver.respondWith({}));

    const answers = [await report(main.listId, ids('before', 3))];
    await settle(main.listId, ids('before', 3));
    const pausing = await request('PATCH', `/v3/webhooks/${paused.webhookId}`, { token: paused.token, body: { status: 'paused' } });
    expect(pausing.body.status).toBe('paused');

    // The worker that dies writes through a proxy that holds its delivery log statements: none
    // of its rows reaches PostgreSQL, however long the test takes to kill it.
    await worker.stop();
    const proxy = await startStatementHoldingProxy(processes.env.DATABASE_URL, /INSERT INTO deliveries\b/i);
    onTestFinished(() => proxy.close());
    const proxied = await startPart('worker', { ...processes.env, DATABASE_URL: proxy.url }, workerPort);
    worker = proxied;
    // Should the test stop before the kill, the tests after it get a worker of their own.
    onTestFinished(async () => {
      if (worker !== proxied) return;
      await proxied.kill();
      worker = await startPart('worker', processes.env, workerPort);
    });
    const deliveriesCounted = async () => {
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      return {
        delivered: sample(metrics, 'webhook_deliveries_total', { outcome: 'delivered' }),
        failed: sample(metrics, 'webhook_deliveries_total', { outcome: 'failed' }),
      };
    };

    const whilePaused = await report(paused.listId, ['while-paused']);
    answers.push(whilePaused);
    // Its skip is the first row the worker logs: held (or, were skips logged with their
    // claim, in the log already). The rows that follow wait in the worker behind it.
    await waitFor(
      async () =>
        proxy.heldStatements.some((statement) => statement.includes(paused.webhookId)) || (await logOf(paused.listId)).rows.length > 0
          ? true
          : undefined,
      { timeoutMs: 30_000, what: "the skip's row held or logged" },
    );
    failingPaths = [failing.path];
    const killed = await report(main.listId, ['killed']);
    answers.push(killed);
    // Counted as each POST's answer came in, just before its row is handed to the log.
    await waitFor(async () => (isDeepStrictEqual(await deliveriesCounted(), { delivered: 2, failed: 1 }) ? true : undefined), {
      timeoutMs: 30_000,
      what: "the killed write's three POSTs answered",
    });
    const killedCursor = killed.get('killed')!.cursor!;
    expect((await logOf(main.listId)).rows.filter((logged) => logged.cursor === killedCursor)).toEqual([]);
    await worker.kill();
    worker = await startPart('worker', processes.env, workerPort);
    await settle(paused.listId, ['while-paused']);
    await settle(main.listId, ['killed']);

    failingPaths = [failing.path, between.path];
    answers.push(await report(main.listId, ['after']));
    await settle(main.listId, ['after']);

    const [mainLog, pausedLog] = await Promise.all([logOf(main.listId), logOf(paused.listId)]);
    const rows = [...mainLog.rows, ...pausedLog.rows];
    const described = (logged: LoggedDelivery) => (isInternal(logged) ? 'internal' : `${logged.outcome} ${logged.statusCode ?? ''}`.trim());
    const rowsOf = (webhookId: string) => rows.filter((logged) => logged.webhookId === webhookId);
    const outcomesOf = (log: DeliveryLedger, cursor: number) =>
      Object.fromEntries(
        log.rows.filter((logged) => logged.cursor === cursor).map((logged) => [roleOf.get(logged.webhookId), described(logged)]),
      );
    const writes = answers.flatMap((answered) => [...answered.values()]);
    Object.assign(row, {
      writesAccepted: writes.filter((answer) => answer.status === 202).length,
      writesLost: mainLog.mismatches.missing.length + pausedLog.mismatches.missing.length,
      outcome: `${rows.filter(isInternal).length} recorded internal; the skip logged ${pausedLog.rows.map(described).join(', ')}`,
    });
    expect(writes.every((answer) => answer.status === 202)).toBe(true);
    expect(mainLog.planned).toBe(5 * 3);
    expect(mainLog.mismatches).toEqual(NO_MISMATCHES);
    expect(pausedLog.planned).toBe(1);
    expect(pausedLog.mismatches).toEqual(NO_MISMATCHES);
    // Soft from here: each check below is reported, whichever others fail.
    // What its receiver answered, or `internal`: the dying worker alone knew the answers.
    expect.soft(outcomesOf(mainLog, killedCursor)).toEqual({
      ok: expect.toBeOneOf(['delivered 200', 'internal']),
      failing: expect.toBeOneOf(['failed 500', 'internal']),
      '2xx between': expect.toBeOneOf(['delivered 200', 'internal']),
    });
    expect.soft(outcomesOf(pausedLog, whilePaused.get('while-paused')!.cursor!)).toEqual({ paused: 'skipped' });

    // The count each workflow keeps, as the rows' end times give it; stored a moment after the last signal.
    const countsByEndTime = Object.fromEntries(webhookIds.map((id) => [roleOf.get(id), consecutiveFailuresByEndTime(rowsOf(id))]));
    const storedCounts = async () =>
      Object.fromEntries(
        (
          await processes.sql<{ id: string; consecutiveFailures: number }[]>`
          SELECT id, consecutive_failures AS "consecutiveFailures" FROM webhooks WHERE id = ANY(${webhookIds})`
        ).map((stored) => [roleOf.get(stored.id), stored.consecutiveFailures]),
      );
    await waitFor(async () => (isDeepStrictEqual(await storedCounts(), countsByEndTime) ? true : undefined), {
      what: 'the stored counts to agree with the rows',
    }).catch(() => {}); // the assertion below shows how they differ
    expect.soft(await storedCounts()).toEqual(countsByEndTime);

    // Health and meter count what the rows say was sent, never `internal`.
    const tally = (logged: LoggedDelivery[]) => ({
      delivered: logged.filter((r) => r.outcome === 'delivered').length,
      failed: logged.filter((r) => r.outcome === 'failed' && !isInternal(r)).length,
      skipped: logged.filter((r) => r.outcome === 'skipped').length,
    });
    const health = await processes.sql<{ webhookId: string; delivered: number; failed: number; skipped: number }[]>`
      SELECT webhook_id AS "webhookId", sum(delivered)::integer AS delivered, sum(failed)::integer AS failed, sum(skipped)::integer AS skipped
      FROM webhook_health_hours WHERE webhook_id = ANY(${webhookIds}) GROUP BY webhook_id`;
    const healthOf = new Map(health.map(({ webhookId, ...counts }) => [webhookId, counts]));
    expect
      .soft(Object.fromEntries(webhookIds.map((id) => [roleOf.get(id), healthOf.get(id) ?? tally([])])))
      .toEqual(Object.fromEntries(webhookIds.map((id) => [roleOf.get(id), tally(rowsOf(id))])));
    const metered = await processes.sql<{ accountId: string; deliveries: number }[]>`
      SELECT account_id AS "accountId", sum(deliveries)::integer AS deliveries FROM account_usage
      WHERE account_id IN (${main.accountId}, ${paused.accountId}) GROUP BY account_id`;
    const meteredOf = new Map(metered.map(({ accountId, deliveries }) => [accountId, deliveries]));
    const sent = (log: DeliveryLedger) => log.rows.filter((logged) => logged.outcome !== 'skipped' && !isInternal(logged)).length;
    expect.soft({ main: meteredOf.get(main.accountId) ?? 0, paused: meteredOf.get(paused.accountId) ?? 0 }).toEqual({
      main: sent(mainLog),
      paused: sent(pausedLog),
    });
  }, 300_000);

  it('kill -9 the worker while a registration ping waits at the receiver: the re-run finds the ping claimed, sends nothing, and the registration answers 503', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'kill -9 the worker mid-registration ping' });
    const account = (await request('POST', '/internal/v3/accounts', { ...processes.internal, body: { name: 'registration-ping' } })).body;
    const pingPath = '/registration-ping-held';
    const pings = () => processes.receiver.requests.filter((received) => received.path === pingPath);
    processes.receiver.respondWith((received) => (received.path === pingPath ? { hang: true } : {}));
    const answering = request('POST', '/v3/webhooks', { token: account.token, body: { url: processes.receiver.urlFor(pingPath) } });
    await waitFor(async () => (pings().length === 1 ? true : undefined), { timeoutMs: 30_000, what: 'the ping at the receiver' });
    await worker.kill();
    processes.receiver.respondWith({});
    worker = await startPart('worker', processes.env, workerPort);
    const answer = await answering;

    const webhooks = await request('GET', '/v3/webhooks', { token: account.token });
    row.outcome = `answered ${answer.status}, ${pings().length} ping received, ${webhooks.body.data.length} webhooks stored`;
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('UNAVAILABLE');
    expect(pings()).toHaveLength(1);
    expect(webhooks.body.data).toEqual([]);
    // The ping was run again after the worker died, found its claim taken, and failed the
    // registration as ours; the Temporal UI shows why.
    const [{ id: registrationId }] = await processes.sql<{ id: string }[]>`SELECT id FROM registrations WHERE account_id = ${account.id}`;
    const failures = await localActivityFailures(registrationWorkflowId(account.id, registrationId));
    expect(failures).toEqual([expect.stringContaining('ping already attempted by an earlier run: nothing sent')]);
  }, 120_000);

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
    api = await startPart('api', processes.env, processes.apiPort);
    const unanswered = writeIds.filter((writeId) => first.get(writeId)!.status !== 202);
    const retried = await report(scenario.listId, unanswered);
    await settle(scenario.listId, writeIds);

    const cursors = writeIds.map((writeId) => (first.get(writeId)!.status === 202 ? first : retried).get(writeId)!.cursor!);
    const { lost, duplicates } = await ledger(scenario, cursors);
    const log = await logOf(scenario.listId);
    Object.assign(row, { writesAccepted: cursors.length, writesLost: lost.length, requests: writeIds.length + unanswered.length });
    row.outcome = `${unanswered.length} unanswered, then retried`;
    expect(unanswered.length).toBeGreaterThan(0);
    expect([...retried.values()].every((answer) => answer.status === 202)).toBe(true);
    expect(new Set(cursors).size).toBe(writeIds.length);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(log.planned).toBe(cursors.length);
    expect(log.mismatches).toEqual(NO_MISMATCHES);
  }, 300_000);

  it('restart the Temporal dev server: 503 with Retry-After while it is down, recovery by itself, nothing lost', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'restart Temporal (file-backed)' });
    const scenario = await setUp('temporal-restart');
    const before = await report(scenario.listId, ids('before', 50));
    await temporal.teardown();

    const { whileDown, readiness, retried } = await writeThroughOutage(scenario.listId, async () => {
      temporal = await startTemporal();
    });
    const { answers: after, sentAgain } = await reportUntilAccepted(scenario.listId, ids('after', 50));
    await settle(scenario.listId, [...ids('before', 50), 'during', ...ids('after', 50)]);

    const cursors = [...before.values(), retried.body, ...after.values()].map((answer) => answer.cursor!);
    const { lost, duplicates } = await ledger(scenario, cursors);
    const log = await logOf(scenario.listId);
    Object.assign(row, {
      writesAccepted: cursors.length,
      writesLost: lost.length,
      outcome: `while down: ${whileDown.status}, readyz ${readiness.status}`,
      note: `${sentAgain} writes after the outage sent again`,
    });
    expect(whileDown.status).toBe(503);
    expect(whileDown.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(whileDown.body.error.code).toBe('UNAVAILABLE');
    expect(readiness.status).toBe(503);
    expect([...before.values(), ...after.values()].every((answer) => answer.status === 202)).toBe(true);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(log.planned).toBe(cursors.length);
    expect(log.mismatches).toEqual(NO_MISMATCHES);
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
    const { answers: after, sentAgain } = await reportUntilAccepted(scenario.listId, ids('after', 50));
    await settle(scenario.listId, ['during', ...ids('after', 50)]);

    const cursors = [...before.values(), retried.body, ...after.values()].map((answer) => answer.cursor!);
    const { lost, duplicates } = await ledger(scenario, cursors);
    const log = await logOf(scenario.listId);
    Object.assign(row, {
      writesAccepted: cursors.length,
      writesLost: lost.length,
      outcome: `while down: ${whileDown.status}, readyz ${readiness.status}`,
      note: `${sentAgain} writes after the outage sent again`,
    });
    expect(whileDown.status).toBe(503);
    expect(whileDown.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(readiness.status).toBe(503);
    expect(lost).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(log.planned).toBe(cursors.length);
    expect(log.mismatches).toEqual(NO_MISMATCHES);
  }, 300_000);
});
