// `split-recovery`: a recovery of 5,000 failed deliveries at RECOVERY_RATE_PER_SECOND=100,
// beside live writes to the same webhook.
import { randomBytes } from 'node:crypto';
import type { Recovery } from '../../../src/objects';
import { insertFailedEvents } from '../../../test/support/webhook-rows';
import { CONFIG, log } from '../lib/config';
import { call } from '../lib/http';
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
  const { deliveries, rate, liveWritesPerSec } = CONFIG.recovery;
  const tag = randomBytes(3).toString('hex');
  const listId = `bench-${tag}-live`;
  const missedListId = `bench-${tag}-missed`;
  const [made] = await target.setUpFanout([{ listId, webhooks: [{ url: `https://127.0.0.1:${ctx.ports[0]}/recovery/${tag}` }] }]);
  const webhookId = made.webhookIds[0];
  const token = made.accounts[0].token;
  // The seeded deliveries are logged a millisecond apart up to now.
  const since = new Date(Date.now() - deliveries - 60_000).toISOString();
  await insertFailedEvents(target.sql, webhookId, missedListId, deliveries);
  const loggedCount = async () =>
    Number((await target.sql<{ n: string }[]>`SELECT deliveries_logged AS n FROM webhooks WHERE id = ${webhookId}`)[0].n);
  const loggedBefore = await loggedCount();
  await ctx.receivers('take'); // forget the setup's receipts

  const quiet = await waitForQuiet(ctx.sampler);
  const window = ctx.sampler.window();
  // The recovery first: its set is fixed as it starts, before the live deliveries' log rows
  // would prune the seeded ones (the log keeps each webhook's newest 1,000).
  const started = await call<Recovery>(target.baseUrl, 'POST', `/v3/webhooks/${webhookId}/recoveries`, token, { since });
  if (started.status !== 202) throw new Error(`POST recoveries answered ${started.status}: ${JSON.stringify(started.body)}`);
  // The live writes outlast the recovery: they run for the time it should take, and a fifth more.
  const liveMs = Math.round(((deliveries / rate) * 1000 * 6) / 5);
  const live = ctx.generator(
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
  let recovery = started.body;
  const limitAt = nowMs() + ((deliveries / rate) * 1000 + 120_000);
  while (recovery.finishedAt === null && nowMs() < limitAt) {
    await stack.sleep(500);
    recovery = (await call<Recovery>(target.baseUrl, 'GET', `/v3/webhooks/${webhookId}/recoveries/${recovery.id}`, token)).body;
  }
  const writes = await live;
  const accepted = writes.status.filter((status) => status === 202).length;
  // Drain: every live delivery and every send received (or the limit).
  const drainUntil = nowMs() + 30_000;
  while ((await ctx.receivers('counts')).pending < deliveries + accepted && nowMs() < drainUntil) await stack.sleep(250);
  await stack.sleep(500); // a late duplicate would show
  const measured = window();
  const receipts = await ctx.receivers('take');

  // The recovery's sends, by cursor of the missed list; the live deliveries, by cursor of the live one.
  const sendTimes: number[] = [];
  const sendsByCursor = new Map<number, number>();
  const liveByCursor = new Map<number, number[]>();
  for (let j = 0; j < receipts.t.length; j++) {
    if (receipts.list[j] === missedListId) {
      sendTimes.push(receipts.t[j]);
      sendsByCursor.set(receipts.cursor[j], (sendsByCursor.get(receipts.cursor[j]) ?? 0) + 1);
    } else if (receipts.list[j] === listId) {
      liveByCursor.set(receipts.cursor[j], [...(liveByCursor.get(receipts.cursor[j]) ?? []), receipts.t[j]]);
    }
  }
  sendTimes.sort((a, b) => a - b);
  const liveLatency: number[] = [];
  let liveMissing = 0;
  for (let i = 0; i < writes.t0.length; i++) {
    if (writes.status[i] !== 202) continue;
    const times = liveByCursor.get(writes.cursor[i]!);
    if (times) liveLatency.push(times[0] - writes.t0[i]);
    else liveMissing++;
  }
  const durationMs = recovery.finishedAt === null ? null : Date.parse(recovery.finishedAt) - Date.parse(recovery.createdAt);
  const cpuMs = target.serviceGroups.reduce((sum, group) => sum + (measured.groups[group]?.cpuMs ?? 0), 0);
  const summary: RecoverySummary = {
    deliveries,
    rate,
    liveWritesPerSec,
    status: recovery.status,
    stoppedReason: recovery.stoppedReason,
    total: recovery.total,
    sent: recovery.sent,
    delivered: recovery.delivered,
    failed: recovery.failed,
    /** From the recovery's createdAt to its finishedAt, as the API answers them. */
    durationMs,
    /** What the rate allows: deliveries / rate. */
    expectedMs: (deliveries / rate) * 1000,
    /** From the first send received to the last. */
    receivedSpanMs: sendTimes.length ? round(sendTimes[sendTimes.length - 1] - sendTimes[0]) : null,
    /** The most sends received in any one second. */
    mostInOneSecond: mostWithin(sendTimes, 1000),
    received: sendTimes.length,
    distinctReceived: sendsByCursor.size,
    duplicates: [...sendsByCursor.values()].filter((count) => count > 1).length,
    /** Attempts logged for the webhook during the scenario, less the live deliveries: the recovery's redeliveries. */
    redeliveriesLogged: (await loggedCount()) - loggedBefore - accepted,
    live: {
      accepted,
      received: liveLatency.length,
      missing: liveMissing,
      duplicates: [...liveByCursor.values()].filter((times) => times.length > 1).length,
      latencyMs: percentiles(liveLatency, [50, 99]),
    },
    cpuMsPerSend: round(cpuMs / Math.max(1, recovery.sent), 2),
    /** Other work on the machine before the recovery (cores busy outside the bench), and during it (CPU s). */
    quiet,
    cpu: measured,
  };
  log(
    `recovery: ${summary.status} in ${durationMs === null ? 'n/a' : round(durationMs / 1000)} s (the rate allows ${summary.expectedMs / 1000} s), ` +
      `${summary.delivered}/${summary.total} delivered, ${summary.redeliveriesLogged} logged, ${summary.distinctReceived} received, ` +
      `${summary.duplicates} twice, at most ${summary.mostInOneSecond} in a second; live: ${accepted} writes, ${summary.live.received} received, ` +
      `${liveMissing} missing, p50/p99 ${summary.live.latencyMs.p50}/${summary.live.latencyMs.p99} ms`,
  );
  return { steps: [], knee: null, recovery: summary, logs: scanLogs(target.logFiles) };
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
