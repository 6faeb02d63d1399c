// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). The messages of
// `webhook/{id}`: the API and the delivery activities send them, the workflow handles them.
// Their names are kept in histories: never rename one.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DeliveryOutcomes, WebhookLifecycleState, WebhookStatus } from './payloads';

export const lifecycleStateQuery = defineQuery<WebhookLifecycleState>('state');
/** Outcomes of event deliveries, in the order they happened (a worker batches those of one webhook: src/delivery/bookkeeping.ts). */
export const deliveryOutcomesSignal = defineSignal<[DeliveryOutcomes]>('deliveryOutcomes');
/** PATCH status: `active` reactivates (count back to 0), `paused` pauses by hand. Answers once stored. */
export const setStatusUpdate = defineUpdate<WebhookLifecycleState, [WebhookStatus]>('setStatus');
/** DELETE: removes the webhook and ends this workflow. */
export const deleteWebhookUpdate = defineUpdate<void>('deleteWebhook');
