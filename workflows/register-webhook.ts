import { patched, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';
import type { RegistrationInput, RegistrationResult } from '../src/contract/payloads';
import { oneAttempt } from './one-attempt';

/**
 * Patch id (0.5.0): the ping runs as a local activity, in the same workflow task as the
 * steps after it: a registration answers an HTTP request, and the round trip of a normal
 * activity through the Temporal server cost it time. `pingRegistrationUrl` claims its one
 * attempt in PostgreSQL, so a run after a retried workflow task sends nothing.
 */
const LOCAL_PING = 'registration-ping-as-local-activity';

// Short steps (a PostgreSQL transaction, and for a stored webhook the start of its
// `webhook/{id}`), local activities for the same reason.
const store = proxyLocalActivities<ActivityTypes>({
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
  const { pingRegistrationUrl } = oneAttempt(input.deliveryTimeoutMs, { local: patched(LOCAL_PING) });

  const { registrationId, webhookId, url } = input;
  const ping = await pingRegistrationUrl({ registrationId, webhookId, url });
  if (!ping.delivered) {
    await store.abandonRegistration(registrationId);
    return { outcome: 'unreachable', ping };
  }
  return store.completeRegistration(input);
}
