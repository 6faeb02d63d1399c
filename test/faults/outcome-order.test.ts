// Two worker processes telling one webhook's outcomes out of order (DESIGN.md §6). Worker A
// serves only the main task queue (small writes), worker B only the bulk one (large writes)
// and reaches PostgreSQL through a proxy that holds its delivery log statements: B's failure F
// of the watched webhook ends first, then A's success S ends and is logged (and told, when it
// has a failure to reset), and only then does the test release F's row, which B logs and tells.
// Whatever the timing, F reaches the webhook's workflow after S, and the count and the pause
// must be those of the order the attempts ended in.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { MAX_CONSECUTIVE_FAILURES } from '../../src/contract/rules';
import { bulkTaskQueue, lifecycleWorkflowId, listWriteWorkflowId, TASK_QUEUE } from '../../src/contract/workflows';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded';
import { LARGE_WRITE_DELIVERIES } from '../../src/temporal/client';
import { findTemporalCli, startDevServer } from '../../src/temporal/dev-server';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../../src/limits';
import { TOPICS } from '../../src/topics';
import { sample } from '../support/metrics';
import { outcomesSignalled } from '../support/outcome-signals';
import { freePort } from '../support/ports';
import { ids, prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import { waitFor } from '../support/wait';
import { consecutiveFailuresByEndTime, deliveryLedger, NO_MISMATCHES, webhookLog, type LoggedDelivery } from './support/delivery-ledger';
import { recordScenario } from './support/scenarios';
import { startStatementHoldingProxy, type StatementHoldingProxy } from './support/statement-holding-proxy';

/** Accounts that are members of the large list, each with MAX_WEBHOOKS_PER_ACCOUNT webhooks on every topic. */
const MEMBER_ACCOUNTS = 5;
/** The large write's deliveries: the watched webhook's one, and one per topic of each member's webhook. */
const LARGE_WRITE_SIZE = 1 + MEMBER_ACCOUNTS * MAX_WEBHOOKS_PER_ACCOUNT * TOPICS.length;
/** Changes that fire every topic (src/topics.ts), so that each member's webhook gets one delivery of each. */
const everyTopic = (memberId: string) => [
  { type: 'item.added' },
  { type: 'item.removed' },
  { type: 'item.checked' },
  { type: 'member.joined', accountId: memberId },
];

let dir: string;
let temporal: TestWorkflowEnvironment;
let database: EmbeddedDatabase;
let processes: ServiceProcesses;
let api: PartProcess;
let mainWorker: PartProcess;

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: path.resolve(__dirname, '../..') });
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-outcome-order-'));
  await chmod(dir, 0o755); // PostgreSQL runs as user postgres when we are root
  const [cliPath, temporalPort, databasePort, mainWorkerPort] = await Promise.all([findTemporalCli(), freePort(), freePort(), freePort()]);
  [temporal, database] = await Promise.all([
    startDevServer({ cliPath, namespace: 'default', port: temporalPort }),
    startEmbeddedPostgres(dir, databasePort),
  ]);
  processes = await prepareServiceProcesses({ databaseUrl: database.url, temporalAddress: `127.0.0.1:${temporalPort}`, dir });
  [api, mainWorker] = await Promise.all([
    startPart('api', processes.env, processes.apiPort),
    startPart('worker', { ...processes.env, WORKER_TASK_QUEUES: 'main' }, mainWorkerPort),
  ]);
}, 240_000);

afterAll(async () => {
  await Promise.allSettled([api?.stop(), mainWorker?.stop()]);
  await processes?.close();
  await Promise.allSettled([temporal?.teardown(), database?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

interface Fixture {
  /** The watched webhook, alone in its account, on list.changed. */
  webhookId: string;
  token: string;
  path: string;
  /** Its account's own list: a write to it is one delivery, to the watched webhook (main task queue). */
  smallListId: string;
  /** Its account's list with the members: a write firing every topic is LARGE_WRITE_SIZE deliveries (bulk task queue). */
  largeListId: string;
  memberIds: string[];
}

async function setUpFixture(name: string): Promise<Fixture> {
  const { request, internal } = processes;
  const createAccount = async (accountName: string) =>
    (await request('POST', '/internal/v3/accounts', { ...internal, body: { name: accountName } })).body as { id: string; token: string };
  const [owner, ...members] = await Promise.all(
    [name, ...ids(`${name}-member`, MEMBER_ACCOUNTS)].map((accountName) => createAccount(accountName)),
  );
  const smallListId = `${name}-small`;
  const largeListId = `${name}-large`;
  for (const [listId, memberAccountIds] of [
    [smallListId, []],
    [largeListId, members.map((member) => member.id)],
  ] as const) {
    const list = await request('PUT', `/internal/v3/lists/${listId}`, {
      ...internal,
      body: { ownerAccountId: owner.id, memberAccountIds },
    });
    if (list.status !== 201) throw new Error(`creating list ${listId} answered ${list.status}`);
  }
  const watchedPath = `/${name}/watched`;
  const watched = await processes.registerWebhook(owner.token, watchedPath);
  await Promise.all(
    members.map(async (member, m) => {
      for (let w = 0; w < MAX_WEBHOOKS_PER_ACCOUNT; w++) await processes.registerWebhook(member.token, `/${name}/m${m}/w${w}`, TOPICS);
    }),
  );
  return {
    webhookId: watched.id,
    token: owner.token,
    path: watchedPath,
    smallListId,
    largeListId,
    memberIds: members.map((member) => member.id),
  };
}

/** The receiver answers the watched webhook's deliveries `status`; its pings, and every other webhook, 200. */
function answerWatched(fixture: Fixture, status: number): void {
  processes.receiver.respondWith((received) =>
    received.path === fixture.path && received.headers['svc-event'] !== 'ping' ? { status } : {},
  );
}

/** Writes to the watched webhook's own list, each accepted and delivered (its workflow ends once its delivery has been logged and told). */
async function deliverSmallWrites(fixture: Fixture, writeIds: string[]): Promise<void> {
  const answers = await processes.report(fixture.smallListId, writeIds);
  expect([...answers.values()].map((answer) => answer.status)).toEqual(writeIds.map(() => 202));
  await processes.settle(fixture.smallListId, writeIds);
}

/**
 * Worker B: the bulk task queue only, its delivery log statements held by a proxy until the
 * test releases them. Its slots hold every delivery of the large write at once: a delivery
 * whose row is held keeps its slot, and the watched webhook's must not wait behind them.
 */
async function startHeldBulkWorker() {
  const proxy = await startStatementHoldingProxy(processes.env.DATABASE_URL, /INSERT INTO deliveries\b/i);
  const env = {
    ...processes.env,
    DATABASE_URL: proxy.url,
    WORKER_TASK_QUEUES: 'bulk',
    BULK_DELIVERIES_PER_WORKER: String(LARGE_WRITE_SIZE),
  };
  const worker = await startPart('worker', env, await freePort());
  onTestFinished(async () => {
    proxy.release();
    await worker.stop();
    await proxy.close();
  });
  return { proxy, worker };
}

/**
 * F, then S, told in the other order: the large write's delivery to the watched webhook fails
 * on B (F), whose row the proxy holds; then a small write's delivery to it succeeds on A (S)
 * and is logged; then B's rows are released, and F is logged and told.
 */
async function failOnBulkThenSucceedOnMain(fixture: Fixture, bulk: { proxy: StatementHoldingProxy; worker: PartProcess }) {
  answerWatched(fixture, 500);
  const large = await processes.request('POST', `/internal/v3/lists/${fixture.largeListId}/writes`, {
    ...processes.internal,
    body: { writeId: 'large', changes: everyTopic(fixture.memberIds[0]) },
  });
  expect(large.status).toBe(202);
  // F has ended once B counts the one failure of the write, just before handing its row to the log.
  const failuresOnBulk = async () =>
    sample(await (await fetch(`${bulk.worker.url}/metrics`)).text(), 'webhook_deliveries_total', {
      topic: 'list.changed',
      outcome: 'failed',
    });
  await waitFor(async () => ((await failuresOnBulk()) === 1 && bulk.proxy.heldStatements.length > 0 ? true : undefined), {
    what: "the large write's failure answered, its log statement held",
  });
  const largeWrite = await temporal.client.workflow.getHandle(listWriteWorkflowId(fixture.largeListId, 'large')).describe();
  expect(largeWrite.taskQueue).toBe(bulkTaskQueue(TASK_QUEUE));
  expect((await deliveryLedger(processes.sql, fixture.largeListId)).rows).toEqual([]);

  answerWatched(fixture, 200);
  // S: ended after F, logged, and told if it had a failure to reset.
  await deliverSmallWrites(fixture, ['success']);

  // Released at once: webhook/{id} holds S for OUTCOME_SETTLE_MS after S ended, the time an
  // outcome that ended before it has to arrive and be counted first (DESIGN.md §6).
  bulk.proxy.release();
  await processes.settle(fixture.largeListId, ['large']);
  const largeLog = await deliveryLedger(processes.sql, fixture.largeListId);
  expect(largeLog.planned).toBe(LARGE_WRITE_SIZE);
  expect(largeLog.mismatches).toEqual(NO_MISMATCHES);
}

/** The webhook as the API answers it, once the mirror of its workflow's state has counted `failures` failures. */
async function webhookOnceCounted(fixture: Fixture, failures: number) {
  await waitFor(
    async () => {
      const [stored] = await processes.sql<{ failuresCounted: number }[]>`
        SELECT failures_counted::integer AS "failuresCounted" FROM webhooks WHERE id = ${fixture.webhookId}`;
      return stored.failuresCounted === failures ? true : undefined;
    },
    { what: `webhook/{id} to have counted ${failures} failures` },
  );
  const { status, pausedReason, consecutiveFailures } = (
    await processes.request('GET', `/v3/webhooks/${fixture.webhookId}`, { token: fixture.token })
  ).body;
  return { status, pausedReason, consecutiveFailures };
}

/** The watched webhook's rows in the order their attempts ended, each as its write's size and outcome. */
async function rowsByEndTime(fixture: Fixture): Promise<{ rows: LoggedDelivery[]; described: string[] }> {
  const rows = await webhookLog(processes.sql, fixture.webhookId);
  const described = rows.map((row) => `${row.listId === fixture.largeListId ? 'large' : 'small'} ${row.outcome}`);
  return { rows, described };
}

/** The outcomes each `deliveryOutcomes` signal to the webhook's workflow carried, from the `from`th on: "2xx" or "failure". */
async function signalsTold(fixture: Fixture, from = 0): Promise<string[]> {
  const history = await temporal.client.workflow.getHandle(lifecycleWorkflowId(fixture.webhookId)).fetchHistory();
  return (history.events ?? [])
    .flatMap((event) => {
      const delivered = outcomesSignalled(event);
      return delivered ? [delivered] : [];
    })
    .slice(from)
    .map((delivered) => delivered.map((ok) => (ok ? '2xx' : 'failure')).join('+'));
}

describe('two worker processes telling one webhook outcomes out of order', () => {
  it(`the ${MAX_CONSECUTIVE_FAILURES}th failure, told after a success that ended later, pauses the webhook`, async ({ task }) => {
    const row = recordScenario(task, { scenario: `failure told after a later 2xx: the ${MAX_CONSECUTIVE_FAILURES}th pauses` });
    expect(LARGE_WRITE_SIZE).toBeGreaterThan(LARGE_WRITE_DELIVERIES);
    const fixture = await setUpFixture('late-last-failure');
    onTestFinished(() => processes.receiver.reset());
    answerWatched(fixture, 500);
    const before = ids('before', MAX_CONSECUTIVE_FAILURES - 1);
    await deliverSmallWrites(fixture, before);
    expect(await webhookOnceCounted(fixture, before.length)).toEqual({
      status: 'active',
      pausedReason: null,
      consecutiveFailures: before.length,
    });
    const signalsBefore = (await signalsTold(fixture)).length;

    await failOnBulkThenSucceedOnMain(fixture, await startHeldBulkWorker());

    const webhook = await webhookOnceCounted(fixture, MAX_CONSECUTIVE_FAILURES);
    const { rows, described } = await rowsByEndTime(fixture);
    const told = await signalsTold(fixture, signalsBefore);
    Object.assign(row, {
      writesAccepted: before.length + 2, // with the large write and `success`; each checked 202
      outcome: `${webhook.status} at ${webhook.consecutiveFailures}`,
      note: `told after the first ${before.length}: ${told.join(', ')}`,
    });
    // Soft: each figure is reported, whichever others fail.
    expect.soft(described).toEqual([...before.map(() => 'small failed'), 'large failed', 'small delivered']);
    expect.soft(consecutiveFailuresByEndTime(rows)).toBe(MAX_CONSECUTIVE_FAILURES);
    expect.soft(webhook).toEqual({ status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: MAX_CONSECUTIVE_FAILURES });
  }, 300_000);

  it('a success that ended after a failure, logged first and telling nothing, still resets it', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'failure logged after a later 2xx that told nothing' });
    const fixture = await setUpFixture('untold-success');
    onTestFinished(() => processes.receiver.reset());

    await failOnBulkThenSucceedOnMain(fixture, await startHeldBulkWorker());
    // A failure that ends last: once it is counted, so is every outcome that ended before it
    // and was told before it, F and S among them (each is held until it settles, in end order).
    answerWatched(fixture, 500);
    await deliverSmallWrites(fixture, ['after']);

    const webhook = await webhookOnceCounted(fixture, 2);
    const { rows, described } = await rowsByEndTime(fixture);
    const told = await signalsTold(fixture);
    Object.assign(row, {
      writesAccepted: 3, // the large write, `success` and `after`; each checked 202
      outcome: `${webhook.status} at ${webhook.consecutiveFailures}`,
      note: `told: ${told.join(', ')}`,
    });
    expect.soft(described).toEqual(['large failed', 'small delivered', 'small failed']);
    expect.soft(consecutiveFailuresByEndTime(rows)).toBe(1);
    expect.soft(webhook).toEqual({ status: 'active', pausedReason: null, consecutiveFailures: 1 });
  }, 300_000);
});
