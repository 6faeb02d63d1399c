// The messages of `webhook/{id}`: the API and the delivery activity send them, the workflow
// handles them. Here, apart from workflow code, so that the client needs no workflow module.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DeliveryOutcomes, WebhookLifecycleState, WebhookStatus } from '../types';

export const lifecycleStateQuery = defineQuery<WebhookLifecycleState>('state');
/** Outcomes of event deliveries, in the order they happened (a worker batches those of one webhook: `createOutcomeSignals`). */
export const deliveryOutcomesSignal = defineSignal<[DeliveryOutcomes]>('deliveryOutcomes');
/** PATCH status: `active` reactivates (count back to 0), `paused` pauses by hand. Answers once stored. */
export const setStatusUpdate = defineUpdate<WebhookLifecycleState, [WebhookStatus]>('setStatus');
/** DELETE: removes the webhook and ends this workflow. */
export const deleteWebhookUpdate = defineUpdate<void>('deleteWebhook');
