import type { DeliveryResult, Redelivery } from '../src/types';
import { oneAttempt } from './one-attempt';

/**
 * POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries: a logged event sent again
 * once, at its owner's request. Never retried, never counted; its result is the outcome.
 */
export async function redeliverEvent(request: { redelivery: Redelivery; deliveryTimeoutMs: number }): Promise<DeliveryResult> {
  const { redeliverEvent } = oneAttempt(request.deliveryTimeoutMs);
  return redeliverEvent(request.redelivery);
}
