// The activity of `reencrypt-secrets/{taskQueue}/{keyId}`: a batch of stored signing secrets sealed again
// under the first key. It reads and writes PostgreSQL itself: no secret and no key ever
// travels through Temporal, only the key's id and counts.
import { ApplicationFailure } from '@temporalio/activity';
import type { ResealedBatch } from '../src/contract/payloads';
import { resealSecrets } from '../src/db/sealed-secrets';
import type { ActivityDependencies } from './dependencies';

/** Secrets re-sealed in one transaction: a few milliseconds of work, and a short hold of their rows. */
export const RESEAL_BATCH_SIZE = 500;

export function createReencryptionActivities({ sql, secrets, logger }: ActivityDependencies) {
  return {
    async resealBatch(keyId: string): Promise<ResealedBatch> {
      // A worker whose SECRET_KEYS starts with another key (not yet restarted with the new
      // list, or restarted with an older one) leaves the batch to another: retried, and shown
      // as this failure in the Web UI meanwhile.
      if (secrets.keyId !== keyId) {
        throw ApplicationFailure.retryable(
          `this worker seals under key "${secrets.keyId}", not "${keyId}": waiting for a worker whose SECRET_KEYS starts with "${keyId}"`,
          'OtherFirstKey',
        );
      }
      const batch = await resealSecrets(sql, secrets, RESEAL_BATCH_SIZE);
      logger.info({ msg: 'signing secrets re-sealed', keyId, ...batch });
      return batch;
    },
  };
}
