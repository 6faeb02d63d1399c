import type { DeliveryResult, TestEventRequest } from '../src/contract/payloads';
import { oneAttempt } from './one-attempt';

/**
 * POST /v3/webhooks/{id}/test-events: one signed delivery of the topic an owner chose, sent
 * once, also to a paused webhook. Never retried, never counted; its result is the outcome.
 */
export async function sendTestEvent(request: TestEventRequest): Promise<DeliveryResult> {
  return oneAttempt(request.deliveryTimeoutMs).deliverTestEvent(request.testEvent);
}
