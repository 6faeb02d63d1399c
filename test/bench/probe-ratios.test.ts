// A round of `split-probes` against the phases beside it, and the rounds' latencies pooled
// (scripts/bench/lib/probe-ratios.ts).
import { describe, expect, it } from 'vitest';
import { pooledProbes, probeRatios } from '../../scripts/bench/lib/probe-ratios';

/** A phase of 100 s: the quiet account's p99, the API's CPU and the service's CPU in it. */
const phase = (p99: number, apiCpuS: number, serviceCpuS: number) => ({
  quietE2eMs: { p50: p99 / 2, p99, max: p99 * 2 },
  serviceCpuMs: serviceCpuS * 1000,
  cpu: { wallMs: 100_000, groups: { api: { cpuMs: apiCpuS * 1000, peakRssMiB: 100 } }, machineBusyMs: 0, unattributedMs: 0 },
});

describe('probeRatios', () => {
  it("gives the p99 with the probes over the mean without, and over each, and a probe's share of the service's CPU", () => {
    // 20 probes a second; the service 10 CPU-s a phase more with them: 0.1 CPU-s a second, 5 ms a probe.
    const ratios = probeRatios(phase(55, 8, 40), phase(50, 8, 30), phase(60, 8, 30), 20);
    expect(ratios).toMatchObject({ p99Ratio: 1, p99RatioBefore: 1.1, p99RatioAfter: 0.92, serviceCpuMsPerProbe: 5 });
  });

  it("takes the machine's speed out by the API's CPU: a machine 1.5 times slower in the phase with the probes", () => {
    const ratios = probeRatios(phase(60, 12, 45), phase(40, 8, 30), phase(40, 8, 30), 20);
    expect(ratios).toMatchObject({ p99Ratio: 1.5, apiCpuRatio: 1.5, p99RatioPerApiCpu: 1 });
  });

  it('shows a p99 the probes raised while the API ran at one speed', () => {
    const ratios = probeRatios(phase(50, 8, 36), phase(40, 8, 30), phase(40, 8, 30), 20);
    expect(ratios).toMatchObject({ p99Ratio: 1.25, apiCpuRatio: 1, p99RatioPerApiCpu: 1.25 });
  });

  it('gives null where a phase has no latency', () => {
    const none = { ...phase(40, 8, 30), quietE2eMs: { p50: null, p99: null, max: null } };
    expect(probeRatios(none, phase(40, 8, 30), phase(40, 8, 30), 20)).toMatchObject({
      p99Ratio: null,
      p99RatioPerApiCpu: null,
      apiCpuRatio: 1,
    });
  });
});

describe('pooledProbes', () => {
  /** A phase of 100 writes: 99 at `ms`, and one at `slowMs`. */
  const phase = (probing: boolean, ms: number, slowMs = ms) => ({
    probing,
    quietE2eSamplesMs: [...Array.from({ length: 99 }, () => ms), slowMs],
  });

  it('takes one p99 of every phase with the probes and one of every phase without', () => {
    // Without: 300 writes, 3 of them slow (90 ms): the p99 (the 297th) is 30 ms. With: 200 writes, the 198th is 40 ms.
    const pooled = pooledProbes([phase(false, 30, 90), phase(true, 40), phase(false, 30, 90), phase(true, 40, 200), phase(false, 30, 90)]);
    expect(pooled.without).toMatchObject({ p99: 30, count: 300 });
    expect(pooled.withProbes).toMatchObject({ p99: 40, count: 200 });
    expect(pooled.p99Ratio).toBe(1.33);
  });

  it('lets one slow tail move the pooled p99 less than it moves its own phase', () => {
    // One phase without probes with 3 writes of 100 slow has a p99 of 80 ms; pooled with two calm ones, 30 ms.
    const slow = { probing: false, quietE2eSamplesMs: [...Array.from({ length: 97 }, () => 30), 80, 80, 80] };
    const pooled = pooledProbes([phase(false, 30), slow, phase(false, 30), phase(true, 33)]);
    expect(pooled.without.p99).toBe(30);
    expect(pooled.p99Ratio).toBe(1.1);
  });

  it('gives no ratio without phases of both kinds', () => {
    expect(pooledProbes([phase(false, 30)]).p99Ratio).toBeNull();
  });
});
