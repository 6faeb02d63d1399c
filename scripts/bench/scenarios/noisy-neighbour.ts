// `split-noisy-neighbour`: fairness. A quiet account's one-delivery writes at 5/s, alone,
// beside a list written every 5 s with 5,000 deliveries a write, and beside another account
// flooding the public API.
import { randomBytes } from 'node:crypto';
import { TOPICS } from '../../../src/topics';
import { type GeneratorApi } from '../generator';
import { forkChild } from '../lib/children';
import { CONFIG, log } from '../lib/config';
import { rpcClient } from '../lib/ipc';
import { computeStep, emptyReceipts, type Receipts, type Recipients, type Recorded, type Writes } from '../lib/ledger';
import { scanLogs } from '../lib/logs';
import * as stack from '../lib/stack';
import { waitForQuiet } from '../lib/step';
import { nowMs, percentiles, round } from '../lib/stats';
import {
  type Context,
  type NoisyNeighbourPhase,
  type NoisyNeighbourSummary,
  type OutcomesPoller,
  type Outcome,
  type ServiceTarget,
  type WorkloadScenario,
} from '../lib/types';
import { serviceWorkload } from './service';

const settings = CONFIG.noisyNeighbour;

export const scenarios: WorkloadScenario[] = [
  serviceWorkload(
    'noisy-neighbour',
    'split',
    `one-delivery writes at ${settings.quietWritesPerSec}/s alone, beside a list of ${settings.noisyDeliveriesPerWrite} deliveries ` +
      `a write every ${settings.noisyEveryMs / 1000} s, and beside an API flood (API + worker processes)`,
    runNoisyNeighbour,
  ),
];

/**
 * Three accounts' kinds, each on lists of its own: the quiet account, one webhook on
 * list.changed (one delivery a write); the noisy list, of accounts with five webhooks each on
 * every topic, its writes firing every topic; the flooding account, one webhook to ping.
 * The quiet account writes at 5/s (and reads its webhooks at 2/s) in three phases: alone,
 * beside the noisy list's writes, and, once the noisy deliveries are all in, beside the flood.
 * Latencies run from each request's due time; a delivery's is to its first receipt.
 */
async function runNoisyNeighbour(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const { quietWritesPerSec, quietReadsPerSec, noisyDeliveriesPerWrite, noisyEveryMs, floodConnections, phaseMs, drainMs } = settings;
  const noisyWebhooks = noisyDeliveriesPerWrite / TOPICS.length;
  if (!Number.isInteger(noisyWebhooks))
    throw new Error(`noisy deliveries per write (${noisyDeliveriesPerWrite}) must be a multiple of the ${TOPICS.length} topics`);
  const tag = randomBytes(3).toString('hex');
  const url = (name: string, k: number) => `https://127.0.0.1:${ctx.ports[k % ctx.ports.length]}/${name}/${tag}/${k}`;
  const setUpStarted = nowMs();
  const [quiet, flood, noisy] = await target.setUpFanout([
    { listId: `bench-${tag}-quiet`, webhooks: [{ url: url('quiet', 0) }] },
    { listId: `bench-${tag}-flood`, webhooks: [{ url: url('flood', 1) }] },
    {
      listId: `bench-${tag}-noisy`,
      webhooks: Array.from({ length: noisyWebhooks }, (_, k) => ({ url: url('noisy', k) })),
      events: [...TOPICS],
    },
  ]);
  const setUpMs = round(nowMs() - setUpStarted, 0);
  log(`noisy-neighbour: set up ${noisyWebhooks} noisy webhooks of ${noisy.accounts.length} accounts in ${round(setUpMs / 1000)} s`);
  const quietRecipients: Recipients = new Map([[quiet.listId, [{ webhookId: quiet.webhookIds[0], topic: 'list.changed' }]]]);
  const noisyRecipients: Recipients = new Map([
    [noisy.listId, noisy.webhookIds.flatMap((webhookId) => TOPICS.map((topic) => ({ webhookId, topic })))],
  ]);
  const quietToken = quiet.accounts[0].token;
  await ctx.receivers('take'); // forget the setup's receipts

  // The flood comes from a process of its own, so that the quiet account's requests are sent on time.
  const flooderChild = forkChild('flood', 'generator.js', {});
  const flooder = rpcClient<GeneratorApi>(flooderChild);
  ctx.sampler.addGroup('flood', () => [flooderChild.pid!]);

  // The receipts as they come: the quiet list's of the running phase, every other (the noisy list's) apart.
  let quietReceipts = emptyReceipts();
  const noisyReceipts = emptyReceipts();
  const collect = async () => {
    const taken = await ctx.receivers('take');
    for (let j = 0; j < taken.t.length; j++) appendReceipt(taken.list[j] === quiet.listId ? quietReceipts : noisyReceipts, taken, j);
  };
  /**
   * Collects receipts and logged outcomes until each of `expected` deliveries was received or
   * logged as failed, or `limitMs` passed; then a moment more, for a late duplicate to show.
   */
  const drain = async (poller: OutcomesPoller, records: Recorded[], received: () => number, expected: number, limitMs: number) => {
    const from = nowMs();
    let drained = false;
    while (!drained && nowMs() - from < limitMs) {
      await stack.sleep(250);
      await collect();
      for (const record of await poller.take()) records.push(record);
      const failed = records.filter((record) => !record.delivered).length;
      drained = records.length >= expected && received() + failed >= expected;
    }
    const waitedMs = round(nowMs() - from, 0);
    await stack.sleep(300);
    await collect();
    for (const record of await poller.take()) records.push(record);
    return { drainMs: waitedMs, drained };
  };

  /** One phase: the quiet account's writes and reads for `phaseMs`, `beside` them what the phase adds, then their drain. */
  const runPhase = async <T>(name: NoisyNeighbourPhase['name'], beside: (startAt: number) => Promise<T>) => {
    const otherWork = await waitForQuiet(ctx.sampler);
    quietReceipts = emptyReceipts();
    const poller = target.outcomesPoller(quiet.webhookIds);
    await poller.ready;
    const window = ctx.sampler.window();
    const startAt = nowMs() + 500;
    const rpcTimeoutMs = phaseMs + CONFIG.writeTimeoutMs + 60_000;
    const [writes, reads, besideResult] = await Promise.all([
      ctx.generator(
        'writes',
        {
          baseUrl: target.baseUrl,
          token: target.token,
          lists: [quiet.listId],
          rate: quietWritesPerSec,
          durationMs: phaseMs,
          startAt,
          writeIdPrefix: `${tag}-${name}`,
          changes: CONFIG.changesPerWrite,
          timeoutMs: CONFIG.writeTimeoutMs,
        },
        rpcTimeoutMs,
      ),
      ctx.generator(
        'reads',
        {
          baseUrl: target.baseUrl,
          token: quietToken,
          path: '/v3/webhooks',
          rate: quietReadsPerSec,
          durationMs: phaseMs,
          startAt,
          timeoutMs: CONFIG.writeTimeoutMs,
        },
        rpcTimeoutMs,
      ),
      beside(startAt),
    ]);
    const records: Recorded[] = [];
    const accepted = writes.status.filter((status) => status === 202).length;
    const drained = await drain(poller, records, () => quietReceipts.t.length, accepted, drainMs);
    const cpu = window();
    const figures = computeStep({
      writes,
      receipts: quietReceipts,
      recorded: records,
      recipients: quietRecipients,
      steadyFrom: startAt,
      steadyMs: phaseMs,
      recordsPrunedUnseen: await poller.prunedUnseen(),
    });
    await poller.stop();
    const readStatuses: Record<string, number> = {};
    for (const status of reads.status) readStatuses[String(status)] = (readStatuses[String(status)] ?? 0) + 1;
    const phase: NoisyNeighbourPhase = {
      name,
      otherWork,
      quietWrites: { scheduled: figures.writes.scheduled, accepted: figures.writes.accepted },
      quietE2eMs: figures.e2eMs,
      quietAcceptMs: figures.acceptMs,
      quietLedger: figures.ledger,
      quietReadMs: percentiles(
        reads.t0.map((t0, i) => reads.doneAt[i] - t0),
        [50, 99],
      ),
      quietReadStatuses: readStatuses,
      ...drained,
      serviceCpuMs: round(target.serviceGroups.reduce((sum, group) => sum + (cpu.groups[group]?.cpuMs ?? 0), 0)),
      cpu,
    };
    const { ledger: l, e2eMs } = figures;
    log(
      `noisy-neighbour ${name}: quiet writes ${figures.writes.accepted}/${figures.writes.scheduled} accepted, ` +
        `e2e p50/p99/max ${e2eMs.p50}/${e2eMs.p99}/${e2eMs.max} ms, reads p50/p99 ${phase.quietReadMs.p50}/${phase.quietReadMs.p99} ms, ` +
        `ledger ${l.balanced ? 'balanced' : 'NOT balanced'} (sent ${l.sent} = ${l.delivered} delivered + ${l.failedRecorded} failed + ` +
        `${l.missing} missing; ${l.duplicates} dup)`,
    );
    return { phase, beside: besideResult };
  };

  const window = ctx.sampler.window();
  try {
    const alone = await runPhase('alone', () => Promise.resolve());

    const noisyPoller = target.outcomesPoller(noisy.webhookIds);
    await noisyPoller.ready;
    const beside = await runPhase('noisy', (startAt) =>
      ctx.generator(
        'writes',
        {
          baseUrl: target.baseUrl,
          token: target.token,
          lists: [noisy.listId],
          rate: 1000 / noisyEveryMs,
          durationMs: phaseMs,
          startAt,
          writeIdPrefix: `${tag}-noisy`,
          changes: CONFIG.changesPerWrite,
          timeoutMs: CONFIG.writeTimeoutMs,
          // The list's last account is one of its members.
          joinedAccountId: noisy.accounts[noisy.accounts.length - 1].id,
        },
        phaseMs + CONFIG.writeTimeoutMs + 60_000,
      ),
    );
    const noisyWrites = beside.beside;
    const noisyRecords: Recorded[] = [];
    const noisyAccepted = noisyWrites.status.filter((status) => status === 202).length;
    const noisyDrain = await drain(
      noisyPoller,
      noisyRecords,
      () => noisyReceipts.t.length,
      noisyAccepted * noisyDeliveriesPerWrite,
      drainMs,
    );
    const noisyFigures = computeStep({
      writes: noisyWrites,
      receipts: noisyReceipts,
      recorded: noisyRecords,
      recipients: noisyRecipients,
      steadyFrom: noisyWrites.t0[0] ?? 0,
      steadyMs: phaseMs,
      recordsPrunedUnseen: await noisyPoller.prunedUnseen(),
    });
    await noisyPoller.stop();

    const flooded = await runPhase('flood', (startAt) =>
      flooder(
        'flood',
        {
          baseUrl: target.baseUrl,
          token: flood.accounts[0].token,
          requests: [
            { method: 'GET', path: '/v3/webhooks' },
            { method: 'POST', path: `/v3/webhooks/${flood.webhookIds[0]}/pings` },
          ],
          connections: floodConnections,
          durationMs: phaseMs,
          startAt,
          timeoutMs: CONFIG.writeTimeoutMs,
        },
        phaseMs + CONFIG.writeTimeoutMs + 60_000,
      ),
    );
    const cpu = window();

    const phases = [alone.phase, beside.phase, flooded.phase];
    const e2e = (phase: NoisyNeighbourPhase) => phase.quietE2eMs;
    const { ledger: noisyLedger } = noisyFigures;
    const spans = writeSpans(noisyWrites, noisyReceipts);
    const firstDue = noisyWrites.t0[0];
    const lastReceipt = noisyReceipts.t.length ? noisyReceipts.t.reduce((a, b) => Math.max(a, b)) : null;
    const summary: NoisyNeighbourSummary = {
      quietWritesPerSec,
      quietReadsPerSec,
      noisyDeliveriesPerWrite,
      noisyEveryMs,
      noisyWebhooks,
      noisyAccounts: noisy.accounts.length,
      phaseMs,
      floodConnections,
      setUpMs,
      quietAloneE2eP50Ms: e2e(alone.phase).p50,
      quietAloneE2eP99Ms: e2e(alone.phase).p99,
      quietAloneE2eMaxMs: e2e(alone.phase).max,
      quietE2eP50Ms: e2e(beside.phase).p50,
      quietE2eP99Ms: e2e(beside.phase).p99,
      quietE2eMaxMs: e2e(beside.phase).max,
      quietFloodE2eP50Ms: e2e(flooded.phase).p50,
      quietFloodE2eP99Ms: e2e(flooded.phase).p99,
      quietFloodE2eMaxMs: e2e(flooded.phase).max,
      noisyWritesAccepted: noisyFigures.writes.accepted,
      noisyDeliveriesExpected: noisyLedger.sent,
      noisyDelivered: noisyLedger.delivered,
      noisyFailed: noisyLedger.failedRecorded,
      noisyDuplicates: noisyLedger.duplicates,
      noisyMissing: noisyLedger.missing,
      noisyLedger,
      noisyWriteSpanMs: percentiles(spans.firstToLast, [50, 99]),
      noisyWriteToLastMs: percentiles(spans.dueToLast, [50, 99]),
      noisyDeliveriesPerSec:
        lastReceipt !== null && firstDue !== undefined ? round((noisyReceipts.t.length * 1000) / (lastReceipt - firstDue)) : null,
      noisyDrainMs: noisyDrain.drainMs,
      noisyDrained: noisyDrain.drained,
      flood: { ...flooded.beside, perSec: round((flooded.beside.requests * 1000) / phaseMs) },
      phases,
      cpu,
    };
    log(
      `noisy-neighbour: quiet e2e p99 alone ${summary.quietAloneE2eP99Ms} ms, beside the noisy list ${summary.quietE2eP99Ms} ms, ` +
        `beside the flood ${summary.quietFloodE2eP99Ms} ms; noisy: ${summary.noisyWritesAccepted} writes, ` +
        `${noisyLedger.sent} deliveries = ${noisyLedger.delivered} delivered + ${noisyLedger.failedRecorded} failed + ` +
        `${noisyLedger.missing} missing (${noisyLedger.duplicates} dup), ${summary.noisyDeliveriesPerSec} deliveries/s, ` +
        `a write's first to last receipt p50/p99 ${summary.noisyWriteSpanMs.p50}/${summary.noisyWriteSpanMs.p99} ms; ` +
        `flood: ${summary.flood.requests} requests (${summary.flood.perSec}/s), ${JSON.stringify(summary.flood.statuses)}`,
    );
    for (const m of noisyLedger.missingSample) log(`  missing ${m.key}: ${m.why}`);
    for (const d of noisyLedger.duplicateSample) log(`  duplicate ${d.key}: received ${d.received}, recorded ${d.recorded}`);
    return { steps: [], knee: null, noisyNeighbour: summary, logs: scanLogs(target.logFiles) };
  } finally {
    ctx.sampler.removeGroup('flood');
    await stack.terminate(flooderChild);
  }
}

/** Appends receipt `j` of `from` to `to`. */
function appendReceipt(to: Receipts, from: Receipts, j: number): void {
  to.t.push(from.t[j]);
  to.webhook.push(from.webhook[j]);
  to.list.push(from.list[j]);
  to.cursor.push(from.cursor[j]);
  to.event.push(from.event[j]);
  to.sigOk.push(from.sigOk[j]);
  to.status.push(from.status[j]);
}

/** Per accepted write: from its first receipt to its last, and from its due time to its last. */
function writeSpans(writes: Writes, receipts: Receipts) {
  const byCursor = new Map<number, { first: number; last: number }>();
  for (let j = 0; j < receipts.t.length; j++) {
    const seen = byCursor.get(receipts.cursor[j]);
    if (!seen) byCursor.set(receipts.cursor[j], { first: receipts.t[j], last: receipts.t[j] });
    else {
      seen.first = Math.min(seen.first, receipts.t[j]);
      seen.last = Math.max(seen.last, receipts.t[j]);
    }
  }
  const firstToLast: number[] = [];
  const dueToLast: number[] = [];
  for (let i = 0; i < writes.t0.length; i++) {
    const span = writes.status[i] === 202 ? byCursor.get(writes.cursor[i]!) : undefined;
    if (!span) continue;
    firstToLast.push(span.last - span.first);
    dueToLast.push(span.last - writes.t0[i]);
  }
  return { firstToLast, dueToLast };
}
