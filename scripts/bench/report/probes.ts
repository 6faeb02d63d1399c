// "Probes beside live traffic": a quiet account's latency with thousands of paused webhooks
// probing and without them, and the probes' drift from their schedule, round by round.
import { type ProbesPhase, type ProbesRound, type ProbesSummary, type ScenarioResult } from '../lib/types';
import { type Column, logSummary, num, p50p99, table } from './format';

/** The CPU groups a phase's row shows, in its order. */
const CPU_GROUPS = ['api', 'worker', 'temporal', 'postgres', 'receivers'];

/** The quiet account's figures, a row per phase. */
const PHASE_COLUMNS: Column<ProbesPhase>[] = [
  ['round', (phase) => phase.round],
  ['phase', (phase) => (phase.probing ? 'with the probes' : phase.round === 0 ? 'before the probes' : 'after (probes stopped)')],
  ['quiet writes accepted', (phase) => `${phase.quietWrites.accepted}/${phase.quietWrites.scheduled}`],
  ['end-to-end p50 / p99 / max ms', ({ quietE2eMs: e2e }) => `${num(e2e.p50)} / **${num(e2e.p99)}** / ${num(e2e.max)}`],
  ['accept p50 / p99 ms', (phase) => p50p99(phase.quietAcceptMs)],
  [
    'ledger: sent = delivered + failed + missing (dup)',
    ({ quietLedger: l }) =>
      `${l.sent} = ${l.delivered} + ${l.failedRecorded} + ${l.missing} (${l.duplicates})${l.balanced ? '' : ' **unbalanced**'}`,
  ],
  [`CPU s: ${CPU_GROUPS.join(' / ')}`, (phase) => CPU_GROUPS.map((g) => num((phase.cpu.groups[g]?.cpuMs ?? 0) / 1000)).join(' / ')],
  ['worker: workflow tasks; replayed; sticky cache hits; forced evictions', workflowTasks],
  [
    'cores busy outside the bench: before; most in a second',
    (phase) => `${num(phase.otherWork.otherCores, 2)}; ${num(phase.outsideMaxCores, 2)}`,
  ],
];

/** The SDK's counters summed over every workflow type: a replayed task is a workflow the cache no longer held. */
function workflowTasks({ sdk }: ProbesPhase): string {
  if (!sdk) return '';
  const total = (name: string) => Object.entries(sdk).reduce((sum, [key, f]) => (key.split('{')[0] === name ? sum + f.count : sum), 0);
  return ['workflow_task_execution_latency', 'workflow_task_replay_latency', 'sticky_cache_hit', 'sticky_cache_total_forced_eviction']
    .map(total)
    .join('; ');
}

/** Each round against the targets: the p99s' ratio, the probes received and their drift. */
function roundColumns({ targets, phases }: ProbesSummary): Column<ProbesRound>[] {
  /** The quiet account's p99 in round `r`'s phase with the probes, or without them (round 0's: before any). */
  const p99 = (r: number, probing: boolean) => num(phases.find((phase) => phase.round === r && phase.probing === probing)?.quietE2eMs.p99);
  return [
    ['round', (r) => r.round],
    ['quiet p99 before / with / after, ms', (r) => `${p99(r.round - 1, false)} / ${p99(r.round, true)} / ${p99(r.round, false)}`],
    [
      `ratio to the mean before and after (target ≤ ${num(targets.p99Ratio, 2)}); to each`,
      (r) => `**${num(r.p99Ratio, 2)}×**; ${num(r.p99RatioBefore, 2)}×, ${num(r.p99RatioAfter, 2)}×`,
    ],
    [
      "the API's CPU (the same work in each phase) with the probes over the mean without; the p99 ratio per CPU-second of the API",
      (r) => `${num(r.apiCpuRatio, 2)}×; ${num(r.p99RatioPerApiCpu, 2)}×`,
    ],
    ['probes received / due', ({ drift: d }) => `${d.received} / ${d.due}`],
    [
      `drift, % of the interval, p50 / p99 / max (target ≤ ${targets.driftPercent})`,
      ({ drift: { driftPercent: p } }) => `${num(p.p50)} / **${num(p.p99)}** / ${num(p.max)}`,
    ],
    ['late, ms, p50 / p99 / max', ({ drift: { lateMs: p } }) => `${num(p.p50, 0)} / ${num(p.p99, 0)} / ${num(p.max, 0)}`],
    ['probes/s', (r) => num(r.drift.perSec)],
    ['service CPU-ms per probe', (r) => num(r.serviceCpuMsPerProbe)],
    ['early, bad signatures, after the stop', (r) => `${r.drift.early}, ${r.drift.badSignatures}, ${r.strayProbes}`],
  ];
}

/** The rounds' latencies pooled: every phase with the probes against every phase without. */
function pooledLine({ pooled, targets }: ProbesSummary): string {
  const { withProbes, without } = pooled;
  return (
    `- All rounds together: quiet e2e p50 / p99 ${p50p99(withProbes)} ms with the probes (${withProbes.count} writes), ` +
    `${p50p99(without)} ms without them (${without.count} writes, the phase before the first round's included): ` +
    `p99 **${num(pooled.p99Ratio, 2)}×** (target ≤ ${num(targets.p99Ratio, 2)}).`
  );
}

/** How each round was set going and stopped. */
function roundLine(r: ProbesRound): string {
  return (
    `round ${r.round}: ${r.probing} pauses handed to their probe workflows in ${num(r.startMs / 1000)} s, the first probe due` +
    ` ${num(r.leadMs / 1000)} s after the first; the probe workflows terminated in ${num(r.stopMs / 1000)} s, the service calm ${num(r.calmMs / 1000)} s later`
  );
}

export function probesSection(s: ScenarioResult): string[] {
  const p = s.probes!;
  return [
    `${p.webhooks} webhooks of ${p.accounts} accounts paused by failures (seeded), probed at PROBE_INTERVALS=${p.intervals}` +
      ' by receivers answering 503, beside a quiet account whose one-delivery writes go at' +
      ` ${p.quietWritesPerSec}/s for ${num(p.phaseMs / 1000)} s a phase after the warm-up: first without the probes` +
      '; then each round hands their pauses to the probe workflows `probes/{taskQueue}/{shard}` (as `webhook/{id}` does at a' +
      ' pause, with `since` set back so that the first probes come due evenly over one interval from a set time after the' +
      ' first hand-over), runs a phase with' +
      ' the probes from that time on, in their steady state, terminates the probe workflows one interval (a minute at' +
      ' most) later and, once their last probes have left and the service is calm, runs a phase without them.' +
      " Latencies from each write's due time to its delivery's first receipt;" +
      " a probe's drift from its due time (its pause's `since` plus the intervals) to its arrival," +
      ' for the probes due during the phase with them (one due and not received before the stop counts as late until the' +
      ' stop: the least it is late by).',
    '',
    ...table(PHASE_COLUMNS, p.phases),
    '',
    ...table(roundColumns(p), p.rounds),
    '',
    pooledLine(p),
    `- Seeded in ${num(p.seedMs / 1000)} s; ${p.rounds.map(roundLine).join('; ')}.`,
    `- Warnings / errors in the logs: ${logSummary(s.logs)}.`,
    '',
  ];
}
