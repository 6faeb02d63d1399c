import { ApplicationFailure } from '@temporalio/activity';
import { recordDelivery } from '../src/db/deliveries';
import type { Sql } from '../src/db/sql';
import {
  abandonRegistration,
  beginRegistration,
  completeRegistration,
  deleteWebhook,
  findDeliveryTarget,
  getRegistrationSecret,
  storeWebhookState,
} from '../src/db/webhooks';
import { pingPayload } from '../src/delivery/payloads';
import { postSigned } from '../src/delivery/post-signed';
import type { HttpSender } from '../src/delivery/sender';
import { newId } from '../src/ids';
import type { DeliveryResult, RegistrationInput, RegistrationResult, WebhookLifecycleState } from '../src/types';

export interface ActivityDependencies {
  sql: Sql;
  http: HttpSender;
}

/**
 * Every side effect of the workflows. Secrets are read here, from PostgreSQL, and never
 * returned: nothing an activity takes or gives may hold one.
 */
export function createActivities({ sql, http }: ActivityDependencies) {
  return {
    beginRegistration(input: RegistrationInput): Promise<{ webhookId: string }> {
      return beginRegistration(sql, input);
    },

    async pingRegistrationUrl(request: { registrationId: string; webhookId: string; url: string }): Promise<DeliveryResult> {
      const secret = await getRegistrationSecret(sql, request.registrationId);
      if (secret === null) {
        throw ApplicationFailure.nonRetryable(`registration ${request.registrationId} is no longer pending`);
      }
      const message = { url: request.url, webhookId: request.webhookId, deliveryId: newId('dlv'), event: 'ping', body: pingPayload(request.webhookId) };
      return postSigned(http, message, secret);
    },

    abandonRegistration(registrationId: string): Promise<void> {
      return abandonRegistration(sql, registrationId);
    },

    completeRegistration(input: RegistrationInput): Promise<RegistrationResult> {
      return completeRegistration(sql, input);
    },

    /** POST /v3/webhooks/{id}/pings: one signed ping, logged, never counted. */
    async sendPing(webhookId: string): Promise<DeliveryResult> {
      const target = await findDeliveryTarget(sql, webhookId);
      if (target === null) throw ApplicationFailure.nonRetryable(`webhook ${webhookId} no longer exists`, 'WebhookGone');
      const deliveryId = newId('dlv');
      const result = await postSigned(http, { url: target.url, webhookId, deliveryId, event: 'ping', body: pingPayload(webhookId) }, target.secret);
      await recordDelivery(sql, { id: deliveryId, webhookId, kind: 'ping', event: 'ping', listId: null, cursor: null, at: null, result });
      return result;
    },

    storeWebhookState(state: WebhookLifecycleState): Promise<void> {
      return storeWebhookState(sql, state);
    },

    deleteWebhook(webhookId: string): Promise<void> {
      return deleteWebhook(sql, webhookId);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
