// "Noisy neighbour": a quiet account's latencies alone, beside a noisy list, beside an API flood,
// beside another account's busy relay sessions.
import { type BusyRelays, type NoisyNeighbourPhase, type NoisyNeighbourSummary, type ScenarioResult } from '../lib/types';
import { logSummary, num, p50p99, row } from './format';

const PHASE_TITLES = {
  alone: 'alone',
  noisy: 'beside the noisy list',
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

export function noisyNeighbourSection(s: ScenarioResult): string[] {
  const n = s.noisyNeighbour!;
  const l = n.noisyLedger;
  const relays = n.relay
    ? `; then beside another account's ${n.relay.sessions} relay sessions, its list written ${n.relay.writesPerSec} times a second` +
      ' (a delivery of each write to each session)'
    : '';
  return [
    `A quiet account's one-delivery writes at ${n.quietWritesPerSec}/s (and its GET /v3/webhooks at ${n.quietReadsPerSec}/s)` +
      ` for ${num(n.phaseMs / 1000)} s in each phase: alone; beside a list of ${n.noisyWebhooks} webhooks (${n.noisyAccounts} accounts)` +
      ` on every topic, written every ${num(n.noisyEveryMs / 1000)} s (${n.noisyDeliveriesPerWrite} deliveries a write);` +
      ` then, once those are all in, beside another account flooding the public API on ${n.floodConnections} connections` +
      ` (GET /v3/webhooks and pings in turn)${relays}. Latencies from each request's due time; a delivery's to its first receipt.`,
    '',
    ...phaseTable(n),
    '',
    `- Noisy list: ${n.noisyWritesAccepted} writes accepted, ${l.sent} deliveries = ${l.delivered} delivered + ${l.failedRecorded} failed` +
      ` + ${l.missing} missing; ${l.duplicates} received twice (${l.balanced ? 'balanced' : 'NOT balanced'}).` +
      ` A write's deliveries, first to last receipt p50 / p99: ${p50p99(n.noisyWriteSpanMs)} ms; due time to last receipt` +
      ` ${p50p99(n.noisyWriteToLastMs)} ms; ${num(n.noisyDeliveriesPerSec)} deliveries/s from the first write to the last receipt` +
      ` (drained ${num(n.noisyDrainMs / 1000)} s after the phase${n.noisyDrained ? '' : ', **not all in**'}).`,
    `- Flood: ${n.flood.requests} requests (${num(n.flood.perSec)}/s), answers ` +
      `${Object.entries(n.flood.statuses)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', ')}; latency p50 / p99 ${p50p99(n.flood.latencyMs)} ms.`,
    ...(n.relay ? [relayLine(n.relay)] : []),
    `- Set-up ${num(n.setUpMs / 1000)} s. Warnings / errors in the logs: ${logSummary(s.logs)}.`,
    '',
  ];
}
