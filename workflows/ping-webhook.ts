import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeliveryResult } from '../src/types';

/** POST /v3/webhooks/{id}/pings: one signed ping, never retried, never counted as a failure. */
export async function pingWebhook(request: { webhookId: string; deliveryTimeoutMs: number }): Promise<DeliveryResult> {
  const { sendPing } = proxyActivities<Activities>({
    startToCloseTimeout: request.deliveryTimeoutMs + 5_000,
    retry: { maximumAttempts: 1 },
  });
  return sendPing(request.webhookId);
}
