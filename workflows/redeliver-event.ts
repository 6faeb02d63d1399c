import type { DeliveryResult, RedeliveryRequest } from '../src/contract/payloads';
import { oneAttempt } from './one-attempt';

/**
 * POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries: a logged event sent again
 * once, at its owner's request. Never retried, never counted; its result is the outcome.
 */
export async function redeliverEvent(request: RedeliveryRequest): Promise<DeliveryResult> {
  const { redeliverEvent } = oneAttempt(request.deliveryTimeoutMs);
  return redeliverEvent(request.redelivery);
}
