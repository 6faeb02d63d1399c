// The count by end time (workflows/failure-count.ts) as pure functions: however outcomes arrive
// within OUTCOME_SETTLE_MS of their ends, and whenever the workflow wakes to count them, the
// count, the failures told and the pause are those of the outcomes counted in the order the
// attempts ended.
import { describe, expect, it } from 'vitest';
import type { TimedOutcome, WebhookLifecycleState } from '../../src/contract/payloads';
import { OUTCOME_SETTLE_MS } from '../../src/contract/rules';
import { countOutcomes, hold, takeSettled, untilFirstSettles } from '../../workflows/failure-count';

type Counted = Pick<WebhookLifecycleState, 'status' | 'pausedReason' | 'consecutiveFailures' | 'failuresCounted'>;

function newState(consecutiveFailures = 0): WebhookLifecycleState {
  return {
    webhookId: 'wh_count',
    accountId: 'acc_count',
    status: 'active',
    pausedReason: null,
    consecutiveFailures,
    failuresCounted: consecutiveFailures,
  };
}

const counted = ({ status, pausedReason, consecutiveFailures, failuresCounted }: WebhookLifecycleState): Counted => ({
  status,
  pausedReason,
  consecutiveFailures,
  failuresCounted,
});

/** The answer by definition: every outcome counted at once, in the order the attempts ended. */
function inEndOrder(outcomes: TimedOutcome[], consecutiveFailures = 0): Counted {
  const state = newState(consecutiveFailures);
  const sorted = [...outcomes].sort((a, b) => a.endedAt - b.endedAt || Number(a.delivered) - Number(b.delivered));
  countOutcomes(
    state,
    sorted.map((outcome) => outcome.delivered),
    (next) => Object.assign(state, next),
  );
  return counted(state);
}

/**
 * What `webhook/{id}` counts when each outcome arrives at its `arrivesAt`: it wakes at every
 * arrival and when its settle timer fires (set, as the workflow sets it, when it starts to hold).
 */
function asTheWorkflowCounts(arrivals: { outcome: TimedOutcome; arrivesAt: number }[], consecutiveFailures = 0): Counted {
  const state = newState(consecutiveFailures);
  const change = (next: Partial<WebhookLifecycleState>) => Object.assign(state, next);
  const settling: TimedOutcome[] = [];
  let timerAt: number | null = null;
  const wake = (now: number) => {
    countOutcomes(state, takeSettled(settling, now, OUTCOME_SETTLE_MS).outcomes, change);
    timerAt = settling.length > 0 ? now + untilFirstSettles(settling, now, OUTCOME_SETTLE_MS) : null;
  };
  for (const { outcome, arrivesAt } of [...arrivals].sort((a, b) => a.arrivesAt - b.arrivesAt)) {
    while (timerAt !== null && timerAt <= arrivesAt) wake(timerAt);
    const wasHolding = settling.length > 0;
    hold(settling, [outcome]);
    if (!wasHolding) wake(arrivesAt); // the first outcome held wakes the loop, which sets the timer
  }
  while (timerAt !== null) wake(timerAt);
  return counted(state);
}

/** A small seeded generator, so that a failing case can be run again. */
function randomFrom(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the count by the times attempts ended', () => {
  it("gives a small write's success and a large write's failure told in the opposite order of their ends the count of their ends", () => {
    // As the issue measured the loaders: a success whose POST ended at 0 ms, its row gathered
    // 250 ms and told at 255 ms; a failure of a large write that ended at 100 ms, told at 118 ms.
    const success = { deliveryId: 'dlv_small', delivered: true, endedAt: 1_000_000 };
    const failure = { deliveryId: 'dlv_bulk', delivered: false, endedAt: 1_000_100 };
    const arrivals = [
      { outcome: failure, arrivesAt: failure.endedAt + 18 },
      { outcome: success, arrivesAt: success.endedAt + 255 },
    ];
    // At 19 failures: the failure after the success is the first of a new streak, not the 20th.
    expect(asTheWorkflowCounts(arrivals, 19)).toEqual({
      status: 'active',
      pausedReason: null,
      consecutiveFailures: 1,
      failuresCounted: 20,
    });
    expect(asTheWorkflowCounts(arrivals, 19)).toEqual(inEndOrder([failure, success], 19));
    // Counted as they arrived, the failure would have paused the webhook.
    const asArrived = newState(19);
    countOutcomes(asArrived, [false, true], (next) => Object.assign(asArrived, next));
    expect(asArrived).toMatchObject({ status: 'paused', consecutiveFailures: 20 });
  });

  it('pauses at the 20th failure by end time though a success that ended after it arrives first', () => {
    const failures = Array.from({ length: 20 }, (_, i) => ({ deliveryId: `dlv_${i}`, delivered: false, endedAt: 1_000 + i }));
    const success = { deliveryId: 'dlv_ok', delivered: true, endedAt: 1_100 };
    const arrivals = [{ outcome: success, arrivesAt: 1_101 }, ...failures.map((outcome) => ({ outcome, arrivesAt: 3_000 }))];
    expect(asTheWorkflowCounts(arrivals)).toEqual({
      status: 'paused',
      pausedReason: 'auto_failures',
      consecutiveFailures: 20,
      failuresCounted: 20,
    });
  });

  it('gives the same count, failures told and pause as the end order for any arrival within the settle time', () => {
    const random = randomFrom(56);
    for (let run = 0; run < 2_000; run++) {
      const length = 1 + Math.floor(random() * 45);
      const successRate = random() * 0.3;
      let endedAt = 10_000;
      const outcomes = Array.from({ length }, (_, i) => {
        endedAt += Math.floor(random() * 300);
        return { deliveryId: `dlv_${i}`, delivered: random() < successRate, endedAt };
      });
      // Each told late by less than the bound, some twice (a repeat of the same delivery, within it too).
      const arrivals = outcomes.flatMap((outcome) => {
        const told = { outcome, arrivesAt: outcome.endedAt + Math.floor(random() * OUTCOME_SETTLE_MS) };
        const repeat = {
          outcome,
          arrivesAt: Math.min(told.arrivesAt + Math.floor(random() * 50), outcome.endedAt + OUTCOME_SETTLE_MS - 1),
        };
        return random() < 0.1 ? [told, repeat] : [told];
      });
      const start = Math.floor(random() * 20);
      expect({ run, counted: asTheWorkflowCounts(arrivals, start) }).toEqual({ run, counted: inEndOrder(outcomes, start) });
    }
  });
});
