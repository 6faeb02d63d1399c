import { ApplicationFailure } from '@temporalio/activity';
import {
  abandonRegistration,
  beginRegistration,
  completeRegistration,
  getRegistrationSecret,
} from '../src/db/webhooks';
import type { Sql } from '../src/db/sql';
import { postSigned } from '../src/delivery/post-signed';
import type { HttpSender } from '../src/delivery/sender';
import { newId } from '../src/ids';
import type { DeliveryResult, RegistrationInput, RegistrationResult } from '../src/types';

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
      const body = JSON.stringify({ event: 'ping', webhookId: request.webhookId, at: new Date().toISOString() });
      return postSigned(http, { url: request.url, webhookId: request.webhookId, deliveryId: newId('dlv'), event: 'ping', body }, secret);
    },

    abandonRegistration(registrationId: string): Promise<void> {
      return abandonRegistration(sql, registrationId);
    },

    completeRegistration(input: RegistrationInput): Promise<RegistrationResult> {
      return completeRegistration(sql, input);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
