// The registration's activities: the ping before anything is stored, then the store.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { RegistrationInput, RegistrationPing, RegistrationResult } from '../src/contract/payloads';
import { claimRegistrationPing, markRegistrationUnreachable, storeRegisteredWebhook } from '../src/db/registrations';
import { pingPayload, postSigned } from '../src/delivery/message';
import { newId } from '../src/ids';
import type { DeliveryResult } from '../src/objects';
import { startWebhookLifecycle } from '../src/temporal/lifecycle-client';
import type { ActivityDependencies } from './dependencies';

export function createRegistrationActivities({ sql, http, credentials, secrets, client, outcomeSettleMs }: ActivityDependencies) {
  return {
    /**
     * The registration's ping: one attempt, claimed in PostgreSQL before the POST. A run
     * that finds the claim taken (its workflow task was retried after a worker died) sends
     * nothing and fails the registration as ours, not the receiver's.
     */
    async pingRegistrationUrl(request: RegistrationPing): Promise<DeliveryResult> {
      const claim = await claimRegistrationPing(sql, request.registrationId);
      if (!claim?.secret) {
        throw ApplicationFailure.nonRetryable(`registration ${request.registrationId} is no longer pending`);
      }
      if (!claim.claimed) {
        throw ApplicationFailure.nonRetryable(
          `registration ${request.registrationId}: ping already attempted by an earlier run: nothing sent`,
        );
      }
      const message = {
        url: request.url,
        webhookId: request.webhookId,
        deliveryId: newId('dlv'),
        event: 'ping',
        body: pingPayload(request.webhookId),
      };
      // Not logged (the webhook may not exist yet): what came back goes no further than here.
      const presenting = claim.credentials === null ? undefined : credentials.credentialsFor(claim.webhookId, claim.credentials);
      return (await postSigned(http, message, secrets.open(claim.secret, claim.webhookId), presenting)).result;
    },

    abandonRegistration(registrationId: string): Promise<void> {
      return markRegistrationUnreachable(sql, registrationId);
    },

    /** Stores the pinged webhook and starts its `webhook/{id}`; a retry answers as the first attempt did. */
    async completeRegistration(input: RegistrationInput): Promise<RegistrationResult> {
      const result = await storeRegisteredWebhook(sql, input);
      if (result.outcome === 'created' || result.outcome === 'updated') {
        await startWebhookLifecycle(client, Context.current().info.taskQueue, result.webhook.id, input.accountId, outcomeSettleMs);
      }
      return result;
    },
  };
}
