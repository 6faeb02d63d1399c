// `npm run record-histories`: runs every workflow type through each of its branches on the
// real stack (dev server, PostgreSQL, HTTPS receivers) and saves their histories under
// test/workflows/histories/<release>/, where the replay test replays them on later code.
// A branch whose event sequence an earlier release already holds is left out: that
// recording replays the same path (docs/upgrades.md). <release> is package.json's version
// unless HISTORIES_RELEASE names another.
import { mkdir, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../../activities';
import { version } from '../../../package.json';
import { createLogger } from '../../../src/logger';
import { metrics } from '../../../src/metrics';
import { createCredentialPresenter } from '../../../src/delivery/credential-presenter';
import { createHttpSender } from '../../../src/delivery/sender';
import { createAddressPolicy } from '../../../src/delivery/url-policy';
import { TOPICS } from '../../../src/topics';
import {
  bulkTaskQueue,
  lifecycleWorkflowId,
  probesWorkflowId,
  listWriteBatchWorkflowId,
  noticeWorkflowId,
  recoveryWorkflowId,
  redeliveryWorkflowId,
  registrationWorkflowId,
  testEventWorkflowId,
  reencryptionWorkflowId,
} from '../../../src/contract/workflows';
import type { ListWriteDeliveries } from '../../../src/contract/payloads';
import {
  deliverListWrite,
  mailNotice,
  probePausedWebhooks,
  pruneRecords,
  recoverDeliveries,
  reencryptSecrets,
  webhookLifecycle,
} from '../../../workflows';
import { RESEAL_BATCH_SIZE } from '../../../activities/reencryption';
import { parseSecretKeys } from '../../../src/config';
import { createSecretBox } from '../../../src/secret-keys';
import { insertSealedWebhooks } from '../../support/sealed-webhooks';
import { lifecycleStateQuery, pausesQuery } from '../../../src/contract/messages';
import { insertNotice } from '../../../src/db/notices';
import { recordRecovery } from '../../../src/db/recoveries';
import { newId } from '../../../src/ids';
import { AccountIdKey, ListIdKey, WebhookIdKey, WebhookStatusKey } from '../../../src/contract/search-attributes';
import type { Receiver } from '../../support/receiver';
import { startTestStack, type TestStack } from '../../support/stack';
import { waitFor } from '../../support/wait';
import { FIXED_SECRET_KEYS, fixedSecretBox } from '../../../scripts/lib/fixed-secret-keys';
import { OUTCOME_SETTLE_MS } from '../../../src/contract/rules';
import {
  earlierRecording,
  eventSequence,
  historiesDirectory,
  tracedHistoriesDirectory,
  type RecordedHistory,
} from '../support/recorded-histories';

const release = process.env.HISTORIES_RELEASE ?? version;
const traced = process.env.HISTORIES_TRACING === 'on';
const histories = traced ? tracedHistoriesDirectory : historiesDirectory;
const directory = path.join(histories, release);
const written: string[] = [];
const leftOut: string[] = [];
/** A key the stack also holds, after the fixed one: secrets sealed under it are re-sealed under the first. */
const OLDER_KEY = `recorder-older:${Buffer.alloc(32, 5).toString('base64')}`;

let stack: TestStack;
let receiver: Receiver;
beforeAll(async () => {
  // Tracing on without an exporter: the trace context travels, and nothing is sent anywhere.
  // Probes a second apart, so that a pause's probes are recorded within the run.
  stack = await startTestStack({
    PROBE_INTERVALS: '1s',
    SECRET_KEYS: `${FIXED_SECRET_KEYS},${OLDER_KEY}`,
    ...(traced ? { TRACE_RECEIVERS: 'on' } : {}),
  });
  receiver = await stack.startReceiver();
  // Paths under /fail answer 500; everything else 200.
  receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));
});
afterAll(async () => {
  await stack?.stop();
  // A release that repeats every earlier sequence keeps no folder.
  const files = await readdir(directory).catch(() => undefined);
  if (files?.length === 0) await rmdir(directory);
  console.log(
    [
      `Release ${release}: wrote ${written.length} histories${written.length ? ` to ${path.relative(process.cwd(), directory)}` : ', so it has no folder'}`,
      ...written.map((name) => `  wrote     ${name}`),
      `left out ${leftOut.length} that repeat an earlier release's event sequence`,
      ...leftOut.map((line) => `  left out  ${line}`),
    ].join('\n'),
  );
});

/**
 * Saves the history of one run (the latest when runId is omitted), open or closed, as
 * `<name>.json`, unless an earlier release holds that branch with the same event sequence.
 */
async function save(name: string, workflowId: string, runId?: string): Promise<void> {
  const history = await stack.service.client.workflow.getHandle(workflowId, runId).fetchHistory();
  expect(history.events?.length).toBeGreaterThan(0);
  const json = historyToJSON(history);
  const branch = `${name}.json`;
  const file = path.join(directory, branch);
  const recordedBy = earlierRecording(release, branch, eventSequence(JSON.parse(json) as RecordedHistory), histories);
  if (recordedBy) {
    // Also drops the file an earlier run of the recorder may have left for this release.
    await rm(file, { force: true });
    leftOut.push(`${name} (as recorded by ${recordedBy})`);
    return;
  }
  await mkdir(directory, { recursive: true });
  await writeFile(file, `${json}\n`);
  written.push(name);
}

async function registrationWorkflowIds(accountId: string): Promise<string[]> {
  const rows = await stack.service.sql<{ id: string }[]>`
    SELECT id FROM registrations WHERE account_id = ${accountId} ORDER BY created_at, id`;
  return rows.map((row) => registrationWorkflowId(accountId, row.id));
}

async function pingWorkflowId(webhookId: string): Promise<string> {
  return waitFor(
    async () => {
      for await (const execution of stack.service.client.workflow.list({
        query: `WorkflowType = 'pingWebhook' AND WebhookId = '${webhookId}'`,
      })) {
        return execution.workflowId;
      }
      return undefined;
    },
    { what: `the ping workflow of ${webhookId}` },
  );
}

async function setWebhookStatus(token: string, webhookId: string, status: 'active' | 'paused') {
  const response = await stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status } });
  expect(response.status).toBe(200);
}

/** When the probing of the webhook's pause began, once it has. */
function probingOf(webhookId: string): Promise<number> {
  return waitFor(
    async () => {
      const state = await stack.service.client.workflow.getHandle(lifecycleWorkflowId(webhookId)).query(lifecycleStateQuery);
      return state.probes === 'probing' ? state.probesSince! : undefined;
    },
    { what: `the probes of ${webhookId}` },
  );
}

/** Starts `deliverListWrite` directly, for branches a write through the API cannot reach on demand. */
function startWrite(taskQueue: string, name: string, input: Omit<ListWriteDeliveries, 'write'> & { listId: string }) {
  const { listId, ...rest } = input;
  const write = { listId, writeId: name, cursor: 1, at: new Date().toISOString(), topics: [...TOPICS] };
  return stack.service.client.workflow.start(deliverListWrite, {
    taskQueue,
    workflowId: `list-write/${listId}/${name}`,
    args: [{ write, ...rest }],
    typedSearchAttributes: [{ key: ListIdKey, value: listId }],
  });
}

describe(`recording workflow histories of release ${release}`, () => {
  it('registerWebhook: created, updated, unreachable', async () => {
    const account = await stack.createAccount();
    await stack.registerWebhook(account.token, receiver.urlFor('/registered'));
    const update = await stack.request('POST', '/v3/webhooks', {
      token: account.token,
      body: { url: receiver.urlFor('/registered'), events: ['item.added'] },
    });
    expect(update.status).toBe(200);
    const unreachable = await stack.request('POST', '/v3/webhooks', {
      token: account.token,
      body: { url: receiver.urlFor('/fail/registration') },
    });
    expect(unreachable.status).toBe(422);
    const [created, updated, refused] = await registrationWorkflowIds(account.id);
    await save('registration-created', created);
    await save('registration-updated', updated);
    await save('registration-unreachable', refused);
  });

  it('pingWebhook: delivered and failed', async () => {
    const account = await stack.createAccount();
    for (const [name, url] of [
      ['ping-delivered', '/pinged'],
      ['ping-failed', '/pinged-then-fail'],
    ] as const) {
      const webhook = await stack.registerWebhook(account.token, receiver.urlFor(url));
      if (name === 'ping-failed')
        receiver.respondWith((request) => (request.path.startsWith('/fail') || request.path === url ? { status: 500 } : {}));
      const response = await stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token: account.token });
      expect(response.body.delivered).toBe(name === 'ping-delivered');
      await save(name, await pingWorkflowId(webhook.id));
    }
    receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));
  });

  it('redeliverEvent: delivered and failed', async () => {
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/redelivered'));
    await stack.reportWrite(listId, 'to-redeliver');
    const [logged] = (await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token: owner.token })).body.data;
    for (const name of ['redelivery-delivered', 'redelivery-failed'] as const) {
      if (name === 'redelivery-failed')
        receiver.respondWith((request) => (request.path.startsWith('/fail') || request.path === '/redelivered' ? { status: 500 } : {}));
      const response = await stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${logged.id}/redeliveries`, {
        token: owner.token,
      });
      expect(response.body.delivered).toBe(name === 'redelivery-delivered');
      await save(name, redeliveryWorkflowId(webhookId, response.body.deliveryId));
    }
    receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));
  });

  it('sendTestEvent: delivered and failed', async () => {
    const account = await stack.createAccount();
    const webhook = await stack.registerWebhook(account.token, receiver.urlFor('/tested'), { events: [...TOPICS] });
    for (const name of ['test-event-delivered', 'test-event-failed'] as const) {
      if (name === 'test-event-failed')
        receiver.respondWith((request) => (request.path.startsWith('/fail') || request.path === '/tested' ? { status: 500 } : {}));
      const response = await stack.request('POST', `/v3/webhooks/${webhook.id}/test-events`, {
        token: account.token,
        body: { event: 'item.checked' },
      });
      expect(response.body.delivered).toBe(name === 'test-event-delivered');
      await save(name, testEventWorkflowId(webhook.id, response.body.deliveryId));
    }
    receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));
  });

  it('deliverListWrite: delivered to every topic, and failed at the receiver', async () => {
    const delivered = await stack.setUpListWebhook(receiver.urlFor('/all-topics'), { events: [...TOPICS] });
    await stack.reportWrite(delivered.listId, 'delivered', [{ type: 'item.added' }, { type: 'item.checked' }]);
    await save('list-write-delivered', `list-write/${delivered.listId}/delivered`);

    const failing = await stack.setUpListWebhook(receiver.urlFor('/answers-500-later'), { events: ['item.added', 'list.changed'] });
    receiver.respondWith((request) => (request.path === '/answers-500-later' ? { status: 500 } : {}));
    await stack.reportWrite(failing.listId, 'failed');
    await save('list-write-failed', `list-write/${failing.listId}/failed`);
  });

  it('deliverListWrite: skipped (webhook paused or deleted since the write), and past one wave of 500', async () => {
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/paused'));
    await setWebhookStatus(owner.token, webhookId, 'paused');
    const skipped = await startWrite(stack.taskQueue, 'skipped', {
      listId,
      recipients: [
        { webhookId, topics: ['list.changed'] },
        { webhookId: 'wh_000000000000000000000000', topics: ['item.added'] },
      ],
      deliveryTimeoutMs: 3000,
    });
    await skipped.result();
    await save('list-write-skipped', skipped.workflowId);

    // 505 deliveries to webhooks that no longer exist, each skipped: more than one wave (0.1.0), more than one batch (0.2.0 on).
    const gone = Array.from({ length: 101 }, (_, i) => ({ webhookId: `wh_gone${String(i).padStart(20, '0')}`, topics: [...TOPICS] }));
    const waves = await startWrite(stack.taskQueue, 'two-waves', { listId, recipients: gone, deliveryTimeoutMs: 3000 });
    await waves.result();
    await save('list-write-over-500', waves.workflowId);
  });

  it('deliverListWrite in child batches (0.2.0 on), and deliverListWriteBatch', async () => {
    const { listId } = await stack.setUpListWebhook(receiver.urlFor('/batched'));
    const gone = Array.from({ length: 3 }, (_, i) => ({
      webhookId: `wh_batched${String(i).padStart(17, '0')}`,
      topics: ['item.added' as const, 'list.changed' as const],
    }));
    const batched = await startWrite(stack.taskQueue, 'batched', {
      listId,
      recipients: gone,
      deliveryTimeoutMs: 3000,
      deliveriesPerBatch: 4,
    });
    await batched.result();
    await save('list-write-child-batches', batched.workflowId);
    await save('list-write-batch', listWriteBatchWorkflowId(listId, 'batched', 1));
  });

  it('pruneRecords (0.2.0 on)', async () => {
    const workflowId = `prune-records-recording-${release}`;
    await stack.service.client.workflow.execute(pruneRecords, { taskQueue: stack.taskQueue, workflowId, args: [{ retentionDays: 30 }] });
    await save('prune-records', workflowId);
  });

  it('mailNotice: one notice, its mail settled (this stack has no SMTP_URL: not_configured)', async () => {
    const { owner, webhookId } = await stack.setUpListWebhook(receiver.urlFor('/noticed'));
    const notice = await insertNotice(stack.service.sql, {
      accountId: owner.id,
      webhookId,
      type: 'webhook.failing',
      url: receiver.urlFor('/noticed'),
      consecutiveFailures: 10,
      mail: 'pending',
    });
    const workflowId = noticeWorkflowId(notice.id);
    const outcome = await stack.service.client.workflow.execute(mailNotice, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ noticeId: notice.id }],
    });
    expect(outcome).toBe('not_configured');
    await save('notice-mail', workflowId);
  });

  it('deliverListWrite: a delivery lost on our side (its activity times out) is recorded as internal', async () => {
    const { webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/lost'));
    const taskQueue = `${stack.taskQueue}-lost`;
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const http = createHttpSender({ timeoutMs: 1000, policy: createAddressPolicy([]), userAgent: 'recorder' });
    const activities = createActivities({
      sql: stack.service.sql,
      bookkeepingSql: stack.service.sql,
      http,
      credentials: createCredentialPresenter({
        dialer: http.dialer,
        secrets: fixedSecretBox(),
        userAgent: 'recorder',
        logger: createLogger('silent'),
        maxWebhooks: 10,
      }),
      secrets: fixedSecretBox(),
      logger: createLogger('silent'),
      metrics,
      client: stack.service.client,
      notices: { mailer: undefined, from: 'recorder@localhost', maxPerHour: 20, dashboardUrl: 'http://localhost/dashboard' },
      probePlan: null,
      outcomeSettleMs: OUTCOME_SETTLE_MS,
    });
    // A worker that never finishes a delivery, as if it had died mid-POST: the activity
    // times out and the workflow records the delivery as our own failure.
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowsPath: path.resolve(__dirname, '../../../workflows'),
      activities: { ...activities, deliverEvent: () => Context.current().cancelled },
      shutdownGraceTime: '100 ms',
    });
    await worker.runUntil(async () => {
      const lost = await startWrite(taskQueue, 'lost', {
        listId,
        recipients: [{ webhookId, topics: ['list.changed'] }],
        deliveryTimeoutMs: 100,
      });
      await lost.result();
      await save('list-write-internal-failure', lost.workflowId);
    });
    await http.close();
    await connection.close();
    const rows = await stack.service.sql`SELECT error FROM deliveries WHERE webhook_id = ${webhookId}`;
    expect(rows.map((row) => row.error)).toEqual(['internal']);
  });

  it('webhookLifecycle: counting and resets, still open', async () => {
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/counting'));
    // Each write's outcome, and the count it leaves.
    const steps = [
      [false, 1],
      [false, 2],
      [true, 0],
      [false, 1],
    ] as const;
    for (const [i, [delivered, count]] of steps.entries()) {
      receiver.respondWith((request) => (request.path === '/counting' && !delivered ? { status: 500 } : {}));
      await stack.reportWrite(listId, `count-${i}`);
      await stack.waitForFailureCount(owner.token, webhookId, count);
    }
    await save('webhook-counting-open', lifecycleWorkflowId(webhookId));
  });

  it('webhookLifecycle: auto-pause at 20, reactivation, manual pause, deletion', async () => {
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/pausing'));
    receiver.respondWith((request) => (request.path === '/pausing' ? { status: 500 } : {}));
    for (let i = 0; i < 20; i++) await stack.reportWrite(listId, `pause-${i}`);
    const paused = await stack.waitForFailureCount(owner.token, webhookId, 20);
    expect(paused).toMatchObject({ status: 'paused', pausedReason: 'auto_failures' });
    await probingOf(webhookId);
    await save('webhook-auto-paused-open', lifecycleWorkflowId(webhookId));

    receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));
    await setWebhookStatus(owner.token, webhookId, 'active');
    await stack.reportWrite(listId, 'after-reactivation');
    await setWebhookStatus(owner.token, webhookId, 'paused');
    await save('webhook-manually-paused-open', lifecycleWorkflowId(webhookId));
    expect((await stack.request('DELETE', `/v3/webhooks/${webhookId}`, { token: owner.token })).status).toBe(204);
    await stack.service.client.workflow.getHandle(lifecycleWorkflowId(webhookId)).result();
    await save('webhook-deleted', lifecycleWorkflowId(webhookId));
  });

  it('probePausedWebhooks: answered, stopped, out of time across a continue-as-new; webhookLifecycle: told its probes were answered', async () => {
    const client = stack.service.client;
    const probesQueue = bulkTaskQueue(stack.taskQueue);
    /** Whether `workflowId` probes a pause of `webhookId`. */
    const probes = async (workflowId: string, webhookId: string) =>
      (await client.workflow.getHandle(workflowId).query(pausesQuery)).some((pause) => pause.webhookId === webhookId);
    // Each receiver breaks once registered (its ping answered), until it comes back.
    const broken = new Set<string>();
    receiver.respondWith((request) => (request.path.startsWith('/fail') || broken.has(request.path) ? { status: 500 } : {}));

    // Answered: the receiver comes back after a failed probe.
    const answered = await stack.setUpListWebhook(receiver.urlFor('/probed/answered'));
    broken.add('/probed/answered');
    for (let i = 0; i < 20; i++) await stack.reportWrite(answered.listId, `probed-${i}`);
    await stack.waitForFailureCount(answered.owner.token, answered.webhookId, 20);
    await probingOf(answered.webhookId);
    await waitFor(async () => {
      const probed = await stack.request('GET', `/v3/webhooks/${answered.webhookId}/deliveries?kind=probe`, {
        token: answered.owner.token,
      });
      return probed.body.data.length > 0 || undefined;
    });
    broken.delete('/probed/answered');
    await waitFor(async () => {
      const state = await client.workflow.getHandle(lifecycleWorkflowId(answered.webhookId)).query(lifecycleStateQuery);
      return state.probes === 'reachable' || undefined;
    });
    await save('probes-answered-open', probesWorkflowId(probesQueue, answered.webhookId));
    await save('webhook-probes-answered-open', lifecycleWorkflowId(answered.webhookId));

    // Stopped: the owner reactivates the webhook while it is probed.
    const stopped = await stack.setUpListWebhook(receiver.urlFor('/probed/stopped'));
    broken.add('/probed/stopped');
    for (let i = 0; i < 20; i++) await stack.reportWrite(stopped.listId, `stopped-${i}`);
    await stack.waitForFailureCount(stopped.owner.token, stopped.webhookId, 20);
    await probingOf(stopped.webhookId);
    await setWebhookStatus(stopped.owner.token, stopped.webhookId, 'active');
    const stoppedShard = probesWorkflowId(probesQueue, stopped.webhookId);
    await waitFor(async () => !(await probes(stoppedShard, stopped.webhookId)) || undefined);
    await save('probes-stopped-open', stoppedShard);

    // Out of time: a run of its own with a plan of a few probes (PROBE_MAX_DAYS is counted in
    // days), and a history budget small enough to continue-as-new on the way.
    const expiredShard = `probes/recording/${stopped.webhookId}`;
    const started = await client.workflow.start(probePausedWebhooks, {
      taskQueue: probesQueue,
      workflowId: expiredShard,
      args: [
        {
          plans: [{ intervalsMs: [200], forMs: 1_000, deliveryTimeoutMs: 2_000 }],
          pauses: [{ webhookId: stopped.webhookId, since: Date.now(), plan: 0, sent: 0 }],
          eventsPerRun: 20,
        },
      ],
    });
    await waitFor(async () => !(await probes(expiredShard, stopped.webhookId)) || undefined);
    const { runId } = await client.workflow.getHandle(expiredShard).describe();
    expect(runId).not.toBe(started.firstExecutionRunId);
    // The run after a continue-as-new starts a second after the one before at the soonest
    // (Temporal's continueAsNewMinInterval): a history of its start alone replays nothing.
    await waitFor(
      async () =>
        (await client.workflow.getHandle(expiredShard, runId).fetchHistory()).events?.some((e) => e.workflowTaskCompletedEventAttributes) ||
        undefined,
      { what: 'the last run’s first workflow task' },
    );
    await save('probes-continued-as-new', expiredShard, started.firstExecutionRunId);
    await save('probes-expired-open', expiredShard, runId);
    receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));
  });

  it('webhookLifecycle: continue-as-new after its signal budget', async () => {
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/continuing'));
    const workflowId = lifecycleWorkflowId(webhookId);
    const client = stack.service.client;
    await client.workflow.getHandle(workflowId).terminate('recording: restart with a small signal budget');
    const started = await client.workflow.start(webhookLifecycle, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          state: { webhookId, accountId: owner.id, status: 'active', pausedReason: null, consecutiveFailures: 0, failuresCounted: 0 },
          signalsPerRun: 3,
        },
      ],
      typedSearchAttributes: [
        { key: WebhookIdKey, value: webhookId },
        { key: WebhookStatusKey, value: 'active' },
      ],
    });
    receiver.respondWith((request) => (request.path === '/continuing' ? { status: 500 } : {}));
    for (let i = 0; i < 5; i++) await stack.reportWrite(listId, `continue-${i}`);
    await stack.waitForFailureCount(owner.token, webhookId, 5);
    const { runId } = await client.workflow.getHandle(workflowId).describe();
    expect(runId).not.toBe(started.firstExecutionRunId);
    await save('webhook-continued-as-new', workflowId, started.firstExecutionRunId);
    await save('webhook-after-continue-as-new-open', workflowId, runId);
    receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));
  });

  it('recoverDeliveries: stopped (receiver failing), cancelled, continue-as-new, completed', async () => {
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/recovered'));
    const since = new Date().toISOString();
    receiver.respondWith((request) => (request.path.startsWith('/fail') || request.path === '/recovered' ? { status: 500 } : {}));
    for (let i = 0; i < 6; i++) await stack.reportWrite(listId, `missed-${i}`);
    const recover = async () => {
      const started = await stack.request('POST', `/v3/webhooks/${webhookId}/recoveries`, { token: owner.token, body: { since } });
      expect(started.status).toBe(202);
      return {
        id: started.body.id as string,
        handle: stack.service.client.workflow.getHandle(recoveryWorkflowId(webhookId, started.body.id)),
      };
    };
    // The receiver still fails: stopped after 5 in a row.
    const stopped = await recover();
    expect(await stopped.handle.result()).toMatchObject({ status: 'stopped', stoppedReason: 'receiver_failing' });
    await save('recovery-stopped', stopped.handle.workflowId);

    // Cancelled while its first send waits at the receiver.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const received = receiver.requests.length;
    receiver.respondWith(async (request) => {
      if (request.path === '/recovered') await released;
      return request.path.startsWith('/fail') ? { status: 500 } : {};
    });
    const cancelled = await recover();
    await receiver.waitForRequests(received + 1);
    await stack.request('DELETE', `/v3/webhooks/${webhookId}/recoveries/${cancelled.id}`, { token: owner.token });
    release();
    expect(await cancelled.handle.result()).toMatchObject({ status: 'cancelled', sent: 1 });
    await save('recovery-cancelled', cancelled.handle.workflowId);
    receiver.respondWith((request) => (request.path.startsWith('/fail') ? { status: 500 } : {}));

    // The 5 left, recorded as the API records them, started directly to continue-as-new after every 2 sends.
    const recorder = { tokenId: newId('tkn'), tokenName: 'recorder', clientAddress: '127.0.0.1' };
    const recovery = (await stack.service.sql.begin((tx) => recordRecovery(tx, { id: newId('rcv'), webhookId, since }, recorder)))!;
    const workflowId = recoveryWorkflowId(webhookId, recovery.id);
    const continued = await stack.service.client.workflow.start(recoverDeliveries, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ recoveryId: recovery.id, webhookId, total: recovery.total, ratePerSecond: 10, deliveryTimeoutMs: 3000, sendsPerRun: 2 }],
      typedSearchAttributes: [
        { key: AccountIdKey, value: owner.id },
        { key: WebhookIdKey, value: webhookId },
      ],
    });
    expect(await continued.result()).toMatchObject({ status: 'completed', total: 5, delivered: 5 });
    await save('recovery-continued-as-new', workflowId, continued.firstExecutionRunId);
    await save('recovery-completed', workflowId);
  });

  it('reencryptSecrets: continue-as-new after its batches, and completed', async () => {
    // One secret more than a batch holds, under the older key: a run of one batch continues-as-new, and the next completes.
    const account = await stack.createAccount();
    const older = createSecretBox(parseSecretKeys(OLDER_KEY));
    await insertSealedWebhooks(stack.service.sql, older, account.id, RESEAL_BATCH_SIZE + 1, (i) => `https://receiver.test/resealed/${i}`);
    const keyId = fixedSecretBox().keyId;
    const workflowId = reencryptionWorkflowId(stack.taskQueue, keyId);
    const started = await stack.service.client.workflow.start(reencryptSecrets, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ keyId, batchesPerRun: 1 }],
    });
    expect(await started.result()).toEqual({ keyId, resealed: RESEAL_BATCH_SIZE + 1 });
    await save('reencryption-continued-as-new', workflowId, started.firstExecutionRunId);
    await save('reencryption-completed', workflowId);
  });
});
