// "Recovery": a recovery of many failed deliveries beside live writes to the same webhook.
import { type ScenarioResult } from '../lib/types';
import { logSummary, num } from './format';

export function recoverySection(s: ScenarioResult): string[] {
  const r = s.recovery!;
  const duration = r.durationMs === null ? null : r.durationMs / 1000;
  const span = r.receivedSpanMs === null ? null : r.receivedSpanMs / 1000;
  return [
    `${r.deliveries} failed deliveries recovered at RECOVERY_RATE_PER_SECOND=${r.rate},` +
      ` beside ${r.liveWritesPerSec} live writes/s to the same webhook.`,
    '',
    `- Recovery: ${r.status}${r.stoppedReason ? ` (${r.stoppedReason})` : ''} in **${num(duration)} s**` +
      ` (the rate allows ${num(r.expectedMs / 1000)} s; from its createdAt to its finishedAt);` +
      ` ${r.sent} sent, ${r.delivered} delivered, ${r.failed} failed of ${r.total}; ${r.redeliveriesLogged} redeliveries logged.`,
    `- Received: ${r.received} (${r.distinctReceived} distinct, ${r.duplicates} twice) over ${num(span)} s;` +
      ` at most ${r.mostInOneSecond} in any one second.`,
    `- Live deliveries meanwhile: ${r.live.accepted} writes accepted, ${r.live.received} delivered` +
      ` (${r.live.missing} missing, ${r.live.duplicates} twice), write-to-receipt p50 / p99` +
      ` ${num(r.live.latencyMs.p50)} / ${num(r.live.latencyMs.p99)} ms.`,
    `- CPU-ms per send, service: ${num(r.cpuMsPerSend, 2)}; other work on the machine: ${num(r.quiet.otherCores, 2)} cores busy` +
      ` before, ${num(r.cpu.unattributedMs / 1000)} CPU s unattributed over ${num(r.cpu.wallMs / 1000)} s.` +
      ` Warnings / errors in the logs: ${logSummary(s.logs)}.`,
    '',
  ];
}
