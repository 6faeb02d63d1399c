import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeliveryResult, Redelivery } from '../src/types';

/**
 * POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries: a logged event sent again
 * once, at its owner's request. Never retried, never counted; its result is the outcome.
 */
export async function redeliverEvent(request: { redelivery: Redelivery; deliveryTimeoutMs: number }): Promise<DeliveryResult> {
  const { redeliverEvent } = proxyActivities<Activities>({
    startToCloseTimeout: request.deliveryTimeoutMs + 5_000,
    retry: { maximumAttempts: 1 },
  });
  return redeliverEvent(request.redelivery);
}
