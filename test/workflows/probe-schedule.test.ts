// When a pause's probes are due (probeDueAt, src/contract/rules.ts): the rule alone.
import { describe, expect, it } from 'vitest';
import { probeDueAt } from '../../src/contract/rules';

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
