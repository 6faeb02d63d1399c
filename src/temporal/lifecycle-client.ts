// Starting and signalling `webhook/{id}` from outside it: the registration and delivery
// activities use these, and so nothing under activities/ needs the API's client module.
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { lifecycleWorkflowId, type WebhookLifecycleInput } from '../types';
import { deliveryOutcomesSignal } from './webhook-messages';
import { AccountIdKey, WebhookIdKey, WebhookStatusKey } from './search-attributes';

/** The signature of the workflow `webhookLifecycle`, without importing workflow code. */
type WebhookLifecycleWorkflow = (input: WebhookLifecycleInput) => Promise<void>;

/**
 * Starts `webhook/{id}` for a webhook just stored, counting failures from 0. It outlives the
 * registration that started it; a re-registration (or a retry) finds it running.
 */
export async function startWebhookLifecycle(client: Client, taskQueue: string, webhookId: string, accountId: string): Promise<void> {
  try {
    await client.workflow.start<WebhookLifecycleWorkflow>('webhookLifecycle', {
      taskQueue,
      workflowId: lifecycleWorkflowId(webhookId),
      args: [{ state: { webhookId, accountId, status: 'active', pausedReason: null, consecutiveFailures: 0, failuresCounted: 0 } }],
      typedSearchAttributes: [
        { key: WebhookIdKey, value: webhookId },
        { key: AccountIdKey, value: accountId },
        { key: WebhookStatusKey, value: 'active' },
      ],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** Tells `webhook/{id}` of one delivery outcome; a webhook deleted meanwhile has nothing to count. */
export async function signalDeliveryOutcome(client: Client, webhookId: string, delivered: boolean): Promise<void> {
  try {
    await client.workflow.getHandle(lifecycleWorkflowId(webhookId)).signal(deliveryOutcomesSignal, { delivered: [delivered] });
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
