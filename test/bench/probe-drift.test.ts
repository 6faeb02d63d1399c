// The probes' drift from their schedule as `split-probes` reports it (scripts/bench/lib/probe-drift.ts).
import { describe, expect, it } from 'vitest';
import { arrivalsByWebhook, probeDrift } from '../../scripts/bench/lib/probe-drift';

const plan = (intervalsMs: number[]) => ({ intervalsMs, forMs: 7 * 86_400_000, deliveryTimeoutMs: 10_000 });

describe('arrivalsByWebhook', () => {
  it("gathers each webhook's arrivals, in order", () => {
    const arrivals = arrivalsByWebhook({ t: [30, 10, 20, 5], webhook: ['a', 'a', 'b', 'a'], sigOk: [1, 1, 1, 1] });
    expect(arrivals).toEqual(
      new Map([
        ['a', [5, 10, 30]],
        ['b', [20]],
      ]),
    );
  });
});

describe('probeDrift', () => {
  it('takes the n-th arrival as probe n, due at since plus the intervals, and gives its lateness in percent of its interval', () => {
    // Due at 1,000 + 20,000 × (n + 1): 21,000, 41,000, 61,000, 81,000.
    const arrivals = new Map([['a', [21_200, 43_000, 61_100]]]);
    const drift = probeDrift(plan([20_000]), [{ webhookId: 'a', since: 1_000 }], arrivals, { from: 0, to: 70_000, takenAt: 90_000 });
    expect(drift).toEqual({ due: 3, received: 3, lateMs: [200, 2_000, 100], driftPercent: [1, 10, 0.5], early: 0 });
  });

  it('counts only the probes due within the window, though the arrivals before it keep their places', () => {
    const arrivals = new Map([['a', [21_000, 41_500, 62_000, 81_000]]]);
    const drift = probeDrift(plan([20_000]), [{ webhookId: 'a', since: 1_000 }], arrivals, { from: 40_000, to: 70_000, takenAt: 90_000 });
    expect(drift).toMatchObject({ due: 2, received: 2, lateMs: [500, 1_000] });
  });

  it('measures each probe against its own interval when they differ, the last repeating', () => {
    // Due at 10,000, 40,000 (after 30 s), 70,000 (after 30 s again).
    const arrivals = new Map([['a', [11_000, 43_000, 70_000]]]);
    const drift = probeDrift(plan([10_000, 30_000]), [{ webhookId: 'a', since: 0 }], arrivals, { from: 0, to: 90_000, takenAt: 100_000 });
    expect(drift.driftPercent).toEqual([10, 10, 0]);
  });

  it('tells an arrival before its due time, and stops at the end of the plan', () => {
    const arrivals = new Map([['a', [9_000]]]);
    const drift = probeDrift({ ...plan([10_000]), forMs: 15_000 }, [{ webhookId: 'a', since: 0 }], arrivals, {
      from: 0,
      to: 100_000,
      takenAt: 100_000,
    });
    expect(drift).toMatchObject({ due: 1, received: 1, early: 1, lateMs: [-1_000] });
  });

  it('counts a probe due and not received as late until the receipts were taken, at the least', () => {
    // Due at 20,000 and 40,000; the receipts taken at 60,000.
    const drift = probeDrift(plan([20_000]), [{ webhookId: 'b', since: 0 }], new Map(), { from: 0, to: 50_000, takenAt: 60_000 });
    expect(drift).toMatchObject({ due: 2, received: 0, lateMs: [40_000, 20_000], driftPercent: [200, 100] });
  });
});
