// Starting and signalling `webhook/{id}` from outside it: the registration activity starts
// it, the delivery bookkeeping (activities/delivery-bookkeeping.ts) signals it, the workers
// wake its pauses to probe as they start, and so nothing under activities/ needs the API's
// client module.
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { deliveryOutcomesSignal, wakeToProbeSignal } from '../contract/messages';
import type { TimedOutcome } from '../contract/payloads';
import type { Sql } from '../db/sql';
import { pausesWithoutProbes } from '../db/webhooks';
import { AccountIdKey, WebhookIdKey, WebhookStatusKey } from '../contract/search-attributes';
import { lifecycleWorkflowId, type WorkflowTypes } from '../contract/workflows';

/**
 * Starts `webhook/{id}` for a webhook just stored, counting failures from 0. It outlives the
 * registration that started it; a re-registration (or a retry) finds it running. Called from
 * an activity, so the client shares its connection with a worker of `taskQueue`: Temporal may
 * hand that worker the new workflow's first task in its answer, without dispatching it.
 * The run holds outcomes `outcomeSettleMs` before counting them, and its successors too.
 */
export async function startWebhookLifecycle(
  client: Client,
  taskQueue: string,
  webhookId: string,
  accountId: string,
  outcomeSettleMs: number,
): Promise<void> {
  try {
    await client.workflow.start<WorkflowTypes['webhookLifecycle']>('webhookLifecycle', {
      taskQueue,
      workflowId: lifecycleWorkflowId(webhookId),
      requestEagerStart: true,
      args: [
        {
          state: { webhookId, accountId, status: 'active', pausedReason: null, consecutiveFailures: 0, failuresCounted: 0 },
          outcomeSettleMs,
        },
      ],
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
 * One signal to `webhook/{id}` of `outcomes`, in the order they ended: with their times, and
 * alone for a release before 0.8.0. A webhook deleted meanwhile has nothing to count.
 */
export async function signalDeliveryOutcomes(client: Client, webhookId: string, outcomes: TimedOutcome[]): Promise<void> {
  const delivered = outcomes.map((outcome) => outcome.delivered);
  try {
    await client.workflow.getHandle(lifecycleWorkflowId(webhookId)).signal(deliveryOutcomesSignal, { delivered, outcomes });
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}

/** Signals sent at once while waking pauses: enough to be quick, few enough to leave the server to live traffic. */
const WAKES_AT_ONCE = 20;

/**
 * Wakes each webhook paused by failures whose pause has no probes yet, a pause made by a
 * release before probes, so that its `webhook/{id}` starts probing; returns how many. Every
 * worker calls it as it starts, and a pause woken twice ignores the second signal.
 */
export async function wakePausesToProbe(sql: Sql, client: Client): Promise<number> {
  const webhookIds = await pausesWithoutProbes(sql);
  for (let first = 0; first < webhookIds.length; first += WAKES_AT_ONCE) {
    await Promise.all(
      webhookIds.slice(first, first + WAKES_AT_ONCE).map(async (webhookId) => {
        try {
          await client.workflow.getHandle(lifecycleWorkflowId(webhookId)).signal(wakeToProbeSignal);
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }
      }),
    );
  }
  return webhookIds.length;
}
