// When a store of `webhook/{id}`'s state makes a notice: the crossing rule alone.
import { describe, expect, it } from 'vitest';
import { noticeCrossed, type CountedState } from '../../src/notices/crossing';

const active = (consecutiveFailures: number, failuresCounted: number): CountedState => ({
  status: 'active',
  pausedReason: null,
  consecutiveFailures,
  failuresCounted,
});
const paused = (
  pausedReason: 'auto_failures' | 'manual',
  consecutiveFailures: number,
  failuresCounted: number,
  probes: CountedState['probes'] = null,
): CountedState => ({
  status: 'paused',
  pausedReason,
  consecutiveFailures,
  failuresCounted,
  probes,
});

describe('noticeCrossed', () => {
  it.each([
    ['the 10th failure in a row', active(9, 9), active(10, 10), 'webhook.failing'],
    ['a batch that moves the count from 8 to 12', active(8, 8), active(12, 12), 'webhook.failing'],
    ['the 9th failure', active(8, 8), active(9, 9), null],
    ['the 11th, after the warning', active(10, 10), active(11, 11), null],
    ['a batch from 12 to 15, after the warning', active(12, 12), active(15, 15), null],
    ['the 20th: the pause', active(19, 19), paused('auto_failures', 20, 20), 'webhook.paused'],
    ['a batch from 8 past 20: only the pause', active(8, 8), paused('auto_failures', 20, 25), 'webhook.paused'],
    ['a batch whose 2xx reset the count, then 10 more failures', active(12, 12), active(10, 22), 'webhook.failing'],
    ['a batch whose 2xx reset the count, then 3 more', active(12, 12), active(3, 15), null],
    ['10 failures and a 2xx in one batch: recovered before it was stored', active(5, 5), active(0, 11), null],
    ['a reactivation and 10 failures in one store', paused('auto_failures', 20, 20), active(10, 30), 'webhook.failing'],
    [
      'a reactivation after a manual pause and 20 failures in one store',
      paused('manual', 4, 4),
      paused('auto_failures', 20, 24),
      'webhook.paused',
    ],
    [
      'a probe of the pause answered',
      paused('auto_failures', 20, 20, 'probing'),
      paused('auto_failures', 20, 20, 'reachable'),
      'webhook.reachable',
    ],
  ] as const)('%s', (_, before, after, expected) => {
    expect(noticeCrossed(before, after)).toBe(expected);
  });

  it.each([
    ['the same store again (a retried activity)', active(10, 10), active(10, 10)],
    ['the pause stored again', paused('auto_failures', 20, 20), paused('auto_failures', 20, 20)],
    ['a pause by hand', active(12, 12), paused('manual', 12, 12)],
    ['a pause by hand of a webhook at 19', active(19, 19), paused('manual', 19, 19)],
    ['outcomes that arrive after the pause', paused('auto_failures', 20, 20), paused('auto_failures', 20, 23)],
    ['failures while paused by hand', paused('manual', 12, 12), paused('manual', 12, 15)],
    ['a reactivation', paused('auto_failures', 20, 20), active(0, 20)],
    ['a 2xx', active(15, 15), active(0, 15)],
    // A store that counted no new failure: an older state written back (a workflow task replayed after a newer store).
    ['a state with fewer failures counted than stored', active(0, 20), paused('auto_failures', 20, 20)],
    ['a state at 12 with no new failure counted', active(0, 12), active(12, 12)],
    ['the probing begun', paused('auto_failures', 20, 20), paused('auto_failures', 20, 20, 'probing')],
    ['the answered probe stored again', paused('auto_failures', 20, 20, 'reachable'), paused('auto_failures', 20, 20, 'reachable')],
    ['the probing out of time', paused('auto_failures', 20, 20, 'probing'), paused('auto_failures', 20, 20, 'expired')],
    ['a reactivation after the answer', paused('auto_failures', 20, 20, 'reachable'), active(0, 20)],
  ] as const)('makes none for %s', (_, before, after) => {
    expect(noticeCrossed(before, after)).toBeNull();
  });
});
