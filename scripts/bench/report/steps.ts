// "Steps": every step of every scenario, with its ledger, its CPU and the machine's other work.
import { type Report, type ScenarioResult, type StepResult } from '../lib/types';
import { num, p50p99, p50p99p999, row, tableSection } from './format';

function stepRow(s: ScenarioResult, st: StepResult): string {
  const l = st.ledger;
  const skipped = l.skipped ? ` + ${l.skipped} skipped` : '';
  const unbalanced = l.balanced ? '' : ' **unbalanced**';
  const result = s.kind === 'hot' ? '(hot)' : st.pass ? 'pass' : `fail: ${st.failures.join('; ')}`;
  const earlier = st.discardedAttempts?.length
    ? ` (repeated; earlier: ${st.discardedAttempts.map((d) => d.failures.join(', ')).join(' / ')})`
    : '';
  return row(
    s.id,
    st.rate,
    num(st.acceptedPerSec),
    num(st.deliveriesPerSec),
    p50p99(st.acceptMs),
    p50p99p999(st.e2eMs),
    `${l.sent} = ${l.delivered} + ${l.failedRecorded}${skipped} + ${l.missing} (${l.duplicates})${unbalanced}`,
    num(st.drainMs / 1000),
    st.temporalLog ? `${st.temporalLog.warnings} / ${st.temporalLog.errors}` : '–',
    `${num(st.cpuMsPerDelivery.all, 2)} (${num(st.cpuMsPerDelivery.allNetOfIdle, 2)})`,
    `${num(st.cpu.machineBusyMs / 1000)} / ${num(st.cpu.unattributedMs / 1000)}` +
      ` (${num(st.quiet?.otherCores, 2)}; peak ${num(st.outsideLoad?.maxCores, 2)})`,
    `${result}${earlier}`,
  );
}

export function stepsTable(report: Report): string[] {
  return tableSection(
    'Steps',
    [
      'scenario',
      'offered writes/s',
      'accepted/s',
      'deliveries/s',
      'accept p50 / p99 ms',
      'end-to-end p50 / p99 / p99.9 ms',
      'ledger: sent = delivered + failed (+ skipped while paused) + missing (dup)',
      'drain s',
      'Temporal server warn / error lines',
      'CPU-ms/delivery, all (net of idle)',
      'machine busy / unattributed CPU s (cores busy outside the bench before the step; peak over 1 s during it)',
      'result',
    ],
    report.scenarios.flatMap((s) => (s.steps ?? []).map((st) => stepRow(s, st))),
  );
}
