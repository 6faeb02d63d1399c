import { ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { WebhookIdKey, WebhookStatusKey, AccountIdKey } from '../src/temporal/search-attributes';
import { lifecycleWorkflowId, type RegistrationInput, type RegistrationResult } from '../src/types';
import { webhookLifecycle } from './webhook-lifecycle';

const store = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
});

/**
 * POST /v3/webhooks: ping the url, then store the webhook. The secret never passes
 * through here: the API has kept it in PostgreSQL, keyed by the registration id.
 */
export async function registerWebhook(input: RegistrationInput): Promise<RegistrationResult> {
  // One attempt, like every delivery: a registration ping is never retried.
  const { pingRegistrationUrl } = proxyActivities<Activities>({
    startToCloseTimeout: input.deliveryTimeoutMs + 5_000,
    retry: { maximumAttempts: 1 },
  });

  const { registrationId, webhookId, url } = input;
  const ping = await pingRegistrationUrl({ registrationId, webhookId, url });
  if (!ping.delivered) {
    await store.abandonRegistration(registrationId);
    return { outcome: 'unreachable', ping };
  }

  const result = await store.completeRegistration(input);
  if (result.outcome === 'created' || result.outcome === 'updated') {
    await ensureLifecycleRunning(webhookId, input.accountId);
  }
  return result;
}

/** Starts `webhook/{id}`, which counts failures from now on; a re-registration finds it running. */
async function ensureLifecycleRunning(webhookId: string, accountId: string): Promise<void> {
  try {
    await startChild(webhookLifecycle, {
      workflowId: lifecycleWorkflowId(webhookId),
      args: [{ state: { webhookId, accountId, status: 'active', pausedReason: null, consecutiveFailures: 0, failuresCounted: 0 } }],
      // It outlives this registration.
      parentClosePolicy: ParentClosePolicy.ABANDON,
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
