import type { DeliveryResult, PingRequest } from '../src/contract/payloads';
import { oneAttempt } from './one-attempt';

/** POST /v3/webhooks/{id}/pings: one signed ping, never retried, never counted as a failure. */
export async function pingWebhook(request: PingRequest): Promise<DeliveryResult> {
  const { sendPing } = oneAttempt(request.deliveryTimeoutMs);
  return sendPing(request.webhookId, request.actor);
}
