import { continueAsNew, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';
import type { Reencryption, ReencryptionInput } from '../src/contract/payloads';
import { RESEAL_BATCHES_PER_RUN } from '../src/contract/rules';

// A batch is one short transaction; retried (with PostgreSQL down, or on a worker that seals
// under another key) until it goes through. Nothing is lost by a retry: a secret is either
// still sealed as it was or sealed under the new key.
const { resealBatch } = proxyActivities<ActivityTypes>({
  // A batch takes well under a second: a worker lost mid-batch is noticed this much later.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * `reencrypt-secrets/{taskQueue}/{keyId}`: started by the workers when SECRET_KEYS begins with a key that
 * some stored signing secrets are not sealed under. Seals them under it, a batch at a time,
 * while deliveries go on (each opens whichever key its row names), until none remains under
 * another key; then the older keys may be removed. Each batch's result (`resealed`,
 * `remaining`) is in the history, and the progress in the Web UI's current details.
 * Continues-as-new every RESEAL_BATCHES_PER_RUN batches, carrying the count.
 */
export async function reencryptSecrets(input: ReencryptionInput): Promise<Reencryption> {
  const { keyId, batchesPerRun = RESEAL_BATCHES_PER_RUN } = input;
  let resealed = input.resealed ?? 0;
  for (let batch = 0; batch < batchesPerRun; batch++) {
    const done = await resealBatch(keyId);
    resealed += done.resealed;
    setCurrentDetails(`**${resealed}** signing secrets re-sealed under key \`${keyId}\`; **${done.remaining}** remain under other keys.`);
    if (done.remaining === 0) return { keyId, resealed };
  }
  return continueAsNew<typeof reencryptSecrets>({ ...input, resealed });
}
