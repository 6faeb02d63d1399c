import type { DeliveryResult, RedeliveryRequest } from '../src/contract/payloads';
import { oneAttempt } from './one-attempt';

/**
 * POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries: a logged event sent again
 * once, at its owner's request. Never retried, never counted; its result is the outcome.
 */
export async function redeliverEvent(request: RedeliveryRequest): Promise<DeliveryResult> {
  // The activity has the workflow type's name: histories record both, so both stay.
  return oneAttempt(request.deliveryTimeoutMs).redeliverEvent(request.redelivery);
}
