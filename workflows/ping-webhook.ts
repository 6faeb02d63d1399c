import type { DeliveryResult } from '../src/types';
import { oneAttempt } from './one-attempt';

/** POST /v3/webhooks/{id}/pings: one signed ping, never retried, never counted as a failure. */
export async function pingWebhook(request: { webhookId: string; deliveryTimeoutMs: number }): Promise<DeliveryResult> {
  const { sendPing } = oneAttempt(request.deliveryTimeoutMs);
  return sendPing(request.webhookId);
}
