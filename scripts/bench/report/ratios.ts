// The service's ratios to the two yardsticks of the same run: the plain-Node baseline of the
// same fan-out, and the bare Temporal fan-outs (the floor), each scenario at its own knee.
import { type Report, type ScenarioResult, type StepResult } from '../lib/types';
import { fanoutScenarios, kneeStep, num, ratio, row, tableHead } from './format';

/** A step's ratios to the baseline: its latencies to the baseline step `latencies`, its throughput and CPU to `cpu`. */
function versusBaseline(st: StepResult, { latencies, cpu }: { latencies: StepResult; cpu: StepResult }): string[] {
  return [
    `${ratio(st.deliveriesPerSec, cpu.deliveriesPerSec)} (${num(st.deliveriesPerSec)} vs ${num(cpu.deliveriesPerSec)})`,
    ratio(st.acceptMs.p99, latencies.acceptMs.p99),
    ratio(st.e2eMs.p50, latencies.e2eMs.p50),
    ratio(st.e2eMs.p99, latencies.e2eMs.p99),
    ratio(st.cpuMsPerDelivery.all, cpu.cpuMsPerDelivery.all),
    `${ratio(st.cpuCeilingPerSec, cpu.cpuCeilingPerSec)} (${num(st.cpuCeilingPerSec, 0)} vs ${num(cpu.cpuCeilingPerSec, 0)})`,
  ];
}

/** The knee of each fan-out's baseline, by fan-out. */
function baselineKnees(fanouts: ScenarioResult[]): Map<number | undefined, StepResult | null> {
  return new Map(fanouts.filter((s) => s.mode === 'baseline').map((s) => [s.fanout, kneeStep(s)]));
}

/** A scenario's row against the baseline of its fan-out: at both knees, else both at its first step's rate, marked. */
function baselineRow(s: ScenarioResult, fanouts: ScenarioResult[], baselines: Map<number | undefined, StepResult | null>): string {
  const k = kneeStep(s);
  const b = baselines.get(s.fanout);
  if (k && b) return row(`${s.id} vs baseline-fanout${s.fanout}`, ...versusBaseline(k, { latencies: b, cpu: b }));
  const f = s.steps?.[0];
  const bf = fanouts.find((x) => x.mode === 'baseline' && x.fanout === s.fanout)?.steps?.find((st) => st.rate === f?.rate);
  if (!f || !bf) return `| ${s.id} | ${!k ? 'no knee' : 'no baseline'} | | | | | |`;
  // Latencies against the baseline at the same rate; CPU against the baseline's knee
  // (at 1 write/s the baseline's CPU per delivery is mostly its idle cost).
  const cpuRef = b ?? bf;
  return row(
    `${s.id} vs baseline-fanout${s.fanout}: latencies both at ${f.rate}/s (${s.id} has no knee),` +
      ` CPU vs the baseline at ${cpuRef.rate}/s`,
    ...versusBaseline(f, { latencies: bf, cpu: cpuRef }),
  );
}

export function baselineRatios(report: Report): string[] {
  const fanouts = fanoutScenarios(report.scenarios);
  const baselines = baselineKnees(fanouts);
  const measured = fanouts.filter((s) => s.mode !== 'baseline' && !s.error);
  if (!measured.length) return [];
  const out = tableHead('Ratio to the plain-Node baseline (same fan-out, each at its own knee)', [
    'scenario',
    'deliveries/s at the knee',
    'accept p99',
    'end-to-end p50',
    'end-to-end p99',
    'CPU-ms per delivery (all processes)',
    'CPU ceiling deliveries/s',
  ]);
  out.push(...measured.map((s) => baselineRow(s, fanouts, baselines)));
  const capped = [...baselines.keys()].filter((fanout) => {
    const s = fanouts.find((x) => x.mode === 'baseline' && x.fanout === fanout);
    return s && s.steps!.every((st) => st.pass);
  });
  if (capped.length)
    out.push(
      `\nThe baseline passed every step (fan-out ${capped.join(', ')}):` +
        ' its real limit is higher, so deliveries/s ratios are upper bounds.',
    );
  out.push('');
  return out;
}

/** The service against Temporal's own cost: the bare fan-outs of the same run. */
export function floorRatios(report: Report): string[] {
  const fanouts = fanoutScenarios(report.scenarios);
  const floorKnee = (mode: string) => {
    const floor = fanouts.find((x) => x.mode === mode && x.fanout === 10 && !x.error);
    return floor ? kneeStep(floor) : null;
  };
  const [floor, floorLocal, baseline10] = [floorKnee('floor'), floorKnee('floor-local'), baselineKnees(fanouts).get(10)];
  const measured = fanouts.filter((x) => (x.mode === 'split' || x.mode === 'single') && x.fanout === 10 && !x.error);
  if (!(floor || floorLocal) || !measured.length) return [];
  const knee = (k: StepResult | null | undefined) =>
    k ? `${num(k.deliveriesPerSec)} deliveries/s, ${num(k.cpuMsPerDelivery.all, 2)} CPU-ms each` : 'no knee';
  const out = [
    '## Ratio to the Temporal floor (fan-out 10, each at its own knee)',
    '',
    `Floor with normal activities: ${knee(floor)}; with local activities: ${knee(floorLocal)}; plain-Node baseline: ${knee(baseline10)}.`,
    '',
    row(
      'scenario',
      'deliveries/s at the knee',
      'vs the floor (normal activities)',
      'vs the floor (local activities)',
      'vs the baseline',
      'CPU-ms per delivery, all processes',
    ),
    '|---|---|---|---|---|---|',
  ];
  for (const s of measured) {
    const k = kneeStep(s);
    const versus = (ref: StepResult | null | undefined) => (k && ref ? `${ratio(k.deliveriesPerSec, ref.deliveriesPerSec)}` : '');
    out.push(
      row(
        s.id,
        k ? num(k.deliveriesPerSec) : 'no knee',
        versus(floor),
        versus(floorLocal),
        versus(baseline10),
        k ? num(k.cpuMsPerDelivery.all, 2) : '',
      ),
    );
  }
  out.push('');
  return out;
}
