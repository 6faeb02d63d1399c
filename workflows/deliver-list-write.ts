import { ActivityFailure, ApplicationFailure, proxyActivities, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DELIVERY_FAILED, type ListEvent, type ListWriteDeliveries, type PlannedDelivery } from '../src/types';

const { recordInternalFailure } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** A workflow task may schedule at most 2,000 activities; stay well below. */
const DELIVERIES_PER_BATCH = 500;

/**
 * `list-write/{listId}/{writeId}`: one signed POST per recipient and topic, each a single
 * attempt. Each `deliverEvent` logs its outcome and tells its webhook's `webhook/{id}`.
 */
export async function deliverListWrite({ write, recipients, deliveryTimeoutMs }: ListWriteDeliveries): Promise<void> {
  // One attempt, never retried; the timeout sits above the HTTP deadline, so only a lost
  // worker reaches it, and that is our failure, not the receiver's.
  const { deliverEvent } = proxyActivities<Activities>({
    startToCloseTimeout: deliveryTimeoutMs + 5_000,
    retry: { maximumAttempts: 1 },
  });

  const planned: PlannedDelivery[] = recipients.flatMap(({ webhookId, topics }) =>
    topics.map((topic) => ({ deliveryId: deliveryId(), webhookId, topic })),
  );
  const event: ListEvent = { listId: write.listId, cursor: write.cursor, at: write.at };
  for (let start = 0; start < planned.length; start += DELIVERIES_PER_BATCH) {
    await Promise.all(planned.slice(start, start + DELIVERIES_PER_BATCH).map((delivery) => attempt(delivery)));
  }

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
}

/** In the form of the service's other ids (`dlv_` and 24 hex digits), from the workflow's replay-safe random. */
function deliveryId(): string {
  return `dlv_${uuid4().replace(/-/g, '').slice(0, 24)}`;
}
