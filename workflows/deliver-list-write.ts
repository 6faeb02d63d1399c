import { executeChild, patched } from '@temporalio/workflow';
import { ListIdKey } from '../src/contract/search-attributes';
import { BATCHES_AT_ONCE, DEFAULT_DELIVERIES_PER_BATCH } from '../src/contract/rules';
import { listWriteBatchWorkflowId } from '../src/contract/workflows';
import type { ListEvent, ListWriteDeliveries, PlannedDelivery } from '../src/contract/payloads';
import { deliverEvents } from './deliver-events';
import { newDeliveryId } from './delivery-ids';
import { deliverListWriteBatch } from './deliver-list-write-batch';

/** Patch id (0.2.0): a write larger than one batch is delivered by child workflows. */
const CHILD_BATCHES = 'list-write-child-batches';
/**
 * Patch id: a delivery's id is the one the event feed recorded with the write (the recipient's
 * deliveryIds), so that a push and the feed name it alike; a write recorded before the feed has none.
 */
const FEED_DELIVERY_IDS = 'feed-delivery-ids';

/**
 * `list-write/{listId}/{writeId}`: one signed POST per recipient and topic, each a single
 * attempt. A write of up to one batch is delivered here; a larger one (up to 25,025
 * deliveries) by one child workflow per batch, so that no history nears Temporal's limits
 * on events and size (three or more events per delivery: 25,025 would need about 75,000,
 * and Temporal ends a history at 51,200).
 */
export async function deliverListWrite({
  write,
  recipients,
  deliveryTimeoutMs,
  deliveriesPerBatch = DEFAULT_DELIVERIES_PER_BATCH,
}: ListWriteDeliveries): Promise<void> {
  const recorded = patched(FEED_DELIVERY_IDS);
  const planned: PlannedDelivery[] = recipients.flatMap(({ webhookId, topics, deliveryIds }) =>
    topics.map((topic, i) => ({ deliveryId: (recorded ? deliveryIds?.[i] : undefined) ?? newDeliveryId(), webhookId, topic })),
  );
  const event: ListEvent = { listId: write.listId, cursor: write.cursor, at: write.at };
  if (planned.length <= deliveriesPerBatch || !patched(CHILD_BATCHES)) {
    await deliverEvents(planned, event, deliveryTimeoutMs);
    return;
  }

  const batches: PlannedDelivery[][] = [];
  for (let start = 0; start < planned.length; start += deliveriesPerBatch) batches.push(planned.slice(start, start + deliveriesPerBatch));
  for (let first = 0; first < batches.length; first += BATCHES_AT_ONCE) {
    await Promise.all(
      batches.slice(first, first + BATCHES_AT_ONCE).map((deliveries, i) =>
        executeChild(deliverListWriteBatch, {
          workflowId: listWriteBatchWorkflowId(write.listId, write.writeId, first + i + 1),
          args: [{ event, deliveries, deliveryTimeoutMs }],
          typedSearchAttributes: [{ key: ListIdKey, value: write.listId }],
        }),
      ),
    );
  }
}
