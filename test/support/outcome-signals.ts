// The outcome signals to `webhook/{id}` as its history holds them: how the tests and the bench
// read what the delivery bookkeeping (activities/delivery-bookkeeping.ts) signalled.
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { deliveryOutcomesSignal } from '../../src/contract/messages';
import type { DeliveryOutcomes } from '../../src/contract/payloads';

/** The outcomes a `deliveryOutcomes` signal in a history of `webhook/{id}` carried; null for any other event. */
export function outcomesSignalled(event: temporal.api.history.v1.IHistoryEvent): boolean[] | null {
  const signal = event.workflowExecutionSignaledEventAttributes;
  if (signal?.signalName !== deliveryOutcomesSignal.name) return null;
  return defaultPayloadConverter.fromPayload<DeliveryOutcomes>(signal.input!.payloads![0]).delivered;
}
