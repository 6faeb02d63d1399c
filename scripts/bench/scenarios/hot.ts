// `split-hot`: one hot webhook whose receiver fails 9 deliveries of 10, its `state` query
// polled throughout.
import { randomBytes } from 'node:crypto';
import { type Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { lifecycleStateQuery, deliveryOutcomesSignal } from '../../../src/contract/messages';
import { type DeliveryOutcomes } from '../../../src/contract/payloads';
import { lifecycleWorkflowId } from '../../../src/contract/workflows';
import { type Webhook } from '../../../src/objects';
import { CONFIG, log } from '../lib/config';
import { call } from '../lib/http';
import { readLog, scanLogs } from '../lib/logs';
import * as stack from '../lib/stack';
import { runStep } from '../lib/step';
import { nowMs, percentiles, round } from '../lib/stats';
import { type Context, type HotSummary, type Outcome, type ServiceTarget, type StepResult, type WorkloadScenario } from '../lib/types';
import { serviceWorkload } from './service';

export const scenarios: WorkloadScenario[] = [
  serviceWorkload('hot', 'split', 'hot webhook, failing receiver (API + worker processes)', runHot),
];

/** A sample of the hot webhook's failure count: from the `state` query, or from the API. */
interface CountSample {
  t: number;
  count: number | null;
  status: string | null;
}
type QuerySample = CountSample & { queryMs: number; error?: string };

/**
 * One hot webhook: 50 writes/s for 60 s, its receiver answering 500 to 9 deliveries of 10
 * and 200 to the 10th. The `state` query of webhook/{id} is polled throughout; the lag is
 * from the receipt of the last delivery (a failure) to the query showing the final count.
 */
async function runHot(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const tag = randomBytes(3).toString('hex');
  const listId = `bench-${tag}-hot`;
  const [made] = await target.setUpFanout([{ listId, webhooks: [{ url: `https://127.0.0.1:${ctx.ports[0]}/hot/${tag}` }] }]);
  const webhookId = made.webhookIds[0];
  await ctx.receivers('hot', { webhookId, period: CONFIG.hot.period });
  await ctx.receivers('take');

  const { Client, Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: target.temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const polls = pollCount(client, target.baseUrl, webhookId, made.accounts[0].token);
  let step: StepResult;
  try {
    step = await runStep({
      rate: CONFIG.hot.rate,
      lists: [listId],
      recipients: new Map([[listId, [{ webhookId, topic: 'list.changed' }]]]),
      webhookIds: [webhookId],
      target,
      ctx,
      prefix: `${tag}-hot`,
      durationMs: CONFIG.hot.durationMs,
      warmupMs: 0,
      drainLimitMs: CONFIG.hot.drainMs,
      skippedKeys: () => pausedDeliveries(target.logFiles, webhookId, listId),
    });
    polls.sent();
    await answerSettled(polls.samples);
  } finally {
    await polls.stop();
  }
  const history = await readHistories(client, webhookId);
  await connection.close();
  return { steps: [step], knee: null, hot: summary(step, polls, history), logs: scanLogs(target.logFiles) };
}

/**
 * Polls the hot webhook's count, by the `state` query of webhook/{id} and by the API's
 * GET /v3/webhooks/{id} (the database's mirror), every 200 ms while the writes are sent,
 * every 20 ms after; reactivates the webhook by PATCH if it pauses.
 */
function pollCount(client: Client, baseUrl: string, webhookId: string, accountToken: string) {
  const samples: QuerySample[] = [];
  const mirror: CountSample[] = [];
  const reactivations: { t: number; status: number }[] = [];
  const handle = client.workflow.getHandle(lifecycleWorkflowId(webhookId));
  let sending = true;
  let polling = true;
  const loop = (async () => {
    while (polling) {
      const asked = nowMs();
      try {
        const state = await handle.query(lifecycleStateQuery);
        samples.push({ t: nowMs(), count: state.consecutiveFailures, status: state.status, queryMs: round(nowMs() - asked) });
        if (state.status === 'paused') {
          const patched = await call(baseUrl, 'PATCH', `/v3/webhooks/${webhookId}`, accountToken, { status: 'active' });
          reactivations.push({ t: nowMs(), status: patched.status });
          log(`hot webhook paused (count ${state.consecutiveFailures}): reactivated (${patched.status})`);
        }
      } catch (error) {
        samples.push({ t: nowMs(), count: null, status: null, queryMs: round(nowMs() - asked), error: errorMessage(error) });
      }
      const stored = await call<Webhook>(baseUrl, 'GET', `/v3/webhooks/${webhookId}`, accountToken);
      if (stored.status === 200) mirror.push({ t: nowMs(), count: stored.body.consecutiveFailures, status: stored.body.status });
      await stack.sleep(sending ? 200 : 20);
    }
  })();
  return {
    samples,
    mirror,
    reactivations,
    /** Every write sent: poll faster, for the lag. */
    sent: () => void (sending = false),
    stop: async () => {
      polling = false;
      await loop;
    },
  };
}

/** Waits until the query's answer has not changed for 3 s (at most 30 s). */
async function answerSettled(samples: QuerySample[]): Promise<void> {
  const deadline = nowMs() + 30_000;
  while (nowMs() < deadline) {
    await stack.sleep(250);
    const last = samples[samples.length - 1];
    const changed = [...samples].reverse().find((s) => s.count !== last?.count || s.status !== last?.status);
    if (last && (!changed || last.t - changed.t > 3000) && samples.some((s) => s.t > nowMs() - 500)) break;
  }
}

/** When `series` came to show `value` for good, after `after`; null if it never did. */
function settledAt(series: CountSample[], value: number | null | undefined, after: number | null): number | null {
  let at: number | null = null;
  for (const s of series) {
    if (s.t < (after ?? 0)) continue;
    if (s.count === value) at ??= s.t;
    else at = null;
  }
  return at;
}

/**
 * Runs of webhook/{id} (continue-as-new), the outcome signals it received and the outcomes
 * they carried (a worker batches them), failed workflow tasks; and the list writes not completed.
 */
async function readHistories(client: Client, webhookId: string): Promise<HotSummary['history']> {
  const { defaultPayloadConverter } = await import('@temporalio/common');
  const history: HotSummary['history'] = {
    runs: 0,
    signalsReceived: 0,
    outcomesReceived: 0,
    workflowTaskFailed: 0,
    workflowTaskTimedOut: 0,
    continuedAsNew: 0,
    notCompletedListWrites: null,
    errors: [],
  };
  const toldMs: number[] = [];
  try {
    for await (const execution of client.workflow.list({ query: `WorkflowId = "${lifecycleWorkflowId(webhookId)}"` })) {
      history.runs++;
      const events = (await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory()).events ?? [];
      for (const event of events) {
        const signal = event.workflowExecutionSignaledEventAttributes;
        if (signal?.signalName === deliveryOutcomesSignal.name) {
          history.signalsReceived++;
          const { delivered, outcomes = [] } = defaultPayloadConverter.fromPayload<DeliveryOutcomes>(signal.input!.payloads![0]);
          history.outcomesReceived += delivered.length;
          const receivedAt = tsToMs(event.eventTime);
          for (const { endedAt } of outcomes) toldMs.push(receivedAt - endedAt);
        }
        if (event.workflowTaskFailedEventAttributes) history.workflowTaskFailed++;
        if (event.workflowTaskTimedOutEventAttributes) history.workflowTaskTimedOut++;
        if (event.workflowExecutionContinuedAsNewEventAttributes) history.continuedAsNew++;
      }
    }
    const counted = await client.workflow.count(`WorkflowType = "deliverListWrite" AND ExecutionStatus != "Completed"`);
    history.notCompletedListWrites = counted.count;
  } catch (error) {
    history.errors.push(errorMessage(error));
  }
  history.outcomeToldMs = percentiles(toldMs, [50, 99, 100]);
  return history;
}

/** The hot webhook's figures: the last failure the receiver answered, and when the query and the API showed the final count. */
function summary(step: StepResult, polls: ReturnType<typeof pollCount>, history: HotSummary['history']): HotSummary {
  const { samples, mirror, reactivations } = polls;
  const final = samples.filter((s) => s.count !== null).at(-1);
  const lastFailureAt = step.lastFailureReceiptAt;
  const queryAt = settledAt(samples, final?.count, lastFailureAt);
  const finalMirror = mirror.at(-1);
  const mirrorAt = settledAt(mirror, finalMirror?.count, lastFailureAt);
  return {
    rate: CONFIG.hot.rate,
    durationS: CONFIG.hot.durationMs / 1000,
    pattern:
      `receiver answers 200 to the 1st delivery of every ${CONFIG.hot.period} and 500 to the other ${CONFIG.hot.period - 1};` +
      ' reactivated by PATCH if it pauses anyway',
    lastFailureAt,
    finalQueryCount: final?.count ?? null,
    finalQueryStatus: final?.status ?? null,
    queryLagMs: queryAt !== null && lastFailureAt ? round(queryAt - lastFailureAt) : null,
    finalDatabaseCount: finalMirror?.count ?? null,
    databaseLagMs: mirrorAt !== null && lastFailureAt ? round(mirrorAt - lastFailureAt) : null,
    querySamples: samples.length,
    queryErrors: samples.filter((s) => s.error).length,
    queryErrorSample: [...new Set(samples.flatMap((s) => (s.error ? [s.error] : [])))].slice(0, 3),
    queryMs: percentiles(
      samples.map((s) => s.queryMs),
      [50, 99],
    ),
    reactivations,
    maxCountSeen: Math.max(0, ...samples.map((s) => s.count ?? 0)),
    signalsExpected: step.writes.accepted,
    history,
  };
}

/** As the original read it: the error's message, else the error as a string. */
function errorMessage(error: unknown): string {
  return String((error as { message?: unknown } | null)?.message ?? error);
}

/**
 * The hot webhook's deliveries that the service's logs say were not due: skipped because it
 * was paused when the delivery came (`delivery skipped`), or left out of a write recorded
 * while it was paused (`list write` with no recipients: the hot list has only this webhook).
 * Keys as the ledger's: webhook|list|cursor|topic.
 */
function pausedDeliveries(files: { name: string; file: string }[], webhookId: string, listId: string): Set<string> {
  const keys = new Set<string>();
  for (const { file } of files) {
    const text = readLog(file);
    if (text === null) continue;
    for (const line of text.split('\n')) {
      if (!line.includes(listId) || !/"msg":"(delivery skipped|list write)"/.test(line)) continue;
      const entry = JSON.parse(line) as {
        msg: string;
        webhookId?: string;
        listId?: string;
        cursor?: number;
        topic?: string;
        recipients?: number;
      };
      if (entry.msg === 'delivery skipped' && entry.webhookId === webhookId)
        keys.add(`${webhookId}|${listId}|${entry.cursor}|${entry.topic}`);
      if (entry.msg === 'list write' && entry.listId === listId && entry.recipients === 0)
        keys.add(`${webhookId}|${listId}|${entry.cursor}|list.changed`);
    }
  }
  return keys;
}
