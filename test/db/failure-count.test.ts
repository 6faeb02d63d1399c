import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import { recordDeliveries } from '../../src/db/deliveries';
import { failuresToReset } from '../../src/db/failure-count';
import { mirrorWebhookState } from '../../src/db/webhooks';
import { useMigratedDatabase } from '../support/database';
import { attemptRecord, insertWebhook } from '../../scripts/lib/webhook-rows';
import { initialLifecycleState, storeRules } from '../support/lifecycle-state';

const database = useMigratedDatabase();

/** The three places of the count as PostgreSQL holds two of them, and what a success would be told. */
async function counters(webhookId: string) {
  const [row] = await database.sql<{ reported: number; counted: number; consecutive: number; toReset: boolean }[]>`
    SELECT w.failures_reported::int AS reported, w.failures_counted::int AS counted, w.consecutive_failures AS consecutive,
           ${failuresToReset(database.sql)} AS "toReset"
    FROM webhooks w WHERE w.id = ${webhookId}`;
  return row;
}

describe('the failure count', () => {
  it('keeps failures_reported >= failures_counted, and a success resets iff the count is above 0 or a reported failure is uncounted', async () => {
    const account = await createAccount(database.sql, 'failure count test');
    const webhookId = await insertWebhook(database.sql, account.id);
    // The workflow's state, counting the outcomes signalled to it as webhook-lifecycle.ts does
    // (no pause within 20 failures); stored in the mirror only when the script says so.
    const state = initialLifecycleState(webhookId, account.id);
    const signalled: boolean[] = [];
    const script: ('fail' | 'succeed' | 'count' | 'store')[] = [
      'fail',
      'count',
      'store',
      'fail',
      'succeed', // the stored count is 1
      'count',
      'succeed', // the mirror still holds the count of 1
      'store',
      'succeed', // nothing to reset
      'fail',
      'succeed', // a reported failure the stored state does not include yet
      'count',
      'store',
      'succeed', // nothing to reset
    ];
    const told: boolean[] = [];
    for (const step of script) {
      if (step === 'fail' || step === 'succeed') {
        const error = step === 'fail' ? 'non_2xx' : null;
        const [{ failuresToReset: toReset }] = await recordDeliveries(database.sql, [attemptRecord(webhookId, { error })]);
        // What activities/deliveries.ts signals: every failure, and a success with something to reset.
        if (step === 'fail' || toReset) signalled.push(step === 'succeed');
        if (step === 'succeed') told.push(toReset);
      } else if (step === 'count') {
        for (const delivered of signalled.splice(0)) {
          if (delivered) state.consecutiveFailures = 0;
          else {
            state.consecutiveFailures += 1;
            state.failuresCounted += 1;
          }
        }
      } else {
        await mirrorWebhookState(database.sql, state, storeRules());
      }
      const { reported, counted, consecutive, toReset } = await counters(webhookId);
      expect(reported).toBeGreaterThanOrEqual(counted);
      expect(toReset).toBe(consecutive > 0 || reported > counted);
    }
    expect(told).toEqual([true, true, false, true, false]);
    expect(await counters(webhookId)).toEqual({ reported: 3, counted: 3, consecutive: 0, toReset: false });
  });
});
