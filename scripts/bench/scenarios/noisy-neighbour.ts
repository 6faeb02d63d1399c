// `split-noisy-neighbour`: fairness. A quiet account's one-delivery writes at 5/s, alone,
// beside a list written every 5 s with 5,000 deliveries a write, beside each of three floods
// of the public API, and beside another account's two relay sessions kept busy.
import { randomBytes } from 'node:crypto';
import { byteSize } from '../../../src/limits';
import { TOPICS } from '../../../src/topics';
import { FLOOD_KINDS, type FloodAnswers, type FloodKind } from '../flooder';
import { type Throttling } from '../lib/cgroups';
import { CONFIG, log } from '../lib/config';
import { type FloodClient, startFloodClient } from '../lib/flood-client';
import { createAccount } from '../lib/http';
import { computeStep, emptyReceipts, type Receipts, type Recorded, type StepFigures, type Writes } from '../lib/ledger';
import { scanLogs } from '../lib/logs';
import { type Measured } from '../lib/proc';
import { accountWithList, type Listen, type LocalServer, startListen, startLocalServer } from '../lib/relay-cli';
import * as stack from '../lib/stack';
import { waitForQuiet } from '../lib/step';
import { nowMs, percentiles, round } from '../lib/stats';
import {
  type Account,
  type BusyRelays,
  type Context,
  type FloodFigures,
  type MadeList,
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
      `a write every ${settings.noisyEveryMs / 1000} s, beside floods of the public API (429, 401, 413), and beside ${settings.relaySessions} relay sessions ` +
      `busy with ${settings.relayWritesPerSec} writes/s (API + worker processes)`,
    runNoisyNeighbour,
  ),
];

/** A generator call's limit: its phase, then a request's timeout, then a margin. */
const rpcTimeoutMs = settings.phaseMs + CONFIG.writeTimeoutMs + 60_000;

type AccountList = MadeList & { accounts: Account[] };

/** The two lists and the flooding accounts, made before the phases; `tag` marks the run's list ids and URLs. */
interface Lists {
  tag: string;
  quiet: AccountList;
  noisy: AccountList;
  /** The valid token of the 429 flood (far over its limit) and of the 413 flood (its own limit). */
  floodTokens: Record<'429' | '413', string>;
  noisyWebhooks: number;
  setUpMs: number;
}

/** The receipts as they come: the quiet list's of the running phase, every other (the noisy list's) apart. */
interface SortedReceipts {
  quiet: Receipts;
  readonly noisy: Receipts;
  /** Takes the receivers' new receipts into `quiet` and `noisy`. */
  collect(): Promise<void>;
}

/** What the phases share. */
interface Run {
  target: ServiceTarget;
  ctx: Context;
  lists: Lists;
  receipts: SortedReceipts;
}

type Drain = { drainMs: number; drained: boolean };

/** The noisy list's writes of its phase and what became of their deliveries once drained. */
interface NoisyListResult {
  writes: Writes;
  figures: StepFigures;
  drain: Drain;
}

/**
 * Five accounts' kinds, each on lists of its own: the quiet account, one webhook on
 * list.changed (one delivery a write); the noisy list, of accounts with five webhooks each on
 * every topic, its writes firing every topic; two flooding accounts; the relay account, its
 * relay sessions on its list's list.changed (one delivery a write to each). The quiet account
 * writes at 5/s (and reads its webhooks at 2/s) in six phases: alone, beside the noisy list's
 * writes, once the noisy deliveries are all in beside each flood (429, 401, 413), and beside
 * the relay account's writes. Latencies run from each request's due time; a delivery's is to
 * its first receipt.
 */
async function runNoisyNeighbour(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const lists = await setUpLists(target, ctx);
  const run: Run = { target, ctx, lists, receipts: sortedReceipts(ctx, lists.quiet.listId) };

  // The floods come from a process of their own, so that the quiet account's requests are sent on time.
  const client = await startFloodClient(ctx, target.baseUrl);
  const window = ctx.sampler.window();
  try {
    const alone = await runPhase(run, 'alone', () => Promise.resolve());
    const noisyPoller = target.outcomesPoller(lists.noisy.webhookIds);
    await noisyPoller.ready;
    const beside = await runPhase(run, 'noisy', (startAt) => writeNoisyList(run, startAt));
    const noisyList = await drainNoisyList(run, noisyPoller, beside.beside);
    const floods: { phase: NoisyNeighbourPhase; figures: FloodFigures }[] = [];
    for (const kind of FLOOD_KINDS) floods.push(await floodPhase(run, client, kind, alone.phase));
    const relays = await besideBusyRelays(run);
    const phases = [alone.phase, beside.phase, ...floods.map((flood) => flood.phase), relays.phase];
    const summary = summarise(
      run,
      phases,
      noisyList,
      floods.map((flood) => flood.figures),
      relays.relay,
      window(),
    );
    logSummary(summary);
    return { steps: [], knee: null, noisyNeighbour: summary, logs: scanLogs(target.logFiles) };
  } finally {
    await client.stop();
  }
}

/** Makes the quiet and noisy lists and the flooding accounts, then forgets the receipts their setup left. */
async function setUpLists(target: ServiceTarget, ctx: Context): Promise<Lists> {
  const noisyWebhooks = settings.noisyDeliveriesPerWrite / TOPICS.length;
  if (!Number.isInteger(noisyWebhooks))
    throw new Error(`noisy deliveries per write (${settings.noisyDeliveriesPerWrite}) must be a multiple of the ${TOPICS.length} topics`);
  const tag = randomBytes(3).toString('hex');
  const url = (name: string, k: number) => `https://127.0.0.1:${ctx.ports[k % ctx.ports.length]}/${name}/${tag}/${k}`;
  const setUpStarted = nowMs();
  const [quiet, noisy] = await target.setUpFanout([
    { listId: `bench-${tag}-quiet`, webhooks: [{ url: url('quiet', 0) }] },
    {
      listId: `bench-${tag}-noisy`,
      webhooks: Array.from({ length: noisyWebhooks }, (_, k) => ({ url: url('noisy', k) })),
      events: [...TOPICS],
    },
  ]);
  const floodTokens = { 429: (await createAccount(target.internal)).token, 413: (await createAccount(target.internal)).token };
  const setUpMs = round(nowMs() - setUpStarted, 0);
  log(`noisy-neighbour: set up ${noisyWebhooks} noisy webhooks of ${noisy.accounts.length} accounts in ${round(setUpMs / 1000)} s`);
  await ctx.receivers('take');
  return { tag, quiet, noisy, floodTokens, noisyWebhooks, setUpMs };
}

/** Receipts sorted as they are taken: the quiet list's apart from every other. */
function sortedReceipts(ctx: Context, quietListId: string): SortedReceipts {
  const sorted: SortedReceipts = {
    quiet: emptyReceipts(),
    noisy: emptyReceipts(),
    collect: async () => {
      const taken = await ctx.receivers('take');
      for (let j = 0; j < taken.t.length; j++) appendReceipt(taken.list[j] === quietListId ? sorted.quiet : sorted.noisy, taken, j);
    },
  };
  return sorted;
}

/**
 * Collects receipts and logged outcomes until each of `expected` deliveries was received or
 * logged as failed, or the drain's limit passed; then a moment more, for a late duplicate to show.
 */
async function drain(
  receipts: SortedReceipts,
  poller: OutcomesPoller,
  records: Recorded[],
  received: () => number,
  expected: number,
): Promise<Drain> {
  const from = nowMs();
  let drained = false;
  while (!drained && nowMs() - from < settings.drainMs) {
    await stack.sleep(250);
    await receipts.collect();
    for (const record of await poller.take()) records.push(record);
    const failed = records.filter((record) => !record.delivered).length;
    drained = records.length >= expected && received() + failed >= expected;
  }
  const waitedMs = round(nowMs() - from, 0);
  await stack.sleep(300);
  await receipts.collect();
  for (const record of await poller.take()) records.push(record);
  return { drainMs: waitedMs, drained };
}

/** One phase: the quiet account's writes and reads for the phase's length, `beside` them what the phase adds, then their drain. */
async function runPhase<T>(run: Run, name: NoisyNeighbourPhase['name'], beside: (startAt: number) => Promise<T>) {
  const { target, ctx, lists, receipts } = run;
  await settleDatabase(target);
  const otherWork = await waitForQuiet(ctx.sampler);
  receipts.quiet = emptyReceipts();
  const poller = target.outcomesPoller(lists.quiet.webhookIds);
  await poller.ready;
  const window = ctx.sampler.window();
  const startAt = nowMs() + 500;
  const [[writes, reads], besideResult, steadyCpu] = await Promise.all([
    quietRequests(run, name, startAt),
    beside(startAt),
    steadyWindow(ctx, startAt),
  ]);
  const records: Recorded[] = [];
  const accepted = writes.status.filter((status) => status === 202).length;
  const drained = await drain(receipts, poller, records, () => receipts.quiet.t.length, accepted);
  const cpu = window();
  const figures = computeStep({
    writes,
    receipts: receipts.quiet,
    recorded: records,
    recipients: new Map([[lists.quiet.listId, [{ webhookId: lists.quiet.webhookIds[0], topic: 'list.changed' }]]]),
    steadyFrom: startAt,
    steadyMs: settings.phaseMs,
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
    serviceCpuMs: serviceCpuMs(target, cpu),
    cpu,
    steadyCpu,
  };
  logPhase(phase);
  return { phase, beside: besideResult };
}

/** The system under test's CPU (API, workers, Temporal, PostgreSQL) in a window. */
function serviceCpuMs(target: ServiceTarget, cpu: Measured): number {
  return round(target.serviceGroups.reduce((sum, group) => sum + (cpu.groups[group]?.cpuMs ?? 0), 0));
}

/** The sampler's window over a phase's requests: `phaseMs` from `startAt`. */
async function steadyWindow(ctx: Context, startAt: number): Promise<Measured> {
  await stack.sleep(startAt - nowMs());
  const window = ctx.sampler.window();
  await stack.sleep(startAt + settings.phaseMs - nowMs());
  return window();
}

/**
 * Writes out the previous phase's dirty pages and waits for its vacuums (at most the quiet wait),
 * so that a phase's commits do not pay for the phase before it: the flood after the noisy list
 * would otherwise be measured beside that list's cleanup.
 */
async function settleDatabase(target: ServiceTarget): Promise<void> {
  await target.sql`CHECKPOINT`;
  const until = nowMs() + CONFIG.quietWaitMs;
  while (nowMs() < until) {
    const [{ running }] = await target.sql<{ running: number }[]>`SELECT count(*)::int AS running FROM pg_stat_progress_vacuum`;
    if (running === 0) return;
    await stack.sleep(500);
  }
}

/** The quiet account's writes to its list and reads of its webhooks, from `startAt` for the phase. */
function quietRequests(run: Run, name: NoisyNeighbourPhase['name'], startAt: number) {
  const { target, ctx, lists } = run;
  return Promise.all([
    ctx.generator(
      'writes',
      {
        baseUrl: target.baseUrl,
        token: target.token,
        lists: [lists.quiet.listId],
        rate: settings.quietWritesPerSec,
        durationMs: settings.phaseMs,
        startAt,
        writeIdPrefix: `${lists.tag}-${name}`,
        changes: CONFIG.changesPerWrite,
        timeoutMs: CONFIG.writeTimeoutMs,
      },
      rpcTimeoutMs,
    ),
    ctx.generator(
      'reads',
      {
        baseUrl: target.baseUrl,
        token: lists.quiet.accounts[0].token,
        path: '/v3/webhooks',
        rate: settings.quietReadsPerSec,
        durationMs: settings.phaseMs,
        startAt,
        timeoutMs: CONFIG.writeTimeoutMs,
      },
      rpcTimeoutMs,
    ),
  ]);
}

function logPhase(phase: NoisyNeighbourPhase): void {
  const { quietWrites: writes, quietE2eMs: e2eMs, quietReadMs: readMs, quietLedger: l } = phase;
  log(
    `noisy-neighbour ${phase.name}: quiet writes ${writes.accepted}/${writes.scheduled} accepted, ` +
      `e2e p50/p99/max ${e2eMs.p50}/${e2eMs.p99}/${e2eMs.max} ms, reads p50/p99 ${readMs.p50}/${readMs.p99} ms, ` +
      `ledger ${l.balanced ? 'balanced' : 'NOT balanced'} (sent ${l.sent} = ${l.delivered} delivered + ${l.failedRecorded} failed + ` +
      `${l.missing} missing; ${l.duplicates} dup)`,
  );
}

/** The noisy list's writes, one every `noisyEveryMs` from `startAt` for the phase. */
function writeNoisyList(run: Run, startAt: number): Promise<Writes> {
  const { noisy } = run.lists;
  // The list's last account is one of its members.
  return writeList(run, startAt, noisy.listId, 1000 / settings.noisyEveryMs, 'noisy', noisy.accounts[noisy.accounts.length - 1].id);
}

/** Writes to `listId` at `rate` a second from `startAt` for the phase (firing every topic with `joinedAccountId`: see the generator). */
function writeList(run: Run, startAt: number, listId: string, rate: number, name: string, joinedAccountId?: string): Promise<Writes> {
  const { target, ctx, lists } = run;
  return ctx.generator(
    'writes',
    {
      baseUrl: target.baseUrl,
      token: target.token,
      lists: [listId],
      rate,
      durationMs: settings.phaseMs,
      startAt,
      writeIdPrefix: `${lists.tag}-${name}`,
      changes: CONFIG.changesPerWrite,
      timeoutMs: CONFIG.writeTimeoutMs,
      joinedAccountId,
    },
    rpcTimeoutMs,
  );
}

/**
 * The phase beside busy relay sessions: another account owning a list, `relaySessions` of
 * `svc-webhooks listen` on its token, each on that list's list.changed and forwarding to a
 * local server of its own, and the list written `relayWritesPerSec` times a second for the
 * phase; then the wait for the relayed deliveries. The sessions end with the phase.
 */
async function besideBusyRelays(run: Run): Promise<{ phase: NoisyNeighbourPhase; relay: BusyRelays }> {
  const { target, ctx, lists } = run;
  const listId = `bench-${lists.tag}-relay`;
  const account = await accountWithList(target, listId);
  const locals: LocalServer[] = [];
  const listens: Listen[] = [];
  ctx.sampler.addGroup('listen', () => listens.map((listen) => listen.pid));
  try {
    for (let k = 0; k < settings.relaySessions; k++) {
      const local = await startLocalServer();
      locals.push(local);
      const listen = await startListen(ctx, target, account.token, local.url, [listId]);
      listens.push(listen);
      local.state.secret = listen.secret;
    }
    log(`noisy-neighbour: relay sessions ${listens.map((listen) => listen.sessionId).join(', ')} on ${listId}`);
    const poller = target.outcomesPoller(listens.map((listen) => listen.sessionId));
    await poller.ready;
    try {
      const relayed = await runPhase(run, 'relay', (startAt) => writeList(run, startAt, listId, settings.relayWritesPerSec, 'relay-list'));
      return { phase: relayed.phase, relay: await drainRelays(relayed.beside, listens, locals, poller) };
    } finally {
      await poller.stop();
    }
  } finally {
    ctx.sampler.removeGroup('listen');
    for (const listen of listens) await listen.stop();
    for (const local of locals) await local.close();
  }
}

/**
 * Waits until each accepted write of the relay list was received by every session's local
 * server or logged as failed, or the drain's limit passed; then a moment more, for a late
 * duplicate to show. Counts what each session was handed.
 */
async function drainRelays(writes: Writes, listens: Listen[], locals: LocalServer[], poller: OutcomesPoller): Promise<BusyRelays> {
  const accepted = writes.t0.flatMap((t0, i) => (writes.status[i] === 202 ? [{ t0, cursor: writes.cursor[i]! }] : []));
  const failed = new Set<string>();
  const takeFailures = async () => {
    for (const record of await poller.take()) if (!record.delivered) failed.add(`${record.webhook} ${record.cursor}`);
  };
  const outcomeless = () =>
    listens.reduce(
      (n, listen, k) =>
        n + accepted.filter(({ cursor }) => !locals[k].byCursor.has(cursor) && !failed.has(`${listen.sessionId} ${cursor}`)).length,
      0,
    );
  const from = nowMs();
  let drained = false;
  while (!drained && nowMs() - from < settings.drainMs) {
    await stack.sleep(250);
    await takeFailures();
    drained = outcomeless() === 0;
  }
  const drainMs = round(nowMs() - from, 0);
  await stack.sleep(300);
  await takeFailures();
  const latencies: number[] = [];
  let failedOnly = 0;
  for (const [k, listen] of listens.entries())
    for (const { t0, cursor } of accepted) {
      const first = locals[k].byCursor.get(cursor)?.[0];
      if (first !== undefined) latencies.push(first - t0);
      else if (failed.has(`${listen.sessionId} ${cursor}`)) failedOnly++;
    }
  const expected = accepted.length * listens.length;
  return {
    sessions: listens.length,
    writesPerSec: settings.relayWritesPerSec,
    writesScheduled: writes.t0.length,
    writesAccepted: accepted.length,
    expected,
    received: latencies.length,
    failed: failedOnly,
    missing: expected - latencies.length - failedOnly,
    duplicates: locals.reduce((n, local) => n + [...local.byCursor.values()].filter((times) => times.length > 1).length, 0),
    badSignatures: locals.reduce((n, local) => n + local.state.badSignatures, 0),
    perSec: round((latencies.length * 1000) / settings.phaseMs),
    latencyMs: percentiles(latencies, [50, 99]),
    drainMs,
    drained,
  };
}

/** Waits for the noisy list's deliveries to be in, then balances its ledger. */
async function drainNoisyList(run: Run, poller: OutcomesPoller, writes: Writes): Promise<NoisyListResult> {
  const { lists, receipts } = run;
  const records: Recorded[] = [];
  const accepted = writes.status.filter((status) => status === 202).length;
  const drained = await drain(receipts, poller, records, () => receipts.noisy.t.length, accepted * settings.noisyDeliveriesPerWrite);
  const figures = computeStep({
    writes,
    receipts: receipts.noisy,
    recorded: records,
    recipients: new Map([
      [lists.noisy.listId, lists.noisy.webhookIds.flatMap((webhookId) => TOPICS.map((topic) => ({ webhookId, topic })))],
    ]),
    steadyFrom: writes.t0[0] ?? 0,
    steadyMs: settings.phaseMs,
    recordsPrunedUnseen: await poller.prunedUnseen(),
  });
  await poller.stop();
  return { writes, figures, drain: drained };
}

/** What each flood's requests are, as the report names them. */
const FLOOD_REQUESTS: Record<FloodKind, string> = {
  429: 'GET /v3/webhooks with one valid token, far over its limit',
  401: 'GET /v3/webhooks with a token that does not exist, fresh for each request',
  413:
    `POST /v3/webhooks with a valid token (its own limit), declaring a body of ${byteSize(settings.flood.declaredBytes)} and sending` +
    ` its first ${byteSize(settings.flood.firstChunkBytes)}, a connection each`,
};

/** The phase beside flood `kind`: the client floods for the phase from its start, closed loop. */
async function floodPhase(run: Run, client: FloodClient, kind: FloodKind, alone: NoisyNeighbourPhase) {
  const { phase, beside } = await runPhase(run, `flood-${kind}`, async (startAt) => {
    const throttling = client.throttlingSince();
    const answers = await client.rpc(
      'flood',
      {
        kind,
        host: client.host,
        port: client.port,
        token: kind === '401' ? '' : run.lists.floodTokens[kind],
        connections: settings.flood.connections,
        perSec: settings.flood.perSec,
        startAt,
        durationMs: settings.phaseMs,
        timeoutMs: CONFIG.writeTimeoutMs,
        declaredBytes: settings.flood.declaredBytes,
        firstChunkBytes: settings.flood.firstChunkBytes,
      },
      rpcTimeoutMs,
    );
    return { answers, throttling: throttling() };
  });
  const figures = floodFigures(run.target, kind, phase, alone, beside.answers, beside.throttling, client);
  logFlood(figures);
  return { phase, figures };
}

/**
 * A flood's figures: its answers, its client, and its cost to the service per refused request:
 * the service's CPU over the flood's span, less the `alone` phase's over as long a span.
 */
function floodFigures(
  target: ServiceTarget,
  kind: FloodKind,
  phase: NoisyNeighbourPhase,
  alone: NoisyNeighbourPhase,
  answers: FloodAnswers,
  throttling: Throttling | null,
  client: FloodClient,
): FloodFigures {
  const flooded = phase.steadyCpu!;
  const quiet = alone.steadyCpu!;
  const refused = Object.entries(answers.statuses).reduce((n, [status, count]) => n + (Number(status) >= 400 ? count : 0), 0);
  const asLong = (cpuMs: number) => round((cpuMs * flooded.wallMs) / quiet.wallMs);
  const perRefused = (cpuMs: number, aloneMs: number) => (refused ? round(((cpuMs - aloneMs) * 1000) / refused) : null);
  const serviceMs = serviceCpuMs(target, flooded);
  const serviceAloneMs = asLong(serviceCpuMs(target, quiet));
  const apiMs = flooded.groups.api?.cpuMs ?? 0;
  const apiAloneMs = asLong(quiet.groups.api?.cpuMs ?? 0);
  const perSec = round((answers.requests * 1000) / answers.elapsedMs);
  const { criteria } = CONFIG;
  return {
    kind,
    request: FLOOD_REQUESTS[kind],
    connections: settings.flood.connections,
    pacedPerSec: settings.flood.perSec,
    requests: answers.requests,
    perSec,
    statuses: answers.statuses,
    refused,
    latencyMs: answers.latencyMs,
    connectionsOpened: answers.connectionsOpened,
    client: { ...client.setup, cpuMs: answers.clientCpuMs, cpuUsPerRequest: answers.clientCpuUsPerRequest, throttling },
    serviceCpuMs: serviceMs,
    serviceAloneCpuMs: serviceAloneMs,
    serviceCpuUsPerRefused: perRefused(serviceMs, serviceAloneMs),
    apiCpuMs: apiMs,
    apiAloneCpuMs: apiAloneMs,
    apiCpuUsPerRefused: perRefused(apiMs, apiAloneMs),
    quietAcceptMs: phase.quietAcceptMs,
    quietE2eMs: phase.quietE2eMs,
    met: {
      e2eP99: (phase.quietE2eMs.p99 ?? Infinity) < criteria.e2eP99Ms,
      acceptP99: (phase.quietAcceptMs.p99 ?? Infinity) < criteria.acceptP99Ms,
      perSec: perSec >= settings.flood.minPerSec,
    },
  };
}

function logFlood(f: FloodFigures): void {
  const cap = f.client.cpuCap ? `capped at ${f.client.cpuCap.cores} cores` : `UNCAPPED (${f.client.uncappedWhy})`;
  log(
    `noisy-neighbour flood-${f.kind}: ${f.requests} requests (${f.perSec}/s), ${JSON.stringify(f.statuses)}, ` +
      `${f.connectionsOpened} connections; client ${cap}, ${f.client.cpuMs} CPU-ms, ${f.client.cpuUsPerRequest} CPU-µs a request` +
      `${f.client.throttling ? `, throttled ${f.client.throttling.throttledPeriods}/${f.client.throttling.periods} periods` : ''}; ` +
      `service ${f.serviceCpuMs} CPU-ms (alone ${f.serviceAloneCpuMs}), ${f.serviceCpuUsPerRefused} CPU-µs a refused request, ` +
      `the API process ${f.apiCpuUsPerRefused}; quiet accept p99 ${f.quietAcceptMs.p99} ms, e2e p99 ${f.quietE2eMs.p99} ms`,
  );
}

/**
 * The result JSON's figures of the run, from its phases (alone, beside the noisy list, beside
 * each flood, beside the relays), the noisy list's, the floods' and the relay sessions'.
 */
function summarise(
  run: Run,
  phases: NoisyNeighbourPhase[],
  noisyList: NoisyListResult,
  floods: FloodFigures[],
  relay: BusyRelays,
  cpu: Measured,
): NoisyNeighbourSummary {
  const { quietWritesPerSec, quietReadsPerSec, noisyDeliveriesPerWrite, noisyEveryMs, phaseMs } = settings;
  const e2e = (name: NoisyNeighbourPhase['name']) => phases.find((phase) => phase.name === name)!.quietE2eMs;
  const [alone, beside, besideRelays] = [e2e('alone'), e2e('noisy'), e2e('relay')];
  const { ledger: noisyLedger } = noisyList.figures;
  const noisyReceipts = run.receipts.noisy;
  const spans = writeSpans(noisyList.writes, noisyReceipts);
  const firstDue = noisyList.writes.t0[0];
  const lastReceipt = noisyReceipts.t.length ? noisyReceipts.t.reduce((a, b) => Math.max(a, b)) : null;
  return {
    quietWritesPerSec,
    quietReadsPerSec,
    noisyDeliveriesPerWrite,
    noisyEveryMs,
    noisyWebhooks: run.lists.noisyWebhooks,
    noisyAccounts: run.lists.noisy.accounts.length,
    phaseMs,
    setUpMs: run.lists.setUpMs,
    quietAloneE2eP50Ms: alone.p50,
    quietAloneE2eP99Ms: alone.p99,
    quietAloneE2eMaxMs: alone.max,
    quietE2eP50Ms: beside.p50,
    quietE2eP99Ms: beside.p99,
    quietE2eMaxMs: beside.max,
    noisyWritesAccepted: noisyList.figures.writes.accepted,
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
    noisyDrainMs: noisyList.drain.drainMs,
    noisyDrained: noisyList.drain.drained,
    floods,
    floodTargets: { ...CONFIG.criteria, minPerSec: settings.flood.minPerSec },
    apiCpuShares: run.target.apiCpuShares,
    quietRelayE2eP50Ms: besideRelays.p50,
    quietRelayE2eP99Ms: besideRelays.p99,
    quietRelayE2eMaxMs: besideRelays.max,
    relay,
    phases,
    cpu,
  };
}

function logSummary(summary: NoisyNeighbourSummary): void {
  const { noisyLedger, relay } = summary;
  const floods = (summary.floods ?? []).map((f) => `${f.kind} ${f.perSec}/s, quiet e2e p99 ${f.quietE2eMs.p99} ms`).join(', ');
  log(
    `noisy-neighbour: quiet e2e p99 alone ${summary.quietAloneE2eP99Ms} ms, beside the noisy list ${summary.quietE2eP99Ms} ms, ` +
      `beside the relays ${summary.quietRelayE2eP99Ms} ms; floods: ${floods}; ` +
      `noisy: ${summary.noisyWritesAccepted} writes, ` +
      `${noisyLedger.sent} deliveries = ${noisyLedger.delivered} delivered + ${noisyLedger.failedRecorded} failed + ` +
      `${noisyLedger.missing} missing (${noisyLedger.duplicates} dup), ${summary.noisyDeliveriesPerSec} deliveries/s, ` +
      `a write's first to last receipt p50/p99 ${summary.noisyWriteSpanMs.p50}/${summary.noisyWriteSpanMs.p99} ms; ` +
      `relays: ${relay?.writesAccepted} writes, ${relay?.expected} deliveries = ${relay?.received} received + ` +
      `${relay?.failed} failed + ${relay?.missing} missing (${relay?.duplicates} dup), p50/p99 ` +
      `${relay?.latencyMs.p50}/${relay?.latencyMs.p99} ms`,
  );
  for (const m of noisyLedger.missingSample) log(`  missing ${m.key}: ${m.why}`);
  for (const d of noisyLedger.duplicateSample) log(`  duplicate ${d.key}: received ${d.received}, recorded ${d.recorded}`);
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
