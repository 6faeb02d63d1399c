// Starting and signalling `webhook/{id}` from outside it: the registration and delivery
// activities use these, and so nothing under activities/ needs the API's client module.
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { lifecycleWorkflowId, type DeliveryOutcomes, type WebhookLifecycleInput } from '../types';
import { deliveryOutcomesSignal } from './webhook-messages';
import { AccountIdKey, WebhookIdKey, WebhookStatusKey } from './search-attributes';

/** The signature of the workflow `webhookLifecycle`, without importing workflow code. */
type WebhookLifecycleWorkflow = (input: WebhookLifecycleInput) => Promise<void>;

/**
 * Starts `webhook/{id}` for a webhook just stored, counting failures from 0. It outlives the
 * registration that started it; a re-registration (or a retry) finds it running. Called from
 * an activity, so the client shares its connection with a worker of `taskQueue`: Temporal may
 * hand that worker the new workflow's first task in its answer, without dispatching it.
 */
export async function startWebhookLifecycle(client: Client, taskQueue: string, webhookId: string, accountId: string): Promise<void> {
  try {
    await client.workflow.start<WebhookLifecycleWorkflow>('webhookLifecycle', {
      taskQueue,
      workflowId: lifecycleWorkflowId(webhookId),
      requestEagerStart: true,
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

/**
 * The least time between two signals to one webhook from this process. Outcomes that come
 * meanwhile wait and go together in the next signal, so a webhook failing 50 deliveries a
 * second gets about ten signals a second: its workflow keeps up, and finds the quiet
 * workflow task it needs to continue-as-new (Temporal refuses one while signals wait).
 * A lone outcome goes at once.
 */
const OUTCOME_SIGNAL_SPACING_MS = 100;

interface PendingOutcomes {
  delivered: boolean[];
  /** Settles each `tell` of `delivered`, one for one. */
  settlers: { resolve: () => void; reject: (error: unknown) => void }[];
}

/**
 * Tells `webhook/{id}` of delivery outcomes, batched per webhook as
 * `OUTCOME_SIGNAL_SPACING_MS` says and in the order they were told. Each promise settles
 * when the signal carrying its outcome has been accepted by Temporal, so a delivery is done
 * only once its outcome is durable. One per worker process.
 */
export function createOutcomeSignals(client: Client) {
  const pending = new Map<string, PendingOutcomes>();

  async function sendBatches(webhookId: string, batch: PendingOutcomes): Promise<void> {
    await Promise.resolve(); // outcomes told in the same turn join the first signal
    while (batch.delivered.length > 0) {
      const delivered = batch.delivered.splice(0);
      const settlers = batch.settlers.splice(0);
      const sentAt = performance.now();
      try {
        await signalDeliveryOutcomes(client, webhookId, delivered);
        for (const { resolve } of settlers) resolve();
      } catch (error) {
        for (const { reject } of settlers) reject(error);
      }
      const untilNext = sentAt + OUTCOME_SIGNAL_SPACING_MS - performance.now();
      if (untilNext > 0) await sleep(untilNext);
    }
    pending.delete(webhookId);
  }

  return {
    tell(webhookId: string, delivered: boolean): Promise<void> {
      let batch = pending.get(webhookId);
      if (batch === undefined) {
        batch = { delivered: [], settlers: [] };
        pending.set(webhookId, batch);
        void sendBatches(webhookId, batch);
      }
      const joined = batch;
      return new Promise((resolve, reject) => {
        joined.delivered.push(delivered);
        joined.settlers.push({ resolve, reject });
      });
    },
  };
}

/** The outcomes a `deliveryOutcomes` signal in a history of `webhook/{id}` carried; null for any other event. */
export function outcomesSignalled(event: temporal.api.history.v1.IHistoryEvent): boolean[] | null {
  const signal = event.workflowExecutionSignaledEventAttributes;
  if (signal?.signalName !== deliveryOutcomesSignal.name) return null;
  return defaultPayloadConverter.fromPayload<DeliveryOutcomes>(signal.input!.payloads![0]).delivered;
}

/** One signal to `webhook/{id}`; a webhook deleted meanwhile has nothing to count. */
async function signalDeliveryOutcomes(client: Client, webhookId: string, delivered: boolean[]): Promise<void> {
  try {
    await client.workflow.getHandle(lifecycleWorkflowId(webhookId)).signal(deliveryOutcomesSignal, { delivered });
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
