// "Noisy neighbour": a quiet account's latencies alone, beside a noisy list, beside an API flood.
import { type NoisyNeighbourSummary, type ScenarioResult } from '../lib/types';
import { logSummary, num, p50p99, row } from './format';

const PHASE_TITLES = { alone: 'alone', noisy: 'beside the noisy list', flood: 'beside the API flood' };

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
      'CPU s: service, flood; cores busy outside the bench before',
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
        `${num(phase.serviceCpuMs / 1000)}, ${num((phase.cpu.groups.flood?.cpuMs ?? 0) / 1000)}; ${num(phase.otherWork.otherCores, 2)}`,
      ),
    );
  }
  return out;
}

export function noisyNeighbourSection(s: ScenarioResult): string[] {
  const n = s.noisyNeighbour!;
  const l = n.noisyLedger;
  return [
    `A quiet account's one-delivery writes at ${n.quietWritesPerSec}/s (and its GET /v3/webhooks at ${n.quietReadsPerSec}/s)` +
      ` for ${num(n.phaseMs / 1000)} s in each phase: alone; beside a list of ${n.noisyWebhooks} webhooks (${n.noisyAccounts} accounts)` +
      ` on every topic, written every ${num(n.noisyEveryMs / 1000)} s (${n.noisyDeliveriesPerWrite} deliveries a write);` +
      ` then, once those are all in, beside another account flooding the public API on ${n.floodConnections} connections` +
      " (GET /v3/webhooks and pings in turn). Latencies from each request's due time; a delivery's to its first receipt.",
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
    `- Set-up ${num(n.setUpMs / 1000)} s. Warnings / errors in the logs: ${logSummary(s.logs)}.`,
    '',
  ];
}
