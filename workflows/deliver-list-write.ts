import { ActivityFailure, ApplicationFailure, getExternalWorkflowHandle, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DELIVERY_FAILED, lifecycleWorkflowId, type DeliveryResult, type EventDeliveryOutcome, type ListWrite, type PlannedDelivery } from '../src/types';
import { deliveryOutcomesSignal } from './webhook-lifecycle';

const { planDeliveries, recordInternalFailure } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** A workflow task may schedule at most 2,000 activities; stay well below. */
const DELIVERIES_PER_BATCH = 500;

/**
 * `list-write/{listId}/{writeId}`: one signed POST per webhook and topic of the write,
 * each a single attempt, then each webhook's outcomes to its `webhook/{id}` workflow.
 */
export async function deliverListWrite(write: ListWrite, options: { deliveryTimeoutMs: number }): Promise<void> {
  // One attempt, never retried; the timeout sits above the HTTP deadline, so only a lost
  // worker reaches it, and that is our failure, not the receiver's.
  const { deliverEvent } = proxyActivities<Activities>({
    startToCloseTimeout: options.deliveryTimeoutMs + 5_000,
    retry: { maximumAttempts: 1 },
  });

  const planned = await planDeliveries(write);
  const outcomes = new Map<string, boolean[]>();
  for (let start = 0; start < planned.length; start += DELIVERIES_PER_BATCH) {
    const batch = planned.slice(start, start + DELIVERIES_PER_BATCH);
    const results = await Promise.all(batch.map((delivery) => attempt(delivery)));
    batch.forEach((delivery, i) => {
      const result = results[i]!;
      if ('skipped' in result || result.error === 'internal') return;
      outcomes.set(delivery.webhookId, [...(outcomes.get(delivery.webhookId) ?? []), result.delivered]);
    });
  }

  // One signal per webhook and write, however many topics it received.
  await Promise.all(
    [...outcomes].map(([webhookId, delivered]) =>
      getExternalWorkflowHandle(lifecycleWorkflowId(webhookId))
        .signal(deliveryOutcomesSignal, { delivered })
        .catch(() => undefined), // deleted meanwhile: its workflow has ended, nothing to count
    ),
  );

  async function attempt(delivery: PlannedDelivery): Promise<EventDeliveryOutcome> {
    try {
      return await deliverEvent({ delivery, write });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // The receiver's failure, classified by the activity.
      if (error.cause instanceof ApplicationFailure && error.cause.type === DELIVERY_FAILED) {
        return error.cause.details?.[0] as DeliveryResult;
      }
      // Anything else (a lost worker: the activity timed out) is ours, not the receiver's.
      await recordInternalFailure({ delivery, write });
      return { delivered: false, statusCode: null, durationMs: 0, error: 'internal' };
    }
  }
}
