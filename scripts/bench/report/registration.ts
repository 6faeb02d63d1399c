// "Registration": webhooks registered open-loop, each answered with its ping.
import { type Report, type ScenarioResult } from '../lib/types';
import { noteRow, num, p50p99p999, row, tableSection } from './format';

const COLUMNS = [
  'scenario',
  'created',
  'open-loop rate',
  'p50 / p99 / p99.9 ms',
  'answers',
  'pings received / verified',
  'CPU-ms per registration, service / all',
  'token check + rate limit p50 / p99 ms',
  'a PostgreSQL round trip p50 / p99 ms',
];

function registrationRow(s: ScenarioResult): string {
  if (s.error || !s.registration) return noteRow(COLUMNS, s.id, `error: ${String(s.error)}`);
  const r = s.registration;
  return row(
    s.id,
    `${r.created}/${r.count} (${r.accounts} accounts × ${r.count / r.accounts})`,
    `${r.rate}/s`,
    p50p99p999(r.latencyMs),
    Object.entries(r.statuses)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', '),
    `${r.pings.received} / ${r.pings.verified}`,
    `${num(r.cpuMsPerRegistration.service)} / ${num(r.cpuMsPerRegistration.all)}`,
    `${num(r.authP50Ms, 3)} / ${num(r.authP99Ms, 3)}`,
    r.pgRoundTripMs ? `${num(r.pgRoundTripMs.p50, 3)} / ${num(r.pgRoundTripMs.p99, 3)}` : '',
  );
}

export function registrationTable(report: Report): string[] {
  const registrations = report.scenarios.filter((s) => s.kind === 'registration');
  if (!registrations.length) return [];
  return tableSection('Registration', COLUMNS, registrations.map(registrationRow));
}
