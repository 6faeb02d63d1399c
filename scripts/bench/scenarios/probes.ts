// `split-probes`: 10,000 webhooks paused by failures, probed at a short PROBE_INTERVALS by
// receivers that answer 503, beside a quiet account's one-delivery writes; the same writes
// again with the probes stopped, round after round. The quiet account's latency each way, and
// the probes' drift from their schedule.
import { randomBytes } from 'node:crypto';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { loadConfig } from '../../../src/config';
import type { ProbePlan } from '../../../src/contract/payloads';
import { probeSpreadMs } from '../../../src/contract/probe-schedule';
import { bulkTaskQueue, probesWorkflowId, TASK_QUEUE } from '../../../src/contract/workflows';
import { newId } from '../../../src/ids';
import { newSigningSecret } from '../../../src/secrets';
import { signalWithStartProbes } from '../../../src/temporal/probes-client';
import { CONFIG, log } from '../lib/config';
import { createAccount } from '../lib/http';
import { scanLogs } from '../lib/logs';
import { arrivalsByWebhook, probeDrift, type ProbeReceipts, type ProbeSchedule } from '../lib/probe-drift';
import { pooledProbes, probeRatios } from '../lib/probe-ratios';
import * as stack from '../lib/stack';
import { runStep } from '../lib/step';
import { nowMs, percentiles, round } from '../lib/stats';
import {
  type Account,
  type Context,
  type MadeList,
  type Outcome,
  type ProbesDrift,
  type ProbesPhase,
  type ProbesRound,
  type ProbesSummary,
  type ServiceTarget,
  type StepResult,
  type WorkloadScenario,
} from '../lib/types';
import { serviceWorkload } from './service';

const settings = CONFIG.probes;
/** Probing for a week: no pause of the run reaches its end. */
const PROBE_MAX_DAYS = '7';
const TARGETS = { p99Ratio: 1.1, driftPercent: 10 };
/** From the first start to the first probe due: 10,000 starts and their first workflow tasks take about half of it. */
const STARTS_LEAD_MS = 240_000;

export const scenarios: WorkloadScenario[] = [
  serviceWorkload(
    'probes',
    'split',
    `${settings.webhooks} paused webhooks probed every ${settings.intervals} by receivers answering 503, beside one-delivery ` +
      `writes at ${settings.quietWritesPerSec}/s, and the same writes with the probes stopped, ${settings.rounds} rounds (API + worker processes)`,
    runProbes,
    { PROBE_INTERVALS: settings.intervals, PROBE_MAX_DAYS },
  ),
];

/** A seeded webhook: paused by failures, its receiver under the probes' path. */
interface PausedWebhook {
  id: string;
  accountId: string;
  secret: string;
}

/** What the rounds share. */
interface Run {
  target: ServiceTarget;
  ctx: Context;
  client: Client;
  tag: string;
  quiet: MadeList;
  webhooks: PausedWebhook[];
  plan: ProbePlan;
}

/**
 * The quiet account, one webhook on list.changed (one delivery a write, its receiver answering
 * 200), and `webhooks` webhooks of `accounts` other accounts, written into the table as failures
 * leave them (paused, `auto_failures`, 20 failures counted), each at a URL of its own under
 * `/probe/{tag}/` that the receivers answer 503. The quiet account writes for a phase before any
 * probe. Then each round hands the pauses to their probe workflows through the Temporal client
 * (handOverSeededPauses); from their first probe due, the quiet account writes for a phase (the probes'
 * drift measured over the same time); one interval later the probe workflows are terminated
 * and, once their last probes have left and the service is calm, the quiet account writes for
 * another phase without them.
 */
async function runProbes(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const tag = randomBytes(3).toString('hex');
  const [quiet] = await target.setUpFanout([
    { listId: `bench-${tag}-quiet`, webhooks: [{ url: `https://127.0.0.1:${ctx.ports[0]}/quiet/${tag}/0` }] },
  ]);
  const seedStarted = nowMs();
  const webhooks = await seedPausedWebhooks(target, ctx, tag);
  const seedMs = round(nowMs() - seedStarted, 0);
  log(`probes: seeded ${webhooks.length} paused webhooks of ${settings.accounts} accounts in ${round(seedMs / 1000)} s`);
  await ctx.receivers('take'); // forget the setup's receipts

  const { Client, Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: target.temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const config = loadConfig({ PROBE_INTERVALS: settings.intervals, PROBE_MAX_DAYS });
  const plan = {
    intervalsMs: config.probeIntervalsMs,
    forMs: config.probeMaxDays * 86_400_000,
    deliveryTimeoutMs: config.deliveryTimeoutMs,
  };
  const run: Run = { target, ctx, client, tag, quiet, webhooks, plan };
  const window = ctx.sampler.window();
  try {
    // Before any probe, and before the paused webhooks' own workflows run.
    const phases = [await quietPhase(run, 0, false)];
    const rounds: ProbesRound[] = [];
    for (let r = 1; r <= settings.rounds; r++) {
      const done = await runRound(run, r, phases[phases.length - 1]);
      phases.push(done.withProbes, done.after);
      rounds.push(done.figures);
    }
    const summary: ProbesSummary = {
      webhooks: webhooks.length,
      accounts: settings.accounts,
      intervals: settings.intervals,
      intervalsMs: plan.intervalsMs,
      quietWritesPerSec: settings.quietWritesPerSec,
      phaseMs: settings.phaseMs,
      seedMs,
      targets: TARGETS,
      phases,
      rounds,
      pooled: pooledProbes(phases),
      cpu: window(),
    };
    return { steps: [], knee: null, probes: summary, logs: scanLogs(target.logFiles) };
  } finally {
    await connection.close();
  }
}

/** Accounts made through the API, and `webhooks` rows of theirs written straight into the table, paused by failures. */
async function seedPausedWebhooks(target: ServiceTarget, ctx: Context, tag: string): Promise<PausedWebhook[]> {
  const accounts: Account[] = [];
  for (let i = 0; i < settings.accounts; i++) accounts.push(await createAccount(target.internal));
  const webhooks = Array.from({ length: settings.webhooks }, (_, k) => ({
    id: newId('wh'),
    accountId: accounts[k % accounts.length].id,
    secret: newSigningSecret(),
  }));
  const url = (id: string, k: number) => `https://127.0.0.1:${ctx.ports[k % ctx.ports.length]}/probe/${tag}/${id}`;
  for (let first = 0; first < webhooks.length; first += 1000) {
    const chunk = webhooks.slice(first, first + 1000);
    const sealed = chunk.map((w) => target.secrets.seal(w.secret, w.id));
    await target.sql`
      INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events, status, paused_reason, consecutive_failures,
                            failures_reported, failures_counted)
      SELECT id, account_id, url, ${target.secrets.keyId}, decode(sealed, 'base64'), ${['list.changed']}, 'paused', 'auto_failures', 20, 20, 20
      FROM unnest(${chunk.map((w) => w.id)}::text[], ${chunk.map((w) => w.accountId)}::text[],
                  ${chunk.map((w, k) => url(w.id, first + k))}::text[], ${sealed.map((s) => s.sealed.toString('base64'))}::text[])
           AS seeded (id, account_id, url, sealed)`;
    await ctx.receivers('secrets', { entries: chunk.map((w) => [w.id, w.secret] as [string, string]) });
  }
  await ctx.receivers('probes', { prefix: `/probe/${tag}/` });
  return webhooks;
}

/**
 * One round: the pauses' `webhook/{id}` started (a round after the first terminates those of the
 * round before), the phase with their probes, the probes stopped, the phase without; the
 * round's figures against the phase before it (without probes) and the one after.
 */
async function runRound(run: Run, r: number, before: ProbesPhase) {
  const { client, plan, ctx } = run;
  await ctx.receivers('takeProbes'); // the round's probes only
  const { schedules, startMs, firstDue } = await handOverSeededPauses(run);
  log(`probes round ${r}: ${schedules.length} pauses handed to their probe workflows in ${round(startMs / 1000)} s`);
  if (firstDue > Date.now()) await stack.sleep(firstDue - Date.now());

  const from = nowMs();
  const withProbes = await quietPhase(run, r, true);
  const to = nowMs();
  // A probe due as the phase ends has one more interval (a minute at most) to arrive before its workflow ends.
  await stack.sleep(Math.min(plan.intervalsMs[plan.intervalsMs.length - 1], 60_000));
  const shards = [...new Set(schedules.map((s) => probesWorkflowId(bulkTaskQueue(TASK_QUEUE), s.webhookId)))];
  const stopMs = await eachAtOnce(shards, (workflowId) => terminate(client, workflowId, 'bench: the phase without probes'));
  // A terminated workflow's activity goes on: its probes still leave over the spread, each within a delivery's time-out.
  await stack.sleep(probeSpreadMs([plan]) + plan.deliveryTimeoutMs);
  const received = await ctx.receivers('takeProbes');
  const drift = driftOf(plan, schedules, received, { from, to, takenAt: nowMs() });
  const calmMs = await serviceCalm(run);
  log(
    `probes round ${r}: ${drift.received}/${drift.due} due probes received (${drift.perSec}/s), drift % of the interval ` +
      `p50/p99/max ${drift.driftPercent.p50}/${drift.driftPercent.p99}/${drift.driftPercent.max}, late ms p50/p99/max ` +
      `${drift.lateMs.p50}/${drift.lateMs.p99}/${drift.lateMs.max}; probe workflows terminated in ${round(stopMs / 1000)} s, ` +
      `the service calm ${round(calmMs / 1000)} s later`,
  );

  const after = await quietPhase(run, r, false);
  const strayProbes = (await ctx.receivers('takeProbes')).t.length;
  const figures: ProbesRound = {
    round: r,
    startMs,
    probing: schedules.length,
    leadMs: STARTS_LEAD_MS,
    ...probeRatios(withProbes, before, after, drift.perSec),
    drift,
    stopMs,
    calmMs,
    strayProbes,
  };
  log(
    `probes round ${r}: quiet e2e p99 ${withProbes.quietE2eMs.p99} ms with the probes, ${before.quietE2eMs.p99} ms before and ` +
      `${after.quietE2eMs.p99} ms after: ${figures.p99Ratio}× their mean; ${figures.serviceCpuMsPerProbe} service CPU-ms per probe`,
  );
  return { figures, withProbes, after };
}

/** The most cores the service may use, each of two seconds running, for the phase after the probes to begin. */
const CALM_CORES = 0.25;

/**
 * Waits until the service (API, worker, Temporal, PostgreSQL) uses under CALM_CORES in each of two
 * seconds running, for 10 minutes at most: a worker that fell behind the probes goes on with the
 * tasks it holds for a while after their workflows ended. Returns how long it waited.
 */
async function serviceCalm({ ctx, target }: Run): Promise<number> {
  const started = nowMs();
  for (let calmSeconds = 0; calmSeconds < 2 && nowMs() - started < 600_000;) {
    const end = ctx.sampler.window();
    await stack.sleep(1000);
    const m = end();
    const cores = target.serviceGroups.reduce((sum, group) => sum + (m.groups[group]?.cpuMs ?? 0), 0) / m.wallMs;
    calmSeconds = cores < CALM_CORES ? calmSeconds + 1 : 0;
  }
  return round(nowMs() - started, 0);
}

/**
 * Hands every seeded webhook's pause to its `probes/{taskQueue}/{shard}` on the bulk task queue,
 * as its `webhook/{id}` does at a pause by failures, but with `since` set back so that the first
 * probes come due evenly over one interval from a minute after the first start: the phase with
 * the probes begins then and measures probing in its steady state, the starts (as fast as the
 * server takes them) and their first workflow tasks over before it.
 */
async function handOverSeededPauses({ client, webhooks, plan }: Run) {
  const firstInterval = plan.intervalsMs[0];
  const firstDue = Date.now() + STARTS_LEAD_MS;
  const schedules = webhooks.map((w, k) => ({
    webhookId: w.id,
    since: Math.round(firstDue + (k * firstInterval) / webhooks.length - firstInterval),
  }));
  const startMs = await eachAtOnce(schedules, ({ webhookId, since }) =>
    signalWithStartProbes(client, bulkTaskQueue(TASK_QUEUE), { webhookId, since, plan }),
  );
  return { schedules, startMs, firstDue };
}

/** The quiet account's writes for a phase (after the step's warm-up), with the probes or without. */
async function quietPhase({ target, ctx, tag, quiet }: Run, r: number, probing: boolean): Promise<ProbesPhase> {
  const name = probing ? 'with the probes' : r === 0 ? 'before the probes' : 'without them';
  const webhookId = quiet.webhookIds[0];
  const step = await runStep({
    rate: settings.quietWritesPerSec,
    lists: [quiet.listId],
    recipients: new Map([[quiet.listId, [{ webhookId, topic: 'list.changed' }]]]),
    webhookIds: [webhookId],
    target,
    ctx,
    prefix: `${tag}-r${r}-${probing ? 'probes' : 'without'}`,
    durationMs: CONFIG.warmupMs + settings.phaseMs,
    keepE2eSamples: true,
  });
  const phase = phaseOf(target, step, r, probing);
  const { quietE2eMs: e2e, quietLedger: l } = phase;
  log(
    `probes round ${r} ${name}: quiet writes ${phase.quietWrites.accepted}/` +
      `${phase.quietWrites.scheduled} accepted, e2e p50/p99/max ${e2e.p50}/${e2e.p99}/${e2e.max} ms, ` +
      `ledger ${l.balanced ? 'balanced' : 'NOT balanced'}, service CPU ${round(phase.serviceCpuMs / 1000)} s`,
  );
  return phase;
}

function phaseOf(target: ServiceTarget, step: StepResult, r: number, probing: boolean): ProbesPhase {
  return {
    round: r,
    probing,
    sdk: step.sdk,
    otherWork: step.quiet,
    outsideMaxCores: step.outsideLoad.maxCores,
    quietE2eSamplesMs: step.e2eSamplesMs ?? [],
    quietWrites: { scheduled: step.writes.scheduled, accepted: step.writes.accepted },
    quietE2eMs: step.e2eMs,
    quietAcceptMs: step.acceptMs,
    quietLedger: step.ledger,
    drained: step.drained,
    serviceCpuMs: round(target.serviceGroups.reduce((sum, group) => sum + (step.cpu.groups[group]?.cpuMs ?? 0), 0)),
    cpu: step.cpu,
  };
}

/** The drift of the probes due within the window, from the round's receipts. */
function driftOf(
  plan: ProbePlan,
  schedules: ProbeSchedule[],
  received: ProbeReceipts,
  window: { from: number; to: number; takenAt: number },
): ProbesDrift {
  const drift = probeDrift(plan, schedules, arrivalsByWebhook(received), window);
  const inWindow = received.t.filter((t) => t >= window.from && t <= window.to).length;
  return {
    due: drift.due,
    received: drift.received,
    early: drift.early,
    driftPercent: percentiles(drift.driftPercent, [50, 99]),
    lateMs: percentiles(drift.lateMs, [50, 99]),
    perSec: round((inWindow * 1000) / (window.to - window.from)),
    badSignatures: received.sigOk.filter((ok) => ok === 0).length,
  };
}

/** Terminates a workflow, unless it has ended already; a call that fails otherwise (the server busy) is tried again. */
async function terminate(client: Client, workflowId: string, reason: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.workflow.getHandle(workflowId).terminate(reason);
      return;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return;
      if (attempt === 5) throw error;
      await stack.sleep(1000 * attempt);
    }
  }
}

/** Runs `work` on every item in order, `settings.concurrency` at once; returns how long it took, ms. */
async function eachAtOnce<T>(items: T[], work: (item: T, index: number) => Promise<unknown>): Promise<number> {
  const started = nowMs();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(settings.concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index], index);
      }
    }),
  );
  return round(nowMs() - started, 0);
}
