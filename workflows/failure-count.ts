// The consecutive-failure count of `webhook/{id}` (workflows/webhook-lifecycle.ts), as pure
// functions of its state and the outcomes told: held until they settle, then counted in the
// order the attempts ended. Runs in the workflow sandbox: deterministic, given `now`.
import type { TimedOutcome, WebhookLifecycleState } from '../src/contract/payloads';
import { MAX_CONSECUTIVE_FAILURES } from '../src/contract/rules';

/** Holds outcomes until they settle; one told twice (the same delivery) is held once. */
export function hold(settling: TimedOutcome[], outcomes: TimedOutcome[]): void {
  for (const outcome of outcomes) {
    const repeat = outcome.deliveryId !== undefined && settling.some(({ deliveryId }) => deliveryId === outcome.deliveryId);
    if (!repeat) settling.push(outcome);
  }
}

/** The time until the first held outcome settles, `settleMs` after it ended (at least 1 ms: a timer of 0 is none). */
export function untilFirstSettles(settling: TimedOutcome[], now: number, settleMs: number): number {
  const first = Math.min(...settling.map(({ endedAt }) => endedAt));
  return Math.max(1, first + settleMs - now);
}

/**
 * Takes the outcomes that ended `settleMs` or more ago out of `settling`: those to
 * count, in the order they ended (at the same moment a failure before a success, which resets
 * it), and how many failures ended before `countedFrom`, the reactivation that set the count
 * to 0 since: told, but reset by it.
 */
export function takeSettled(
  settling: TimedOutcome[],
  now: number,
  settleMs: number,
  countedFrom = -Infinity,
): { outcomes: boolean[]; failuresReset: number } {
  const settledBefore = now - settleMs;
  const settled = settling.filter(({ endedAt }) => endedAt <= settledBefore);
  if (settled.length === 0) return { outcomes: [], failuresReset: 0 };
  settling.splice(0, settling.length, ...settling.filter(({ endedAt }) => endedAt > settledBefore));
  settled.sort((a, b) => a.endedAt - b.endedAt || Number(a.delivered) - Number(b.delivered));
  const afterReset = settled.filter(({ endedAt }) => endedAt > countedFrom);
  const failuresReset = settled.filter(({ delivered, endedAt }) => !delivered && endedAt <= countedFrom).length;
  return { outcomes: afterReset.map(({ delivered }) => delivered), failuresReset };
}

/** Counts `outcomes` in the order given: a failure adds one, a delivery resets; at MAX_CONSECUTIVE_FAILURES a pause, after which nothing changes but the failures told. */
export function countOutcomes(
  state: WebhookLifecycleState,
  outcomes: boolean[],
  change: (next: Partial<WebhookLifecycleState>) => void,
): void {
  for (const delivered of outcomes) {
    if (!delivered) change({ failuresCounted: state.failuresCounted + 1 });
    if (state.status === 'paused') continue; // outcomes after a pause change nothing else
    if (delivered) {
      if (state.consecutiveFailures !== 0) change({ consecutiveFailures: 0 });
    } else if (state.consecutiveFailures + 1 >= MAX_CONSECUTIVE_FAILURES) {
      change({ consecutiveFailures: MAX_CONSECUTIVE_FAILURES, status: 'paused', pausedReason: 'auto_failures' });
    } else {
      change({ consecutiveFailures: state.consecutiveFailures + 1 });
    }
  }
}
