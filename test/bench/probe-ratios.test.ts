// A round of `split-probes` against the phases beside it (scripts/bench/lib/probe-ratios.ts).
import { describe, expect, it } from 'vitest';
import { probeRatios } from '../../scripts/bench/lib/probe-ratios';

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
