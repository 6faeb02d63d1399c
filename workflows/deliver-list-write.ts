import { ActivityFailure, ApplicationFailure, getExternalWorkflowHandle, proxyActivities, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  DELIVERY_FAILED,
  lifecycleWorkflowId,
  type DeliveryResult,
  type EventDeliveryOutcome,
  type ListEvent,
  type ListWriteDeliveries,
  type PlannedDelivery,
} from '../src/types';
import { deliveryOutcomesSignal } from './webhook-lifecycle';

const { recordInternalFailure } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** A workflow task may schedule at most 2,000 activities; stay well below. */
const DELIVERIES_PER_BATCH = 500;

/**
 * `list-write/{listId}/{writeId}`: one signed POST per recipient and topic, each a single
 * attempt, then to each webhook's `webhook/{id}` the outcomes that can change its count.
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
  const outcomes = new Map<string, boolean[]>();
  for (let start = 0; start < planned.length; start += DELIVERIES_PER_BATCH) {
    const batch = planned.slice(start, start + DELIVERIES_PER_BATCH);
    const results = await Promise.all(batch.map((delivery) => attempt(delivery)));
    batch.forEach((delivery, i) => {
      const result = results[i]!;
      if ('skipped' in result || result.error === 'internal') return;
      // A success that resets nothing would only wake the webhook's workflow for nothing.
      if (result.delivered && !result.resetsFailures) return;
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
      return await deliverEvent({ delivery, event });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // The receiver's failure, classified by the activity.
      if (error.cause instanceof ApplicationFailure && error.cause.type === DELIVERY_FAILED) {
        return { ...(error.cause.details?.[0] as DeliveryResult), resetsFailures: false };
      }
      // Anything else (a lost worker: the activity timed out) is ours, not the receiver's.
      await recordInternalFailure({ delivery, event });
      return { delivered: false, statusCode: null, durationMs: 0, error: 'internal', resetsFailures: false };
    }
  }
}

/** In the form of the service's other ids (`dlv_` and 24 hex digits), from the workflow's replay-safe random. */
function deliveryId(): string {
  return `dlv_${uuid4().replace(/-/g, '').slice(0, 24)}`;
}
