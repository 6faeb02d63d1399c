// One step of load and what it measures: the machine's quiet before it, the writes, the
// drain, the ledger, CPU, memory, event-loop delays and the SDK's metrics.
import os from 'node:os';
import { CONFIG, QUICK, log } from './config';
import { computeStep, type Receipts, type Recipients, type StepFigures } from './ledger';
import { scanServerLog, serverLogOffset } from './logs';
import { clockTicks, machineTicks, type Measured, type ProcessSampler } from './proc';
import { diffSdkMetrics, scrapeSdkMetrics } from './sdk-metrics';
import { sleep } from './stack';
import { nowMs, round } from './stats';
import { countTraceExports } from './tracing';
import { type Context, type Idle, type OutcomesPoller, type ReceiptSource, type StepResult, type Target } from './types';

export interface StepOptions {
  rate: number;
  lists: string[];
  recipients: Recipients;
  webhookIds: string[];
  target: Target;
  ctx: Context;
  prefix: string;
  idle?: Idle;
  durationMs?: number;
  warmupMs?: number;
  drainLimitMs?: number;
  skippedKeys?: () => Set<string>;
  /** Return the steady phase's end-to-end latencies (e2eSamplesMs), to pool over steps. */
  keepE2eSamples?: boolean;
}

/**
 * One step: warm-up and steady phase at `rate`, then the drain; the ledger; CPU and memory.
 * `skippedKeys`: the deliveries the service says it skipped (the webhook was paused); only
 * the hot webhook's scenario, where pauses can happen, passes it.
 */
export async function runStep({
  idle,
  rate,
  lists,
  recipients,
  webhookIds,
  target,
  ctx,
  prefix,
  durationMs,
  warmupMs = CONFIG.warmupMs,
  drainLimitMs = CONFIG.drainMs,
  skippedKeys = () => new Set(),
  keepE2eSamples = false,
}: StepOptions): Promise<StepResult> {
  const totalMs = durationMs ?? warmupMs + CONFIG.steadyMs;
  const steadyMs = totalMs - warmupMs;
  const quiet = await waitForQuiet(ctx.sampler);
  await loopDelays(ctx, target); // reset
  // What the receivers got; the floor, which sends nothing, gives its own.
  const receivers = target.receipts ?? { counts: () => ctx.receivers('counts'), take: () => ctx.receivers('take') };
  const connectionsBefore = (await receivers.counts()).connections;
  const logAt = serverLogOffset();
  const sdkBefore = await scrapeSdkMetrics(target.metricsUrl);
  const poller = target.outcomesPoller(webhookIds);
  await poller.ready;
  // Only the service is traced: the baseline and the floor export nothing.
  const takeTraceExport = await countTraceExports(target.kind === 'service' ? ctx.traceSink : null);
  const window = ctx.sampler.window();
  const outside = watchOutsideLoad(ctx.sampler);
  const startAt = nowMs() + 500;
  const writes = await ctx.generator(
    'writes',
    {
      baseUrl: target.baseUrl,
      token: target.token,
      lists,
      rate,
      durationMs: totalMs,
      startAt,
      writeIdPrefix: prefix,
      changes: CONFIG.changesPerWrite,
      timeoutMs: CONFIG.writeTimeoutMs,
      door: target.door,
    },
    totalMs + CONFIG.writeTimeoutMs + 60_000,
  );
  const expected = writes.status.reduce((sum, status, i) => sum + (status === 202 ? (recipients.get(writes.list[i])?.length ?? 0) : 0), 0);
  const { drained, drainMs } = await drain({ expected, poller, receivers, skippedKeys, drainLimitMs });
  const measured = window();
  const outsideLoad = outside.stop();
  const receiverCounts = await receivers.counts();
  const baselineCounts = target.child ? await target.child.counts() : undefined;
  const eventLoopDelay = await loopDelays(ctx, target);
  const sdkAfter = await scrapeSdkMetrics(target.metricsUrl);
  const recorded = await poller.take();
  const prunedUnseen = await poller.prunedUnseen();
  await poller.stop();
  const receipts = await receivers.take();
  if (target.cursorsOf) writes.cursor = await target.cursorsOf(writes);
  const { e2eSamplesMs, ...figures } = computeStep({
    writes,
    receipts,
    recorded,
    recipients,
    steadyFrom: startAt + warmupMs,
    steadyMs,
    recordsPrunedUnseen: prunedUnseen,
    skipped: skippedKeys(),
  });
  const failures = judge(figures);
  return {
    rate,
    quiet,
    warmupMs,
    steadyMs,
    drainMs,
    drained,
    ...figures,
    ...(keepE2eSamples ? { e2eSamplesMs: e2eSamplesMs.map((ms) => round(ms, 1)) } : {}),
    cpu: measured,
    ...cpuPerDelivery(measured, target, idle, figures.deliveriesTotal),
    workerPeakRssMiB: measured.groups[target.workerGroup]?.peakRssMiB ?? null,
    lastFailureReceiptAt: lastFailureReceipt(receipts),
    sdk: diffSdkMetrics(sdkBefore, sdkAfter),
    eventLoopDelay,
    outsideLoad,
    receiverTlsConnections: receiverCounts.connections - connectionsBefore,
    baselineMaxPostsInFlight: baselineCounts?.maxInFlight,
    temporalLog:
      target.kind === 'service'
        ? (({ warnings, errors, byMessage }) => ({ warnings, errors, byMessage }))(scanServerLog(logAt))
        : undefined,
    traceExport: await takeTraceExport?.(measured, figures.deliveriesTotal),
    pass: failures.length === 0,
    failures,
  };
}

/** Waits until every expected delivery is recorded and every recorded one was received, or the limit. */
async function drain({
  expected,
  poller,
  receivers,
  skippedKeys,
  drainLimitMs,
}: {
  expected: number;
  poller: OutcomesPoller;
  receivers: Pick<ReceiptSource, 'counts'>;
  skippedKeys: () => Set<string>;
  drainLimitMs: number;
}): Promise<{ drained: boolean; drainMs: number }> {
  const sentEnd = nowMs();
  let drained = false;
  while (nowMs() - sentEnd < drainLimitMs) {
    const recorded = await poller.count();
    const { pending } = await receivers.counts();
    const due = expected - skippedKeys().size;
    if (recorded >= due && pending >= due) {
      drained = true;
      break;
    }
    await sleep(250);
  }
  const drainMs = Math.round(nowMs() - sentEnd);
  await sleep(300); // a last straggler (a duplicate) would show
  return { drained, drainMs };
}

/** When the receivers answered the last failure, if any. */
function lastFailureReceipt(receipts: Receipts): number | null {
  let last: number | null = null;
  for (let j = 0; j < receipts.t.length; j++) {
    if (receipts.status[j] !== 200 && (last === null || receipts.t[j] > last)) last = receipts.t[j];
  }
  return last;
}

/** Why a step fails: each criterion it misses. */
function judge(figures: StepFigures): string[] {
  const failures: string[] = [];
  if (!figures.ledger.balanced) failures.push('ledger does not balance');
  if (figures.writes.accepted < figures.writes.scheduled)
    failures.push(`${figures.writes.scheduled - figures.writes.accepted} writes not accepted`);
  if (!(figures.e2eMs.p99 !== null && figures.e2eMs.p99 < CONFIG.criteria.e2eP99Ms))
    failures.push(`e2e p99 ${figures.e2eMs.p99} ms >= ${CONFIG.criteria.e2eP99Ms}`);
  if (!(figures.acceptMs.p99 !== null && figures.acceptMs.p99 < CONFIG.criteria.acceptP99Ms))
    failures.push(`accept p99 ${figures.acceptMs.p99} ms >= ${CONFIG.criteria.acceptP99Ms}`);
  return failures;
}

/** CPU-ms per delivery (all processes, the service's, all net of idle) and the ceiling it allows. */
function cpuPerDelivery(measured: Measured, target: Target, idle: Idle | undefined, deliveriesTotal: number) {
  const sum = (names: string[]) => names.reduce((s, n) => s + (measured.groups[n]?.cpuMs ?? 0), 0);
  const deliveries = Math.max(1, deliveriesTotal);
  return {
    cpuMsPerDelivery: {
      all: round(sum(target.groups) / deliveries, 3),
      service: round(sum(target.serviceGroups) / deliveries, 3),
      allNetOfIdle: idle
        ? round(
            (sum(target.groups) - (target.groups.reduce((s, n) => s + (idle.cpuMsPerSec[n] ?? 0), 0) * measured.wallMs) / 1000) /
              deliveries,
            3,
          )
        : null,
    },
    cpuCeilingPerSec: round((os.cpus().length * 1000) / Math.max(0.001, sum(target.groups) / deliveries)),
  };
}

/**
 * CPU ms per second of each group with no load (pollers, timers, the dev server's own work),
 * so that a step's CPU can also be given net of it.
 */
export async function measureIdle(ctx: Context, target: Target): Promise<Idle> {
  await waitForQuiet(ctx.sampler);
  const end = ctx.sampler.window();
  await sleep(QUICK ? 3000 : 10_000);
  const m = end();
  const perSec: Record<string, number> = {};
  for (const name of target.groups) perSec[name] = round(((m.groups[name]?.cpuMs ?? 0) * 1000) / m.wallMs);
  log(
    `idle CPU ms/s: ${Object.entries(perSec)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  return { cpuMsPerSec: perSec, otherCores: round(m.unattributedMs / m.wallMs, 2) };
}

/**
 * Busy CPU of the machine outside the measured processes, second by second: a short burst
 * of other work (a test run starting) can fail a step that the average would not explain.
 */
function watchOutsideLoad(sampler: ProcessSampler) {
  const sumOurs = () => Object.values(sampler.cpuMs()).reduce((a, b) => a + b, 0);
  let lastMachine = machineTicks().busy;
  let lastOurs = sumOurs();
  let lastAt = Date.now();
  let maxCores = 0;
  const timer = setInterval(() => {
    const machine = machineTicks().busy;
    const ours = sumOurs();
    const now = Date.now();
    const cores = (((machine - lastMachine) * 1000) / clockTicks - (ours - lastOurs)) / (now - lastAt);
    if (cores > maxCores) maxCores = cores;
    lastMachine = machine;
    lastOurs = ours;
    lastAt = now;
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      return { maxCores: round(maxCores, 2) };
    },
  };
}

/** Largest event-loop delays (ms) of the harness's children since the last call. */
async function loopDelays(ctx: Context, target: Target) {
  const [receivers, generator, baseline] = await Promise.all([
    ctx.receivers('loopDelay'),
    ctx.generator('loopDelay'),
    target.child ? target.child.loopDelay() : Promise.resolve(undefined),
  ]);
  return { receivers, generator, baseline };
}

/**
 * Waits until the machine's busy CPU outside the measured processes stays under 0.25 cores
 * for a second, at most CONFIG.quietWaitMs; returns how long it waited and the last reading.
 */
export async function waitForQuiet(sampler: ProcessSampler): Promise<{ waitedMs: number; otherCores: number }> {
  const started = Date.now();
  let otherCores: number;
  for (;;) {
    const end = sampler.window();
    await sleep(1000);
    const m = end();
    otherCores = round(m.unattributedMs / m.wallMs, 2);
    if (otherCores < 0.25 || Date.now() - started >= CONFIG.quietWaitMs) break;
  }
  const waitedMs = Date.now() - started - 1000;
  if (waitedMs > 0)
    log(
      `waited ${Math.round(waitedMs / 1000)} s for other work on the machine to calm down (now ${otherCores} cores busy outside the bench)`,
    );
  return { waitedMs, otherCores };
}
