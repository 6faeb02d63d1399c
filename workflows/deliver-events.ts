import { ActivityFailure, ApplicationFailure, patched, proxyActivities, TemporalFailure } from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';
import { DELIVERIES_PER_WAVE, DELIVERY_FAILED } from '../src/contract/rules';
import type { ListEvent, PlannedDelivery } from '../src/contract/payloads';
import { oneAttempt } from './one-attempt';

const { recordInternalFailure } = proxyActivities<ActivityTypes>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/**
 * Patch id (0.4.0): deliveries run as local activities, in the worker that runs the
 * workflow task, without a round trip through the Temporal server each. A local activity is
 * run again when its workflow task is retried, so `deliverEvent` claims its attempt in
 * PostgreSQL before the POST, and a second run sends nothing.
 */
const LOCAL_DELIVERIES = 'deliveries-as-local-activities';

/**
 * Attempts each planned delivery of a write once, in waves. Each `deliverEvent` logs its
 * outcome and tells its webhook's `webhook/{id}`. Shared by `deliverListWrite` and
 * `deliverListWriteBatch`; not a workflow of its own.
 */
export async function deliverEvents(deliveries: PlannedDelivery[], event: ListEvent, deliveryTimeoutMs: number): Promise<void> {
  const { deliverEvent } = oneAttempt(deliveryTimeoutMs, { local: patched(LOCAL_DELIVERIES) });

  async function attempt(delivery: PlannedDelivery): Promise<void> {
    try {
      await deliverEvent({ delivery, event });
    } catch (error) {
      // A normal activity's failure comes wrapped in an ActivityFailure, a local one's bare.
      const failure = error instanceof ActivityFailure ? error.cause : error;
      if (!(failure instanceof TemporalFailure)) throw error;
      // Logged by the activity, and told to `webhook/{id}` when it was the receiver's failure.
      if (failure instanceof ApplicationFailure && failure.type === DELIVERY_FAILED) return;
      // Anything else (a lost worker: the activity timed out) is ours, not the receiver's,
      // and is logged as `internal` without counting against the webhook.
      await recordInternalFailure({ delivery, event });
    }
  }

  for (let start = 0; start < deliveries.length; start += DELIVERIES_PER_WAVE) {
    await Promise.all(deliveries.slice(start, start + DELIVERIES_PER_WAVE).map(attempt));
  }
}
