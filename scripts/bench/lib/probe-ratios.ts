// What `split-probes` reports of a round against its neighbours: the quiet account's p99 with
// the probes against the phases without them, and what the probes cost (scenarios/probes.ts).
import { percentiles, round } from './stats';
import { type PooledProbes, type ProbesPhase } from './types';

/** What the ratios read of a phase. */
type PhaseFigures = Pick<ProbesPhase, 'quietE2eMs' | 'serviceCpuMs' | 'cpu'>;

/**
 * The quiet account's p99 with the probes over its p99 in the phases without them before and
 * after (and over their mean); the API's CPU with the probes over the mean without, and the p99
 * ratio taken per CPU-second of the API (the API does the same work in every phase, the quiet
 * account's writes, and none for the probes: its CPU gauges the machine's speed); and the
 * service's CPU a second with the probes less without (their mean) over the probes received a
 * second.
 */
export function probeRatios(withProbes: PhaseFigures, before: PhaseFigures, after: PhaseFigures, probesPerSec: number) {
  /** A figure of the phases without the probes: the mean of the one before and the one after. */
  const beside = (figure: (phase: PhaseFigures) => number | null) => {
    const [b, a] = [figure(before), figure(after)];
    return b !== null && a !== null ? (b + a) / 2 : null;
  };
  /** A figure with the probes over the same figure without them. */
  const withOverBeside = (figure: (phase: PhaseFigures) => number | null) => ratio(figure(withProbes), beside(figure));
  const p99 = (phase: PhaseFigures) => phase.quietE2eMs.p99;
  const apiCpuMs = (phase: PhaseFigures) => phase.cpu.groups.api?.cpuMs ?? null;
  const p99PerApiCpu = (phase: PhaseFigures) => {
    const [latency, cpu] = [p99(phase), apiCpuMs(phase)];
    return latency !== null && cpu ? latency / cpu : null;
  };
  const cpuPerSec = (phase: PhaseFigures) => (phase.serviceCpuMs * 1000) / phase.cpu.wallMs;
  const extraCpuPerSec = cpuPerSec(withProbes) - beside(cpuPerSec)!; // never null: every phase has its CPU
  return {
    p99RatioBefore: ratio(p99(withProbes), p99(before)),
    p99RatioAfter: ratio(p99(withProbes), p99(after)),
    p99Ratio: withOverBeside(p99),
    apiCpuRatio: withOverBeside(apiCpuMs),
    p99RatioPerApiCpu: withOverBeside(p99PerApiCpu),
    serviceCpuMsPerProbe: probesPerSec ? round(extraCpuPerSec / probesPerSec, 2) : null,
  };
}

/** The quiet account's latencies of the phases with the probes against those of the phases without, each kind pooled. */
export function pooledProbes(phases: Pick<ProbesPhase, 'probing' | 'quietE2eSamplesMs'>[]): PooledProbes {
  const pool = (probing: boolean) =>
    percentiles(
      phases.filter((phase) => phase.probing === probing).flatMap((phase) => phase.quietE2eSamplesMs),
      [50, 99],
    );
  const [withProbes, without] = [pool(true), pool(false)];
  return { withProbes, without, p99Ratio: ratio(withProbes.p99, without.p99) };
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b ? round(a / b, 2) : null;
}
