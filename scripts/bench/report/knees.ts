// "At the knee": each fan-out scenario's figures at its knee, and each registration scenario's.
import { type Report, type ScenarioResult, type StepResult } from '../lib/types';
import { fanoutScenarios, kneeStep, noteRow, num, p50p99, p50p99p999, row, tableSection } from './format';

const COLUMNS = [
  'scenario',
  'knee (writes/s offered)',
  'accepted writes/s',
  'deliveries/s',
  'accept p50 / p99 ms',
  'end-to-end p50 / p99 / p99.9 ms',
  'CPU-ms per delivery, service / all processes',
  'CPU ceiling deliveries/s',
  'worker peak RSS MiB',
];

/** The figures of a step, after its scenario and rate. */
const figures = (st: StepResult) => [
  num(st.acceptedPerSec),
  num(st.deliveriesPerSec),
  p50p99(st.acceptMs),
  p50p99p999(st.e2eMs),
  `${num(st.cpuMsPerDelivery.service, 2)} / ${num(st.cpuMsPerDelivery.all, 2)}`,
  num(st.cpuCeilingPerSec, 0),
  num(st.workerPeakRssMiB, 0),
];

/** A fan-out scenario's row: the figures of its knee, else of its first step, marked as failed. */
function fanoutRow(s: ScenarioResult, rates: number[]): string {
  if (s.error) return noteRow(COLUMNS, s.id, `error: ${s.error}`);
  const k = kneeStep(s);
  if (!k) {
    const first = s.steps![0];
    return first
      ? row(s.id, `none: ${first.rate}/s failed (${first.failures.join('; ')})`, ...figures(first))
      : noteRow(COLUMNS, s.id, 'no step');
  }
  const top =
    s.steps!.length && s.steps!.every((st) => st.pass) && s.knee === rates[rates.length - 1] ? ' (highest step: limit not reached)' : '';
  return row(s.id, `${k.rate}${top}`, ...figures(k));
}

/** A registration scenario's row, in the columns of the fan-outs that fit it. */
function registrationRow(s: ScenarioResult): string[] {
  if (s.error || !s.registration) return [];
  const r = s.registration;
  return [
    `| ${s.id} | ${r.created}/${r.count} at ${r.rate}/s | | | registration p50 / p99: ${p50p99(r.latencyMs)} | | ` +
      `${num(r.cpuMsPerRegistration.service, 1)} / ${num(r.cpuMsPerRegistration.all, 1)} per registration | | ` +
      `${num(r.workerPeakRssMiB, 0)} |`,
  ];
}

export function kneeTable(report: Report): string[] {
  return tableSection('At the knee', COLUMNS, [
    ...fanoutScenarios(report.scenarios).map((s) => fanoutRow(s, report.config.rates)),
    ...report.scenarios.filter((s) => s.kind === 'registration').flatMap(registrationRow),
  ]);
}
