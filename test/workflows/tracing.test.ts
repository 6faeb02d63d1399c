// Tracing changes no workflow's commands, nor what its random draws: on the real workflow code
// with activities the test passes, a history made with the tracing interceptors replays without
// them and the other way round, a replay makes the delivery ids its run made, and `webhook/{id}`
// answers queries and updates with tracing on and replays the result.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ROOT_CONTEXT, TraceFlags, context, trace, type SpanContext } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleStateQuery, setStatusUpdate } from '../../src/contract/messages';
import type { EventDelivery, WebhookLifecycleState } from '../../src/contract/payloads';
import { workerTracing } from '../../src/temporal/tracing';
import { TRACING_OFF, type Tracing } from '../../src/tracing/setup';
import { TOPICS } from '../../src/topics';
import { deliverListWrite, webhookLifecycle } from '../../workflows';
import type { ScheduledDeliveries } from './support/scheduled-deliveries';
import { inMemoryTracing } from '../support/in-memory-tracing';
import { startWorkflowWorker, type WorkflowWorker } from './support/worker';
import { waitFor } from '../support/wait';

const tracing = inMemoryTracing();
/** The delivery ids each write's run gave its activities, by workflow id. */
const delivered = new Map<string, string[]>();
/** The trace context each write's deliveries ran in, by workflow id. */
const deliveryContexts = new Map<string, SpanContext[]>();
const activities = {
  async deliverEvent({ delivery }: EventDelivery) {
    const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
    delivered.set(workflowId, [...(delivered.get(workflowId) ?? []), delivery.deliveryId]);
    const spanContext = trace.getSpanContext(context.active());
    if (spanContext) deliveryContexts.set(workflowId, [...(deliveryContexts.get(workflowId) ?? []), spanContext]);
    return { delivered: true, statusCode: 200, durationMs: 1, error: null } as const;
  },
  async storeWebhookState() {},
};

let traced: WorkflowWorker;
let untraced: WorkflowWorker;
beforeAll(async () => {
  [traced, untraced] = await Promise.all([startWorkflowWorker(activities, tracing), startWorkflowWorker(activities)]);
});
afterAll(async () => {
  await Promise.all([traced?.stop(), untraced?.stop()]);
  await tracing.shutdown();
});

/** Replays `handle`'s history with tracing as given, and returns the delivery ids the replay scheduled. */
async function replay(handle: WorkflowHandle, replayTracing: Tracing): Promise<string[]> {
  const scheduled: string[] = [];
  const sinks: ReplayWorkerOptions['sinks'] & Record<keyof ScheduledDeliveries, unknown> = {
    ...workerTracing(replayTracing).sinks,
    scheduled: { delivery: { fn: (_info: unknown, deliveryId: string) => void scheduled.push(deliveryId), callDuringReplay: true } },
  };
  const options = workerTracing(replayTracing);
  await Worker.runReplayHistory(
    {
      workflowsPath: path.resolve(__dirname, '../../workflows'),
      interceptors: {
        workflowModules: [...(options.interceptors?.workflowModules ?? []), path.join(__dirname, 'support/scheduled-deliveries')],
      },
      sinks,
    },
    await handle.fetchHistory(),
    handle.workflowId,
  );
  return scheduled;
}

describe.each([
  ['on', 'off', () => traced, TRACING_OFF],
  ['off', 'on', () => untraced, tracing],
] as const)('a write run with tracing %s', (_runWith, replayWith, worker, replayTracing) => {
  it(`replays with tracing ${replayWith}, making the same delivery ids`, async () => {
    const writeId = `traced-${randomBytes(4).toString('hex')}`;
    const write = { listId: 'list-tracing', writeId, cursor: 1, at: new Date().toISOString(), topics: [...TOPICS] };
    const recipients = [
      { webhookId: 'wh_tracing_a', topics: ['item.added', 'list.changed'] as const },
      { webhookId: 'wh_tracing_b', topics: ['list.changed'] as const },
    ].map(({ webhookId, topics }) => ({ webhookId, topics: [...topics] }));
    const handle = await worker().client.workflow.start(deliverListWrite, {
      taskQueue: worker().taskQueue,
      workflowId: `list-write/${write.listId}/${write.writeId}`,
      args: [{ write, recipients, deliveryTimeoutMs: 1_000 }],
    });
    await handle.result();

    const made = delivered.get(handle.workflowId) ?? [];
    expect(made).toHaveLength(3);
    expect((await replay(handle, replayTracing)).sort()).toEqual([...made].sort());
  });
});

it('traces a write: its start, its run and each delivery, in one trace', async () => {
  const writeId = `spans-${randomBytes(4).toString('hex')}`;
  const write = { listId: 'list-spans', writeId, cursor: 1, at: new Date().toISOString(), topics: [...TOPICS] };
  await traced.client.workflow.execute(deliverListWrite, {
    taskQueue: traced.taskQueue,
    workflowId: `list-write/${write.listId}/${writeId}`,
    args: [{ write, recipients: [{ webhookId: 'wh_spans', topics: ['list.changed'] }], deliveryTimeoutMs: 1_000 }],
  });
  // Workflow spans leave the sandbox through a sink, after the workflow task that made them.
  const inTrace = await waitFor(async () => {
    const spans = tracing.spans.getFinishedSpans();
    const start = spans.find(
      (span) =>
        span.name === 'StartWorkflow:deliverListWrite' && span.attributes['temporalWorkflowId'] === `list-write/list-spans/${writeId}`,
    );
    const names = spans.filter((span) => span.spanContext().traceId === start?.spanContext().traceId).map((span) => span.name);
    return ['RunWorkflow:deliverListWrite', 'RunActivity:deliverEvent'].every((name) => names.includes(name)) ? names : undefined;
  });
  expect(inTrace).toContain('StartWorkflow:deliverListWrite');
});

/** Runs a write of one delivery on the traced worker, its client in `parent`'s trace; its workflow id. */
async function writeInTrace(parent: SpanContext, name: string): Promise<string> {
  const writeId = `${name}-${randomBytes(4).toString('hex')}`;
  const workflowId = `list-write/list-${name}/${writeId}`;
  const write = { listId: `list-${name}`, writeId, cursor: 1, at: new Date().toISOString(), topics: [...TOPICS] };
  await context.with(trace.setSpanContext(ROOT_CONTEXT, parent), () =>
    traced.client.workflow.execute(deliverListWrite, {
      taskQueue: traced.taskQueue,
      workflowId,
      args: [{ write, recipients: [{ webhookId: `wh_${name}`, topics: ['list.changed'] }], deliveryTimeoutMs: 1_000 }],
    }),
  );
  return workflowId;
}

const upstream = (traceFlags: TraceFlags): SpanContext => ({
  traceId: randomBytes(16).toString('hex'),
  spanId: randomBytes(8).toString('hex'),
  traceFlags,
  isRemote: true,
});

it("parents each delivery on the workflow's run, and exports nothing of a trace its upstream did not sample", async () => {
  const unsampled = upstream(TraceFlags.NONE);
  const unsampledWrite = await writeInTrace(unsampled, 'unsampled');
  const sampled = upstream(TraceFlags.SAMPLED);
  const sampledWrite = await writeInTrace(sampled, 'sampled');

  // The later write's spans come after the earlier one's through the same worker and sink.
  const spans = await waitFor(async () => {
    const inTrace = tracing.spans.getFinishedSpans().filter((span) => span.spanContext().traceId === sampled.traceId);
    return inTrace.some((span) => span.name === 'RunWorkflow:deliverListWrite') &&
      inTrace.some((span) => span.name === 'RunActivity:deliverEvent')
      ? inTrace
      : undefined;
  });
  const run = spans.find((span) => span.name === 'RunWorkflow:deliverListWrite')!;
  const start = spans.find((span) => span.name === 'StartWorkflow:deliverListWrite')!;
  expect(run.parentSpanId).toBe(start.spanContext().spanId);
  expect(start.parentSpanId).toBe(sampled.spanId);
  expect(spans.find((span) => span.name === 'RunActivity:deliverEvent')!.parentSpanId).toBe(run.spanContext().spanId);
  expect(deliveryContexts.get(sampledWrite)).toEqual([
    expect.objectContaining({ traceId: sampled.traceId, traceFlags: TraceFlags.SAMPLED }),
  ]);

  expect(tracing.spans.getFinishedSpans().filter((span) => span.spanContext().traceId === unsampled.traceId)).toEqual([]);
  expect(deliveryContexts.get(unsampledWrite)).toEqual([
    expect.objectContaining({ traceId: unsampled.traceId, traceFlags: TraceFlags.NONE }),
  ]);
});

it('answers queries and updates on webhook/{id} with tracing on, and the result replays with tracing on and off', async () => {
  const webhookId = `wh_${randomBytes(12).toString('hex')}`;
  const state: WebhookLifecycleState = {
    webhookId,
    accountId: 'acc_tracing',
    status: 'active',
    pausedReason: null,
    consecutiveFailures: 0,
    failuresCounted: 0,
  };
  const handle = await traced.client.workflow.start(webhookLifecycle, {
    taskQueue: traced.taskQueue,
    workflowId: `webhook/${webhookId}`,
    args: [{ state }],
  });
  expect(await handle.query(lifecycleStateQuery)).toMatchObject({ status: 'active' });
  const actor = { tokenId: `tkn_${'2'.repeat(24)}`, tokenName: 'tracing', clientAddress: '192.0.2.2' };
  expect(await handle.executeUpdate(setStatusUpdate, { args: ['paused', actor] })).toMatchObject({ status: 'paused' });
  expect(await handle.query(lifecycleStateQuery)).toMatchObject({ status: 'paused' });
  expect(await handle.executeUpdate(setStatusUpdate, { args: ['active', actor] })).toMatchObject({ status: 'active' });
  await handle.terminate('test: done');

  for (const replayTracing of [tracing, TRACING_OFF]) await replay(handle, replayTracing);
  const names = await waitFor(async () => {
    const made = tracing.spans.getFinishedSpans().map((span) => span.name);
    return ['HandleQuery:state', 'HandleUpdate:setStatus'].every((name) => made.includes(name)) ? made : undefined;
  });
  expect(names).toContain('StartWorkflow:webhookLifecycle');
});
