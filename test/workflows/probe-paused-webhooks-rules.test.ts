// The rules of `probes/{taskQueue}/{shard}`, on the real workflow code with activities the test
// passes: every probe due at a wake goes in one activity, an answer or the time limit ends a
// pause and tells `webhook/{id}`, a stop or a later pause replaces what the workflow knew, and
// its pauses cross a continue-as-new as they were.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPauseSignal, lifecycleStateQuery, pausesQuery, removePauseSignal } from '../../src/contract/messages';
import type { PauseProbing, ProbePlan, ProbesInput, WebhookLifecycleState } from '../../src/contract/payloads';
import { lifecycleWorkflowId } from '../../src/contract/workflows';
import { probePausedWebhooks, webhookLifecycle } from '../../workflows';
import { waitFor } from '../support/wait';
import { startWorkflowWorker, type WorkflowWorker } from './support/worker';

const HOUR = 3_600_000;
/** Every call of probeWebhooks, in order, and the time each was to spread its probes over. */
const calls: string[][] = [];
const spreadsMs: (number | undefined)[] = [];
/** The webhooks whose receivers answer 2xx. */
const answering = new Set<string>();
let worker: WorkflowWorker;
beforeAll(async () => {
  worker = await startWorkflowWorker({
    async probeWebhooks(webhookIds, spreadMs) {
      calls.push(webhookIds);
      spreadsMs.push(spreadMs);
      return webhookIds.map((id) => answering.has(id));
    },
    async storeWebhookState() {},
  });
});
afterAll(() => worker?.stop());

const newWebhookId = () => `wh_${randomBytes(12).toString('hex')}`;
const hourly: ProbePlan = { intervalsMs: [HOUR], forMs: 7 * 24 * HOUR, deliveryTimeoutMs: 2_000 };

function startShard(input: Partial<ProbesInput> = {}) {
  return worker.client.workflow.start(probePausedWebhooks, {
    taskQueue: worker.taskQueue,
    workflowId: `probes/rules/${randomBytes(4).toString('hex')}`,
    args: [{ plans: [], pauses: [], ...input }],
  });
}

/** `webhook/{id}` of a webhook paused by failures whose pause since `since` is being probed. */
function startPausedLifecycle(webhookId: string, since: number) {
  const state: WebhookLifecycleState = {
    webhookId,
    accountId: 'acc_rules',
    status: 'paused',
    pausedReason: 'auto_failures',
    consecutiveFailures: 20,
    failuresCounted: 20,
    probes: 'probing',
    probesSince: since,
  };
  return worker.client.workflow.start(webhookLifecycle, {
    taskQueue: worker.taskQueue,
    workflowId: lifecycleWorkflowId(webhookId),
    args: [{ state }],
  });
}

const callsWith = (webhookId: string) => calls.filter((call) => call.includes(webhookId));

describe('probePausedWebhooks', () => {
  it('sends every probe due at a wake in one activity, longest waiting first, spread over half the gather time; an answer ends the pause and tells its webhook', async () => {
    const [back, down, later] = [newWebhookId(), newWebhookId(), newWebhookId()];
    answering.add(back);
    const since = Date.now() - HOUR - 1_000; // the first probe of `back` and `down` is due, of `down` longer
    const lifecycle = await startPausedLifecycle(back, since);
    const shard = await startShard({
      plans: [hourly],
      pauses: [
        { webhookId: back, since, plan: 0, sent: 0 },
        { webhookId: down, since: since - 1_000, plan: 0, sent: 0 },
        { webhookId: later, since: Date.now(), plan: 0, sent: 0 },
      ],
    });
    const state = await waitFor(async () => {
      const told = await lifecycle.query(lifecycleStateQuery);
      return told.probes === 'reachable' ? told : undefined;
    });
    expect(state).toMatchObject({ status: 'paused', probesSince: since });
    expect(callsWith(back)).toEqual([[down, back]]); // the longer waiting first
    expect(spreadsMs[calls.findIndex((call) => call.includes(back))]).toBe(90_000); // an hour's 5%, halved
    expect(callsWith(later)).toEqual([]);
    const left = await shard.query(pausesQuery);
    expect(left.map((pause) => [pause.webhookId, pause.sent])).toEqual([
      [down, 1],
      [later, 0],
    ]);
  });

  it('ends a pause whose next probe would come after its time limit, and tells its webhook', async () => {
    const webhookId = newWebhookId();
    const since = Date.now();
    const lifecycle = await startPausedLifecycle(webhookId, since);
    // Probes at 100 and 200 ms after the pause; a third would come past the 250 ms limit.
    await startShard({
      plans: [{ intervalsMs: [100], forMs: 250, deliveryTimeoutMs: 2_000 }],
      pauses: [{ webhookId, since, plan: 0, sent: 0 }],
    });
    await waitFor(async () => ((await lifecycle.query(lifecycleStateQuery)).probes === 'expired' ? true : undefined));
    expect(callsWith(webhookId)).toEqual([[webhookId], [webhookId]]);
  });

  it('takes a pause back on a stop for that pause, ignores a repeat or an older pause, and replaces it with a later one', async () => {
    const webhookId = newWebhookId();
    const shard = await startShard();
    const pauseAt = (since: number) => ({ webhookId, since, plan: hourly });
    const sinces = async () => (await shard.query(pausesQuery)).map((pause) => pause.since);
    const first = Date.now();
    await shard.signal(addPauseSignal, pauseAt(first));
    await shard.signal(addPauseSignal, pauseAt(first));
    await shard.signal(addPauseSignal, pauseAt(first - 1));
    expect(await sinces()).toEqual([first]);
    await shard.signal(removePauseSignal, { webhookId, since: first - 1 });
    expect(await sinces()).toEqual([first]);
    await shard.signal(removePauseSignal, { webhookId, since: first });
    expect(await sinces()).toEqual([]);
    await shard.signal(addPauseSignal, pauseAt(first));
    await shard.signal(addPauseSignal, pauseAt(first + 1));
    expect(await sinces()).toEqual([first + 1]);
  });

  it('carries its pauses, their plans and their probes sent across continue-as-new', async () => {
    const plans: ProbePlan[] = [hourly, { ...hourly, intervalsMs: [2 * HOUR, 3 * HOUR] }];
    const pauses: PauseProbing[] = Array.from({ length: 12 }, (_, k) => ({
      webhookId: newWebhookId(),
      since: Date.now() - k,
      plan: plans[k % 2],
      sent: 0,
    }));
    const shard = await startShard({ plans: [hourly], pauses: [{ ...pauses[0], plan: 0, sent: 3 }], eventsPerRun: 10 });
    for (const { webhookId, since, plan } of pauses.slice(1)) await shard.signal(addPauseSignal, { webhookId, since, plan });
    const carried = await waitFor(async () => {
      const { runId } = await worker.client.workflow.getHandle(shard.workflowId).describe();
      return runId !== shard.firstExecutionRunId ? shard.query(pausesQuery) : undefined;
    });
    expect(carried).toEqual([{ ...pauses[0], sent: 3 }, ...pauses.slice(1)]);
  });
});
