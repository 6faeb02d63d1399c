// `split-recovery`: a recovery of 5,000 failed deliveries at RECOVERY_RATE_PER_SECOND=100,
// beside live writes to the same webhook.
import { randomBytes } from 'node:crypto';
import type { Recovery, UsageDay } from '../../../src/objects';
import { insertFailedEvents } from '../../lib/failed-deliveries';
import { CONFIG, log } from '../lib/config';
import { call } from '../lib/http';
import { type Receipts, type Writes } from '../lib/ledger';
import { scanLogs } from '../lib/logs';
import * as stack from '../lib/stack';
import { waitForQuiet } from '../lib/step';
import { nowMs, percentiles, round } from '../lib/stats';
import { type Context, type Outcome, type RecoverySummary, type ServiceTarget, type WorkloadScenario } from '../lib/types';
import { serviceWorkload } from './service';

export const scenarios: WorkloadScenario[] = [
  serviceWorkload(
    'recovery',
    'split',
    `recovery of ${CONFIG.recovery.deliveries} deliveries at ${CONFIG.recovery.rate}/s beside live writes (API + worker processes)`,
    runRecovery,
    { RECOVERY_RATE_PER_SECOND: String(CONFIG.recovery.rate) },
  ),
];

/**
 * One webhook whose log holds 5,000 failed deliveries (of a list of their own, written straight
 * into the log). Live writes go to the webhook at 10/s while a recovery of the 5,000 runs at
 * 100/s; the recovery's duration is the API's (createdAt to finishedAt), the duplicates, the
 * most received in a second and the live deliveries' latency the receivers'. The rate bounds
 * when the sends' POSTs begin; the receivers see them a little bunched by the network and the
 * sender's event loop.
 */
async function runRecovery(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const { deliveries } = CONFIG.recovery;
  const tag = randomBytes(3).toString('hex');
  const lists = { live: `bench-${tag}-live`, missed: `bench-${tag}-missed` };
  const [made] = await target.setUpFanout([
    { listId: lists.live, webhooks: [{ url: `https://127.0.0.1:${ctx.ports[0]}/recovery/${tag}` }] },
  ]);
  const webhook = { id: made.webhookIds[0], token: made.accounts[0].token };
  // The seeded deliveries are logged a millisecond apart up to now.
  const since = new Date(Date.now() - deliveries - 60_000).toISOString();
  await insertFailedEvents(target.sql, webhook.id, lists.missed, deliveries);
  const sentBefore = await deliveriesMetered(target.baseUrl, webhook.token);
  await ctx.receivers('take'); // forget the setup's receipts

  const quiet = await waitForQuiet(ctx.sampler);
  const window = ctx.sampler.window();
  // The recovery first: its set is fixed as it starts, before the live deliveries' log rows
  // would prune the seeded ones (the log keeps each webhook's newest 1,000).
  const started = await call<Recovery>(target.baseUrl, 'POST', `/v3/webhooks/${webhook.id}/recoveries`, webhook.token, { since });
  if (started.status !== 202) throw new Error(`POST recoveries answered ${started.status}: ${JSON.stringify(started.body)}`);
  const live = liveWrites(target, ctx, lists.live, tag);
  const recovery = await recoveryFinished(target.baseUrl, webhook.token, started.body);
  const writes = await live;
  const accepted = writes.status.filter((status) => status === 202).length;
  // Drain: every live delivery and every send received (or the limit).
  const drainUntil = nowMs() + 30_000;
  while ((await ctx.receivers('counts')).pending < deliveries + accepted && nowMs() < drainUntil) await stack.sleep(250);
  await stack.sleep(500); // a late duplicate would show
  const measured = window();
  const receipts = await ctx.receivers('take');
  const cpuMs = target.serviceGroups.reduce((sum, group) => sum + (measured.groups[group]?.cpuMs ?? 0), 0);
  const summary: RecoverySummary = {
    ...recoveryFigures(recovery),
    ...sendFigures(receipts, lists.missed),
    // Each attempt is metered as its log row is written, in the same statement.
    redeliveriesLogged: (await deliveriesMetered(target.baseUrl, webhook.token)) - sentBefore - accepted,
    live: liveFigures(receipts, lists.live, writes),
    cpuMsPerSend: round(cpuMs / Math.max(1, recovery.sent), 2),
    quiet,
    cpu: measured,
  };
  logRecovery(summary);
  return { steps: [], knee: null, recovery: summary, logs: scanLogs(target.logFiles) };
}

/** The deliveries the account's fair-use meter has counted, every day together. */
async function deliveriesMetered(baseUrl: string, token: string): Promise<number> {
  const usage = await call<{ data: UsageDay[] }>(baseUrl, 'GET', '/v3/account/usage', token);
  if (usage.status !== 200) throw new Error(`GET /v3/account/usage answered ${usage.status}`);
  return usage.body.data.reduce((sum, day) => sum + day.deliveries, 0);
}

/** The live writes: they outlast the recovery, running for the time it should take, and a fifth more. */
function liveWrites(target: ServiceTarget, ctx: Context, listId: string, tag: string) {
  const { deliveries, rate, liveWritesPerSec } = CONFIG.recovery;
  const liveMs = Math.round(((deliveries / rate) * 1000 * 6) / 5);
  return ctx.generator(
    'writes',
    {
      baseUrl: target.baseUrl,
      token: target.token,
      lists: [listId],
      rate: liveWritesPerSec,
      durationMs: liveMs,
      startAt: nowMs() + 100,
      writeIdPrefix: `${tag}-live`,
      changes: CONFIG.changesPerWrite,
      timeoutMs: CONFIG.writeTimeoutMs,
    },
    liveMs + CONFIG.writeTimeoutMs + 60_000,
  );
}

/** The recovery as the API answers once it has finished, or once it should have by far. */
async function recoveryFinished(baseUrl: string, token: string, started: Recovery): Promise<Recovery> {
  const { deliveries, rate } = CONFIG.recovery;
  let recovery = started;
  const limitAt = nowMs() + ((deliveries / rate) * 1000 + 120_000);
  while (recovery.finishedAt === null && nowMs() < limitAt) {
    await stack.sleep(500);
    recovery = (await call<Recovery>(baseUrl, 'GET', `/v3/webhooks/${recovery.webhookId}/recoveries/${recovery.id}`, token)).body;
  }
  return recovery;
}

/** What the API says of the recovery, beside what its rate allows. */
function recoveryFigures(recovery: Recovery) {
  const { deliveries, rate, liveWritesPerSec } = CONFIG.recovery;
  return {
    deliveries,
    rate,
    liveWritesPerSec,
    status: recovery.status,
    stoppedReason: recovery.stoppedReason,
    total: recovery.total,
    sent: recovery.sent,
    delivered: recovery.delivered,
    failed: recovery.failed,
    durationMs: recovery.finishedAt === null ? null : Date.parse(recovery.finishedAt) - Date.parse(recovery.createdAt),
    expectedMs: (deliveries / rate) * 1000,
  };
}

/** The recovery's sends as the receivers got them: by cursor of the missed list. */
function sendFigures(receipts: Receipts, missedListId: string) {
  const sendTimes: number[] = [];
  const sendsByCursor = new Map<number, number>();
  for (let j = 0; j < receipts.t.length; j++) {
    if (receipts.list[j] !== missedListId) continue;
    sendTimes.push(receipts.t[j]);
    sendsByCursor.set(receipts.cursor[j], (sendsByCursor.get(receipts.cursor[j]) ?? 0) + 1);
  }
  sendTimes.sort((a, b) => a - b);
  return {
    receivedSpanMs: sendTimes.length ? round(sendTimes[sendTimes.length - 1] - sendTimes[0]) : null,
    mostInOneSecond: mostWithin(sendTimes, 1000),
    received: sendTimes.length,
    distinctReceived: sendsByCursor.size,
    duplicates: [...sendsByCursor.values()].filter((count) => count > 1).length,
  };
}

/** The live deliveries meanwhile: by cursor of the live list, each from its write's due time. */
function liveFigures(receipts: Receipts, listId: string, writes: Writes): RecoverySummary['live'] {
  const liveByCursor = new Map<number, number[]>();
  for (let j = 0; j < receipts.t.length; j++) {
    if (receipts.list[j] === listId) liveByCursor.set(receipts.cursor[j], [...(liveByCursor.get(receipts.cursor[j]) ?? []), receipts.t[j]]);
  }
  const latency: number[] = [];
  let missing = 0;
  for (let i = 0; i < writes.t0.length; i++) {
    if (writes.status[i] !== 202) continue;
    const times = liveByCursor.get(writes.cursor[i]!);
    if (times) latency.push(times[0] - writes.t0[i]);
    else missing++;
  }
  return {
    accepted: writes.status.filter((status) => status === 202).length,
    received: latency.length,
    missing,
    duplicates: [...liveByCursor.values()].filter((times) => times.length > 1).length,
    latencyMs: percentiles(latency, [50, 99]),
  };
}

function logRecovery(summary: RecoverySummary): void {
  const { durationMs, live } = summary;
  log(
    `recovery: ${summary.status} in ${durationMs === null ? 'n/a' : round(durationMs / 1000)} s (the rate allows ${summary.expectedMs / 1000} s), ` +
      `${summary.delivered}/${summary.total} delivered, ${summary.redeliveriesLogged} logged, ${summary.distinctReceived} received, ` +
      `${summary.duplicates} twice, at most ${summary.mostInOneSecond} in a second; live: ${live.accepted} writes, ${live.received} received, ` +
      `${live.missing} missing, p50/p99 ${live.latencyMs.p50}/${live.latencyMs.p99} ms`,
  );
}

/** The most of the sorted `times` that fall within any window of `spanMs`. */
function mostWithin(times: number[], spanMs: number): number {
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last] - times[first] >= spanMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}
