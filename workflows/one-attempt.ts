import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';

/**
 * The activities of a delivery or a ping: one attempt, never retried. The time-out sits
 * above the HTTP deadline, so only a lost worker reaches it, and that is our failure, not
 * the receiver's. `local` runs them in the worker that runs the workflow task, with no
 * round trip through the Temporal server; a local activity is run again when its workflow
 * task is retried, so only an activity that claims its attempt in PostgreSQL may be local, or
 * one whose repeat is harmless (a probe: a ping).
 */
export function oneAttempt(deliveryTimeoutMs: number, { local = false } = {}) {
  const options = { startToCloseTimeout: deliveryTimeoutMs + 5_000, retry: { maximumAttempts: 1 } };
  return local ? proxyLocalActivities<ActivityTypes>(options) : proxyActivities<ActivityTypes>(options);
}
