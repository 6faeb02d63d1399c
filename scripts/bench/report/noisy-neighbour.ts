// "Noisy neighbour": a quiet account's latencies alone, beside a noisy list, beside each flood of
// the public API, beside another account's busy relay sessions; and what refusing a flood costs.
import {
  type BusyRelays,
  type FloodFigures,
  type NoisyNeighbourPhase,
  type NoisyNeighbourSummary,
  type ScenarioResult,
} from '../lib/types';
import { logSummary, num, p50p99, row, table } from './format';

const PHASE_TITLES: Record<NoisyNeighbourPhase['name'], string> = {
  alone: 'alone',
  noisy: 'beside the noisy list',
  'flood-429': 'beside the 429 flood',
  'flood-401': 'beside the 401 flood',
  'flood-413': 'beside the 413 flood',
  flood: 'beside the API flood',
  relay: 'beside the busy relay sessions',
};

/** The quiet account's figures, a row per phase. */
function phaseTable(n: NoisyNeighbourSummary): string[] {
  const out = [
    row(
      'quiet account',
      'writes accepted',
      'end-to-end p50 / p99 / max ms',
      'accept p50 / p99 ms',
      'ledger: sent = delivered + failed + missing (dup)',
      'GET /v3/webhooks p50 / p99 ms',
      'CPU s: service, flood or `listen`; cores busy outside the bench before',
    ),
    '|---|---|---|---|---|---|---|',
  ];
  for (const phase of n.phases) {
    const l = phase.quietLedger;
    out.push(
      row(
        PHASE_TITLES[phase.name],
        `${phase.quietWrites.accepted}/${phase.quietWrites.scheduled}`,
        `${num(phase.quietE2eMs.p50)} / **${num(phase.quietE2eMs.p99)}** / ${num(phase.quietE2eMs.max)}`,
        p50p99(phase.quietAcceptMs),
        `${l.sent} = ${l.delivered} + ${l.failedRecorded} + ${l.missing} (${l.duplicates})${l.balanced ? '' : ' **unbalanced**'}`,
        p50p99(phase.quietReadMs),
        `${num(phase.serviceCpuMs / 1000)}, ${num(clientCpuMs(phase) / 1000)}; ${num(phase.otherWork.otherCores, 2)}`,
      ),
    );
  }
  return out;
}

/** The CPU of the client the phase adds beside the quiet account: the flooding process, or the `svc-webhooks listen` processes. */
function clientCpuMs(phase: NoisyNeighbourPhase): number {
  return (phase.cpu.groups.flood?.cpuMs ?? 0) + (phase.cpu.groups.listen?.cpuMs ?? 0);
}

/** The relay phase's sessions: what they were handed and what became of it. */
function relayLine(r: BusyRelays): string {
  return (
    `- Relay sessions: ${r.sessions}, each a \`svc-webhooks listen\` forwarding to a local server of the bench; their list's` +
    ` ${r.writesAccepted}/${r.writesScheduled} writes accepted at ${r.writesPerSec}/s, ${r.expected} relayed deliveries =` +
    ` ${r.received} received + ${r.failed} failed + ${r.missing} missing; ${r.duplicates} received twice, ${r.badSignatures}` +
    ` bad signatures; ${num(r.perSec)} relayed deliveries/s over the phase, due time to receipt p50 / p99 ${p50p99(r.latencyMs)} ms` +
    ` (drained ${num(r.drainMs / 1000)} s after the quiet account's${r.drained ? '' : ', **not all in**'}).`
  );
}

/** The answers by status (or, unanswered, by cause). */
const answers = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');

const mark = (met: boolean) => (met ? 'yes' : '**no**');

/** The floods, a row each: the flood, its client, its cost to the service, and the quiet account beside it against the targets. */
function floodTable(floods: FloodFigures[]): string[] {
  return table<FloodFigures>(
    [
      ['flood', (f) => f.kind],
      ['requests (/s)', (f) => `${f.requests} (**${num(f.perSec, 0)}**)`],
      ['answers', (f) => answers(f.statuses)],
      ['latency p50 / p99 ms', (f) => p50p99(f.latencyMs)],
      ['connections opened', (f) => f.connectionsOpened],
      [
        'client: CPU s, µs a request; throttled',
        (f) =>
          `${num(f.client.cpuMs / 1000, 2)}, ${num(f.client.cpuUsPerRequest)}; ` +
          (f.client.throttling ? `${f.client.throttling.throttledPeriods} of ${f.client.throttling.periods} periods` : '**uncapped**'),
      ],
      ['service CPU s: flood / alone', (f) => `${num(f.serviceCpuMs / 1000, 2)} / ${num(f.serviceAloneCpuMs / 1000, 2)}`],
      [
        'service CPU-µs a refused request (API process)',
        (f) => `**${num(f.serviceCpuUsPerRefused, 0)}** (${num(f.apiCpuUsPerRefused, 0)})`,
      ],
      ['quiet accept p50 / p99 ms', (f) => p50p99(f.quietAcceptMs)],
      ['quiet end-to-end p50 / p99 / max ms', (f) => `${num(f.quietE2eMs.p50)} / **${num(f.quietE2eMs.p99)}** / ${num(f.quietE2eMs.max)}`],
      ['targets met: end-to-end, accept, rate', (f) => `${mark(f.met.e2eP99)}, ${mark(f.met.acceptP99)}, ${mark(f.met.perSec)}`],
    ],
    floods,
  );
}

/** How the floods were sent, and how each figure of their table is made. */
function floodLines(n: NoisyNeighbourSummary, floods: FloodFigures[]): string[] {
  const { client } = floods[0];
  const cap = client.cpuCap
    ? `its CPU capped at ${client.cpuCap.cores} cores (a cpu cgroup's quota)`
    : `**uncapped** (${client.uncappedWhy}): it shares the cores with the service`;
  const where = client.netns
    ? `in a network namespace of its own, at ${client.netns.clientAddress}, reaching the service at ${client.netns.serviceAddress} over a veth pair`
    : 'on the loopback';
  const targets = n.floodTargets!;
  return [
    `- The flooding client stands for one on another machine: ${cap}, ${where}; raw sockets, keep-alive, ${floods[0].connections}` +
      ` connections, ${
        floods[0].pacedPerSec
          ? `paced to ${floods[0].pacedPerSec} requests a second in all (BENCH_FLOOD_RATE), each connection sending its share once its answer is in`
          : "closed loop (the next request sent once the answer's end is seen)"
      }.`,
    ...floods.map((f) => `- ${f.kind}: ${f.request}.`),
    "- Service CPU per refused request: (the service's CPU over the flood, less the `alone` phase's over as long) / the answers of" +
      ' status 400 or more; the service is the API, the workers, Temporal and PostgreSQL; in brackets the API process alone.' +
      ` Targets beside a flood: the quiet account's end-to-end p99 < ${targets.e2eP99Ms} ms and accept p99 < ${targets.acceptP99Ms} ms,` +
      ` the flood ≥ ${targets.minPerSec} requests/s.`,
    ...(n.apiCpuShares
      ? [
          `- The API process in a cpu cgroup of its own, cpu.shares ${n.apiCpuShares}; the workers at the default 1024 (BENCH_API_CPU_SHARES).`,
        ]
      : []),
  ];
}

export function noisyNeighbourSection(s: ScenarioResult): string[] {
  const n = s.noisyNeighbour!;
  const l = n.noisyLedger;
  const relays = n.relay
    ? `; then beside another account's ${n.relay.sessions} relay sessions, its list written ${n.relay.writesPerSec} times a second` +
      ' (a delivery of each write to each session)'
    : '';
  const floods = n.floods ?? [];
  const flooding = floods.length
    ? `then, once those are all in, beside each of ${floods.length} floods of the public API by other accounts (${floods.map((f) => f.kind).join(', ')})`
    : `then, once those are all in, beside another account flooding the public API on ${n.floodConnections} connections (GET /v3/webhooks and pings in turn)`;
  return [
    `A quiet account's one-delivery writes at ${n.quietWritesPerSec}/s (and its GET /v3/webhooks at ${n.quietReadsPerSec}/s)` +
      ` for ${num(n.phaseMs / 1000)} s in each phase: alone; beside a list of ${n.noisyWebhooks} webhooks (${n.noisyAccounts} accounts)` +
      ` on every topic, written every ${num(n.noisyEveryMs / 1000)} s (${n.noisyDeliveriesPerWrite} deliveries a write);` +
      ` ${flooding}${relays}. Latencies from each request's due time; a delivery's to its first receipt.`,
    '',
    ...phaseTable(n),
    '',
    ...(floods.length ? ['Floods:', '', ...floodTable(floods), '', ...floodLines(n, floods)] : []),
    `- Noisy list: ${n.noisyWritesAccepted} writes accepted, ${l.sent} deliveries = ${l.delivered} delivered + ${l.failedRecorded} failed` +
      ` + ${l.missing} missing; ${l.duplicates} received twice (${l.balanced ? 'balanced' : 'NOT balanced'}).` +
      ` A write's deliveries, first to last receipt p50 / p99: ${p50p99(n.noisyWriteSpanMs)} ms; due time to last receipt` +
      ` ${p50p99(n.noisyWriteToLastMs)} ms; ${num(n.noisyDeliveriesPerSec)} deliveries/s from the first write to the last receipt` +
      ` (drained ${num(n.noisyDrainMs / 1000)} s after the phase${n.noisyDrained ? '' : ', **not all in**'}).`,
    ...(n.flood
      ? [
          `- Flood: ${n.flood.requests} requests (${num(n.flood.perSec)}/s), answers ${answers(n.flood.statuses)};` +
            ` latency p50 / p99 ${p50p99(n.flood.latencyMs)} ms.`,
        ]
      : []),
    ...(n.relay ? [relayLine(n.relay)] : []),
    `- Set-up ${num(n.setUpMs / 1000)} s. Warnings / errors in the logs: ${logSummary(s.logs)}.`,
    '',
  ];
}
