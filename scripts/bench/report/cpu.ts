// "CPU seconds and peak RSS": each process group's, at each scenario's knee.
import { type Report, type ScenarioResult } from '../lib/types';
import { kneeStep, num, row } from './format';

const GROUP_ORDER = [
  'api',
  'worker',
  'service',
  'baseline',
  'floor',
  'temporal',
  'postgres',
  'receivers',
  'generator',
  'flood',
  'trace-sink',
];

/** What the CPU of a workload scenario without steps covers. */
const CPU_SPAN_OF: Partial<Record<ScenarioResult['kind'], string>> = {
  registration: 'registrations',
  recovery: 'recovery',
  'noisy-neighbour': 'phases and drains',
  relay: 'writes and drain',
  probes: 'rounds, after the set-up',
};

function cpuRow(s: ScenarioResult): string[] {
  const st = kneeStep(s) ?? s.steps?.[0];
  const cpu = st?.cpu ?? s.registration?.cpu ?? s.recovery?.cpu ?? s.noisyNeighbour?.cpu ?? s.relay?.cpu ?? s.probes?.cpu;
  if (!cpu) return [];
  const cells = GROUP_ORDER.map((g) => (cpu.groups[g] ? `${num(cpu.groups[g].cpuMs / 1000)} s (${num(cpu.groups[g].peakRssMiB, 0)})` : ''));
  return [row(s.id, st ? `${st.rate}/s` : (CPU_SPAN_OF[s.kind] ?? ''), ...cells, num(cpu.unattributedMs / 1000), num(cpu.wallMs / 1000))];
}

export function cpuTable(report: Report): string[] {
  return [
    '## CPU seconds and peak RSS (MiB) per process, at the knee (else the first step)',
    '',
    `| scenario | step | ${GROUP_ORDER.join(' | ')} | harness-unattributed CPU s | wall s |`,
    `|---|---|${GROUP_ORDER.map(() => '---|').join('')}---|---|`,
    ...report.scenarios.flatMap(cpuRow),
    '',
  ];
}
