import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RegistrationInput, RegistrationResult } from '../src/types';

// Short steps (a PostgreSQL transaction, and for a stored webhook the start of its
// `webhook/{id}`), run inside the workflow task that follows the ping: a registration
// answers an HTTP request, and each round trip through Temporal costs it time.
const store = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
});

/**
 * POST /v3/webhooks: ping the url, then store the webhook and start its `webhook/{id}`.
 * The secret never passes through here: the API has kept it in PostgreSQL, keyed by the
 * registration id.
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
  return store.completeRegistration(input);
}
