// "Relay latency": each write's time to a direct webhook and, forwarded by `svc-webhooks listen`,
// to a local server, and what the relay adds at p50.
import { type Report, type ScenarioResult } from '../lib/types';
import { noteRow, num, p50p99, row, tableSection } from './format';

const COLUMNS = ['scenario', 'writes', 'direct p50 / p99 ms', 'relay p50 / p99 ms', 'added at p50 ms', 'missing, direct / relay'];

function relayRow(s: ScenarioResult): string {
  if (s.error || !s.relay) return noteRow(COLUMNS, s.id, `error: ${String(s.error)}`);
  const r = s.relay;
  return row(
    s.id,
    `${r.accepted}/${r.writes} at ${r.rate}/s`,
    p50p99(r.directMs),
    p50p99(r.relayMs),
    num(r.addedP50Ms),
    `${r.directMissing} / ${r.relayMissing}`,
  );
}

export function relayTable(report: Report): string[] {
  const relays = report.scenarios.filter((s) => s.kind === 'relay');
  if (!relays.length) return [];
  return tableSection('Relay latency', COLUMNS, relays.map(relayRow));
}
