import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DELIVERY_FAILED, type ListEvent, type PlannedDelivery } from '../src/types';

const { recordInternalFailure } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** A workflow task may schedule at most 2,000 activities; stay well below. */
const DELIVERIES_PER_WAVE = 500;

/**
 * Attempts each planned delivery of a write once, in waves. Each `deliverEvent` logs its
 * outcome and tells its webhook's `webhook/{id}`. Shared by `deliverListWrite` and
 * `deliverListWriteBatch`; not a workflow of its own.
 */
export async function deliverEvents(deliveries: PlannedDelivery[], event: ListEvent, deliveryTimeoutMs: number): Promise<void> {
  // One attempt, never retried; the timeout sits above the HTTP deadline, so only a lost
  // worker reaches it, and that is our failure, not the receiver's.
  const { deliverEvent } = proxyActivities<Activities>({
    startToCloseTimeout: deliveryTimeoutMs + 5_000,
    retry: { maximumAttempts: 1 },
  });

  async function attempt(delivery: PlannedDelivery): Promise<void> {
    try {
      await deliverEvent({ delivery, event });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // The receiver's failure: the activity has logged and told it.
      if (error.cause instanceof ApplicationFailure && error.cause.type === DELIVERY_FAILED) return;
      // Anything else (a lost worker: the activity timed out) is ours, not the receiver's,
      // and is logged as `internal` without counting against the webhook.
      await recordInternalFailure({ delivery, event });
    }
  }

  for (let start = 0; start < deliveries.length; start += DELIVERIES_PER_WAVE) {
    await Promise.all(deliveries.slice(start, start + DELIVERIES_PER_WAVE).map(attempt));
  }
}
