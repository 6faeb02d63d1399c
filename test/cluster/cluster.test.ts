// The service as production runs it: the full Temporal server (PostgreSQL, 4 history shards),
// the API and two workers as processes of their own. The contract's main paths, then one
// worker killed and both restarted one after the other while writes arrive: every accepted
// write's delivery is received once or recorded as failed; none is lost, none sent twice.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_CONSECUTIVE_FAILURES } from '../../src/contract/rules';
import { freePort } from '../support/ports';
import { ids, prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses, type WriteAnswer } from '../support/processes';
import { waitFor } from '../support/wait';
import { recordScenario, type ScenarioFigures } from '../faults/support/scenarios';

/** A worker runs at most this many activities at once (the SDK's default): the most a kill can leave in doubt. */
const MAX_IN_FLIGHT = 100;

let dir: string;
let processes: ServiceProcesses;
let api: PartProcess;
const workers: { process: PartProcess; port: number }[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-cluster-parts-'));
  processes = await prepareServiceProcesses({ databaseUrl: inject('databaseUrl'), temporalAddress: inject('temporalAddress'), dir });
  const ports = [await freePort(), await freePort()];
  // The first worker creates the retention schedule; the second finds it.
  for (const port of ports) workers.push({ process: await startPart('worker', processes.env, port), port });
  api = await startPart('api', processes.env, processes.apiPort);
});

afterAll(async () => {
  await Promise.allSettled([api?.stop(), ...workers.map((worker) => worker.process.stop())]);
  await processes?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const restartWorker = async (worker: (typeof workers)[number]) => {
  worker.process = await startPart('worker', processes.env, worker.port);
};

/** Reports `count` writes while `disturb` runs once deliveries flow; then the ledger, recorded on `row`. */
async function writesThrough(name: string, count: number, row: ScenarioFigures, disturb: () => Promise<void>) {
  const scenario = await processes.setUp(name);
  const writeIds = ids('w', count);
  const started = performance.now();
  const answers = new Map<string, WriteAnswer>();
  const reporting = processes.report(scenario.listId, writeIds, 20, answers);
  await waitFor(async () => (answers.size >= count / 10 ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 20,
    what: `${count / 10} writes answered`,
  });
  await disturb();
  await reporting;
  await processes.settle(scenario.listId, writeIds);
  row.durationMs = Math.round(performance.now() - started);

  const cursors = [...answers.values()].map((answer) => answer.cursor!);
  const ledger = await processes.ledger(scenario, cursors);
  Object.assign(row, {
    writesAccepted: cursors.length,
    writesLost: ledger.lost.length,
    fiveXx: [...answers.values()].filter((answer) => answer.status >= 500).length,
    outcome: `${ledger.internal} recorded internal`,
    note: `${ledger.duplicates.length} delivered twice`,
  });
  expect([...answers.values()].every((answer) => answer.status === 202)).toBe(true);
  expect(ledger.lost).toEqual([]);
  expect(ledger.duplicates).toEqual([]);
  expect(ledger.failedOtherwise).toEqual([]);
  return ledger;
}

describe('on the full Temporal server, with the API and two workers as processes', () => {
  it('serves the dashboard from the compiled build', async () => {
    for (const asset of ['/dashboard', '/dashboard/app.js', '/dashboard/app.css']) {
      const response = await processes.request('GET', asset);
      expect(response.status, asset).toBe(200);
      expect(String(response.body).length, asset).toBeGreaterThan(0);
    }
  });

  it('registers, delivers, pauses at 20 failures, and delivers again once reactivated', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'registration, deliveries, auto-pause, reactivation' });
    const { listId, webhookId, path: receiverPath, token } = await processes.setUp('lifecycle');
    const webhook = () => processes.request('GET', `/v3/webhooks/${webhookId}`, { token });
    const delivered = () =>
      processes.receiver.requests.filter((request) => request.path === receiverPath && request.headers['svc-event'] !== 'ping').length;

    await processes.report(listId, ['first']);
    await processes.settle(listId, ['first']);
    expect(delivered()).toBe(1);

    processes.receiver.respondWith((request) => (request.path === receiverPath ? { status: 500 } : {}));
    const failing = ids('failing', MAX_CONSECUTIVE_FAILURES);
    await processes.report(listId, failing, 5);
    await processes.settle(listId, failing);
    const paused = await waitFor(
      async () => {
        const { body } = await webhook();
        return body.status === 'paused' ? body : undefined;
      },
      { timeoutMs: 30_000, what: `${webhookId} paused` },
    );
    expect(paused).toMatchObject({ pausedReason: 'auto_failures', consecutiveFailures: MAX_CONSECUTIVE_FAILURES });

    processes.receiver.respondWith({});
    const reactivated = await processes.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'active' } });
    expect(reactivated.body).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 0 });
    await processes.report(listId, ['after-reactivation']);
    await processes.settle(listId, ['after-reactivation']);
    expect(delivered()).toBe(MAX_CONSECUTIVE_FAILURES + 2);
    expect((await webhook()).body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    row.writesAccepted = MAX_CONSECUTIVE_FAILURES + 2;
    row.writesLost = 0;
  });

  it('kill -9 one worker during 1000 writes: the other carries on', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'kill -9 one of two workers during 1000 writes' });
    const ledger = await writesThrough('one-worker-killed', 1000, row, () => workers[0].process.kill());
    expect(ledger.internal).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    await restartWorker(workers[0]);
  });

  it('a rolling restart of both workers during 1000 writes', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'rolling restart of both workers during 1000 writes' });
    const ledger = await writesThrough('rolling-restart', 1000, row, async () => {
      for (const worker of workers) {
        await worker.process.stop();
        await restartWorker(worker);
      }
    });
    expect(ledger.internal).toBeLessThanOrEqual(MAX_IN_FLIGHT);
  });
});
