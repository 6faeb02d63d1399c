// "Brokers beside the route": each broker scenario (scenarios/brokers.ts) against the route's
// `split-fanout10` of the same run: the knee, the end-to-end p99 at half the knee, and the CPU per
// delivery at the knee with the broker's own processes counted.
import { type Report, type ScenarioResult, type StepResult } from '../lib/types';
import { kneeStep, noteRow, num, ratio, row, tableSection } from './format';

const ROUTE = 'split-fanout10';

const COLUMNS = [
  'scenario',
  'writes through',
  'knee (writes/s offered)',
  "knee vs the route's",
  'end-to-end p99 at half the knee, ms (step)',
  'CPU-ms per delivery at the knee, all processes',
  "of which the broker's",
];

/** The highest passing step at or below half the knee's rate. */
function halfKneeStep(s: ScenarioResult): StepResult | null {
  if (!s.knee || !s.steps) return null;
  const half = s.knee / 2;
  return s.steps.filter((st) => st.pass && st.rate <= half).at(-1) ?? null;
}

function brokerRow(s: ScenarioResult, route: ScenarioResult | undefined): string {
  if (s.error) return noteRow(COLUMNS, s.id, `error: ${s.error}`);
  const knee = kneeStep(s);
  const half = halfKneeStep(s);
  const brokerCpu = knee?.cpu.groups.broker?.cpuMs;
  return row(
    s.id,
    s.door ?? 'the route',
    knee ? knee.rate : `none: ${s.steps?.[0]?.failures.join('; ') ?? 'no step'}`,
    s.door ? ratio(s.knee, route?.knee) : '1×',
    half ? `${num(half.e2eMs.p99)} (${half.rate}/s)` : '–',
    knee ? num(knee.cpuMsPerDelivery.all, 2) : '–',
    knee && brokerCpu !== undefined ? num(brokerCpu / Math.max(1, knee.deliveriesTotal), 3) : '–',
  );
}

export function brokersTable(report: Report): string[] {
  const brokers = report.scenarios.filter((s) => s.kind === 'fanout' && s.door !== undefined);
  if (brokers.length === 0) return [];
  const route = report.scenarios.find((s) => s.id === ROUTE);
  return tableSection(
    'Brokers beside the route (fan-out 10)',
    COLUMNS,
    [...(route ? [route] : []), ...brokers].map((s) => brokerRow(s, route)),
  );
}
