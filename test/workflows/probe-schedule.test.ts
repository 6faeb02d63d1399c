// When a pause's probes are due, how long a wake waits for the probes due soon after and
// over how long it sends them, how a run's pauses are carried, and which shard probes a
// webhook (src/contract/probe-schedule.ts, and the shard in workflows.ts): the rules alone.
import { describe, expect, it } from 'vitest';
import { packProbes, probeDueAt, probeGatherMs, probeSendDelaysMs, probeSpreadMs, unpackProbes } from '../../src/contract/probe-schedule';
import { PROBE_SHARDS, probeShardOf } from '../../src/contract/workflows';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// The defaults: PROBE_INTERVALS=5m,15m,1h,3h,6h and PROBE_MAX_DAYS=7.
const plan = { intervalsMs: [5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR], forMs: 7 * DAY, deliveryTimeoutMs: 10_000 };
const since = Date.UTC(2026, 10, 27, 3, 0);

describe('probeDueAt', () => {
  it('adds the intervals up from the pause, the last one repeating', () => {
    const offsets = [0, 1, 2, 3, 4, 5, 6].map((n) => probeDueAt(plan, since, n)! - since);
    expect(offsets).toEqual([5 * MINUTE, 20 * MINUTE, 80 * MINUTE, 260 * MINUTE, 620 * MINUTE, 980 * MINUTE, 1340 * MINUTE]);
  });

  it('ends once the next probe would fall past PROBE_MAX_DAYS', () => {
    // 10 h 20 min for the first five, then one every 6 h: 26 more fit in the rest of 7 days.
    expect(probeDueAt(plan, since, 30)).toBe(since + 620 * MINUTE + 26 * 6 * HOUR);
    expect(probeDueAt(plan, since, 31)).toBeNull();
  });

  it('probes at a probe exactly at the limit, and never with no time at all', () => {
    expect(probeDueAt({ ...plan, intervalsMs: [HOUR], forMs: 2 * HOUR }, since, 1)).toBe(since + 2 * HOUR);
    expect(probeDueAt({ ...plan, intervalsMs: [HOUR], forMs: 0 }, since, 0)).toBeNull();
  });
});

describe('probeGatherMs', () => {
  it('is 5% of the shortest interval of any plan, and 0 with no plan', () => {
    const hourly = { ...plan, intervalsMs: [HOUR] };
    expect(probeGatherMs([plan])).toBe(15_000);
    expect(probeGatherMs([hourly, { ...plan, intervalsMs: [10_000, HOUR] }])).toBe(500);
    expect(probeGatherMs([])).toBe(0);
  });
});

describe('probeSpreadMs and probeSendDelaysMs', () => {
  it("spread a wake's probes evenly over half its gather time, the first at once", () => {
    expect(probeSpreadMs([plan])).toBe(7_500);
    expect(probeSpreadMs([])).toBe(0);
    expect(probeSendDelaysMs(4, 7_500)).toEqual([0, 1_875, 3_750, 5_625]);
    expect(probeSendDelaysMs(3, 100)).toEqual([0, 33, 66]);
    expect(probeSendDelaysMs(2, 0)).toEqual([0, 0]);
    expect(probeSendDelaysMs(0, 7_500)).toEqual([]);
  });
});

describe('packProbes', () => {
  it('carries each plan once, and unpacks to the pauses it was given, in order', () => {
    const other = { ...plan, intervalsMs: [MINUTE] };
    const pauses = [plan, other, plan, { ...plan }].map((p, k) => ({ webhookId: `wh_${k}`, since: since + k, plan: p, sent: k }));
    const packed = packProbes(pauses);
    expect(packed.plans).toEqual([plan, other]);
    expect(packed.pauses.map((pause) => pause.plan)).toEqual([0, 1, 0, 0]);
    expect(unpackProbes(packed)).toEqual(pauses);
  });
});

describe('probeShardOf', () => {
  it('keeps the shard of a webhook, since a running pause is found by it, and fills the shards evenly', () => {
    const ids = Array.from({ length: 16_000 }, (_, k) => `wh_${k.toString(36).padStart(24, '0')}`);
    const counts = Array<number>(PROBE_SHARDS).fill(0);
    for (const id of ids) counts[probeShardOf(id)]++;
    // Pinned: another hash would send a pause's stop to a shard that does not hold it.
    expect(['wh_000000000000000000000000', 'wh_7k2m9q4x8c1v5b3n6z0l2p4r', 'wh_a'].map(probeShardOf)).toEqual([15, 10, 10]);
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1_200);
  });
});
