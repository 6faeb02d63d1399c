// Recovery under faults: the API and the worker run as processes of their own
// (dist/src/main.js api|worker) on a file-backed Temporal dev server and an embedded
// PostgreSQL of this file's own. A recovery goes on through kill -9 of the worker, kill -9 of
// the API and a restart of the dev server, sending each missed delivery once and none twice;
// and a window of 20,000 deliveries goes through with every run's history far below
// Temporal's limits.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { temporal as proto } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded';
import { findTemporalCli, startDevServer } from '../../src/temporal/dev-server';
import { recoveryWorkflowId } from '../../src/contract/workflows';
import { freePort } from '../support/ports';
import { ids, prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import type { ReceivedRequest } from '../support/receiver';
import { requestTo } from '../support/stack';
import { waitFor } from '../support/wait';
import { insertFailedEvents } from '../../scripts/lib/failed-deliveries';
import { recordScenario } from './support/scenarios';

/** Temporal ends a run's history at 51,200 events or 50 MB. */
const HISTORY_EVENT_LIMIT = 51_200;
const HISTORY_BYTE_LIMIT = 50 * 1024 * 1024;

let dir: string;
let cliPath: string;
let temporalPort: number;
let temporal: TestWorkflowEnvironment;
let database: EmbeddedDatabase;
let processes: ServiceProcesses;
let api: PartProcess;
let worker: PartProcess;
let workerPort: number;

const startTemporal = () =>
  startDevServer({ cliPath, namespace: 'default', port: temporalPort, dbFilename: path.join(dir, 'temporal.sqlite') });
const request: ServiceProcesses['request'] = (...args) => processes.request(...args);

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: path.resolve(__dirname, '../..') });
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-recovery-faults-'));
  await chmod(dir, 0o755); // PostgreSQL runs as user postgres when we are root
  let databasePort: number;
  [cliPath, temporalPort, databasePort, workerPort] = await Promise.all([findTemporalCli(), freePort(), freePort(), freePort()]);
  [temporal, database] = await Promise.all([startTemporal(), startEmbeddedPostgres(dir, databasePort)]);
  processes = await prepareServiceProcesses({ databaseUrl: database.url, temporalAddress: `127.0.0.1:${temporalPort}`, dir });
  [api, worker] = await Promise.all([startPart('api', processes.env, processes.apiPort), startPart('worker', processes.env, workerPort)]);
}, 240_000);

afterAll(async () => {
  await Promise.allSettled([api?.stop(), worker?.stop()]);
  await processes?.close();
  await Promise.allSettled([temporal?.teardown(), database?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

const cursorOf = (received: ReceivedRequest) => (JSON.parse(received.rawBody.toString('utf8')) as { cursor: number }).cursor;

/** Polls the recovery until it has ended, through the API (which may be restarting), and returns it. */
function recoveryEnded(via: typeof request, token: string, webhookId: string, recoveryId: string, timeoutMs: number) {
  return waitFor(
    async () => {
      const answer = await via('GET', `/v3/webhooks/${webhookId}/recoveries/${recoveryId}`, { token });
      return answer.status === 200 && answer.body.finishedAt !== null ? answer.body : undefined;
    },
    { timeoutMs, intervalMs: 500, what: `recovery ${recoveryId} to end` },
  );
}

/** Each cursor's count among the requests. */
function countByCursor(requests: ReceivedRequest[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const received of requests) counts.set(cursorOf(received), (counts.get(cursorOf(received)) ?? 0) + 1);
  return counts;
}

describe('a recovery under faults', () => {
  it('goes on through kill -9 of the worker, kill -9 of the API and a restart of Temporal, sending each missed delivery once', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'recovery through kill -9 of the worker and the API, and a Temporal restart' });
    const scenario = await processes.setUp('recovery-deaths');
    const at = (requests: ReceivedRequest[]) => requests.filter((received) => received.path === scenario.path);
    // Three writes in four fail: the webhook misses 300 of 400, and a success now and then
    // keeps it from pausing.
    processes.receiver.respondWith((received) =>
      received.path === scenario.path && received.headers['svc-event'] !== 'ping' && cursorOf(received) % 4 !== 0 ? { status: 503 } : {},
    );
    const since = new Date().toISOString();
    const writeIds = ids('w', 400);
    await processes.report(scenario.listId, writeIds, 5);
    await processes.settle(scenario.listId, writeIds);
    processes.receiver.respondWith({});
    const missed = await processes.sql<{ cursor: string }[]>`
      SELECT cursor FROM deliveries WHERE webhook_id = ${scenario.webhookId} AND kind = 'event' AND outcome = 'failed'`;
    expect(missed).toHaveLength(300);
    expect((await request('GET', `/v3/webhooks/${scenario.webhookId}`, { token: scenario.token })).body.status).toBe('active');

    const receivedBefore = processes.receiver.requests.length;
    const sent = () => at(processes.receiver.requests.slice(receivedBefore));
    const started = await request('POST', `/v3/webhooks/${scenario.webhookId}/recoveries`, { token: scenario.token, body: { since } });
    expect(started).toMatchObject({ status: 202, body: { total: 300 } });
    const sentAtLeast = (count: number) =>
      waitFor(async () => (sent().length >= count ? true : undefined), { timeoutMs: 120_000, what: `${count} sends received` });

    await sentAtLeast(50);
    await worker.kill();
    worker = await startPart('worker', processes.env, workerPort);
    await sentAtLeast(120);
    await api.kill();
    api = await startPart('api', processes.env, processes.apiPort);
    await sentAtLeast(190);
    await temporal.teardown();
    temporal = await startTemporal();
    const ended = await recoveryEnded(request, scenario.token, scenario.webhookId, started.body.id, 240_000);

    const counts = countByCursor(sent());
    const duplicates = [...counts].filter(([, count]) => count > 1).map(([cursor]) => cursor);
    const internal = await processes.sql<{ cursor: string }[]>`
      SELECT cursor FROM deliveries WHERE webhook_id = ${scenario.webhookId} AND kind = 'redelivery' AND error = 'internal'`;
    const inDoubt = new Set(internal.map((entry) => Number(entry.cursor)));
    const lost = missed.map((entry) => Number(entry.cursor)).filter((cursor) => !counts.has(cursor) && !inDoubt.has(cursor));
    Object.assign(row, { requests: sent().length, writesLost: lost.length });
    row.outcome = `${ended.status}: ${ended.delivered} of ${missed.length} delivered, ${inDoubt.size} in doubt (internal)`;
    row.note = `${duplicates.length} sent twice; lost: missed deliveries neither received nor recorded`;
    expect(ended).toMatchObject({ status: 'completed', total: 300, sent: 300 });
    expect(ended.delivered + ended.failed).toBe(300);
    expect(ended.failed).toBe(inDoubt.size);
    expect(new Set(sent().map((received) => received.headers['svc-delivery'])).size).toBe(sent().length);
    expect(duplicates).toEqual([]);
    expect(lost).toEqual([]);
    expect([...counts.keys()].every((cursor) => cursor % 4 !== 0)).toBe(true);
    // Only a send that the worker's death caught between its claim and its outcome is in doubt:
    // at most one (sends go one at a time at 10 a second).
    expect(inDoubt.size).toBeLessThanOrEqual(1);
  }, 600_000);

  it('sends a window of 20,000 deliveries at 1,000 a second, each once, every run of its history far below the limits', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'recovery of a 20,000-delivery window' });
    const scenario = await processes.setUp('recovery-window');
    const since = new Date(Date.now() - 60_000).toISOString();
    await insertFailedEvents(processes.sql, scenario.webhookId, scenario.listId, 20_000);
    // An API of its own that starts recoveries at 1,000 sends a second.
    const fastApi = await startPart('api', { ...processes.env, RECOVERY_RATE_PER_SECOND: '1000' }, await freePort());
    try {
      const via = requestTo(fastApi.url);
      const receivedBefore = processes.receiver.requests.length;
      const startedAt = Date.now();
      const started = await via('POST', `/v3/webhooks/${scenario.webhookId}/recoveries`, { token: scenario.token, body: { since } });
      expect(started).toMatchObject({ status: 202, body: { total: 20_000 } });
      const ended = await recoveryEnded(via, scenario.token, scenario.webhookId, started.body.id, 540_000);
      row.durationMs = Date.now() - startedAt;

      const counts = countByCursor(processes.receiver.requests.slice(receivedBefore).filter((received) => received.path === scenario.path));
      expect(ended).toMatchObject({ status: 'completed', total: 20_000, sent: 20_000, delivered: 20_000, failed: 0 });
      expect(counts.size).toBe(20_000);
      expect([...counts.values()].every((count) => count === 1)).toBe(true);

      // Every run of the workflow, from the last back to the first.
      const workflowId = recoveryWorkflowId(scenario.webhookId, started.body.id);
      const runs: { events: number; bytes: number }[] = [];
      let runId: string | undefined = (await temporal.client.workflow.getHandle(workflowId).describe()).runId;
      while (runId) {
        const history: proto.api.history.v1.IHistory = await temporal.client.workflow.getHandle(workflowId, runId).fetchHistory();
        const events = history.events ?? [];
        runs.push({ events: events.length, bytes: JSON.stringify(history).length });
        runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
      }
      const mostEvents = Math.max(...runs.map((run) => run.events));
      const mostBytes = Math.max(...runs.map((run) => run.bytes));
      row.requests = [...counts.values()].reduce((sum, count) => sum + count, 0);
      row.outcome = `${runs.length} runs, at most ${mostEvents} events and ${(mostBytes / 1024 / 1024).toFixed(1)} MB each`;
      expect(runs.length).toBeGreaterThanOrEqual(20);
      expect(mostEvents).toBeLessThan(HISTORY_EVENT_LIMIT / 5);
      expect(mostBytes).toBeLessThan(HISTORY_BYTE_LIMIT / 10);
    } finally {
      await fastApi.stop();
    }
  }, 600_000);
});
