import type { ListWriteBatch } from '../src/contract/payloads';
import { deliverEvents } from './deliver-events';

/**
 * `list-write/{listId}/{writeId}/batch/{n}`: one batch of a write too large for one history
 * (see `deliverListWrite`), each delivery a single attempt as in any write.
 */
export async function deliverListWriteBatch({ event, deliveries, deliveryTimeoutMs }: ListWriteBatch): Promise<void> {
  await deliverEvents(deliveries, event, deliveryTimeoutMs);
}
