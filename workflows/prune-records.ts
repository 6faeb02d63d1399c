import { proxyActivities } from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';
import type { PruneRequest, Pruned } from '../src/contract/payloads';

const { pruneRecords: prune } = proxyActivities<ActivityTypes>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', maximumAttempts: 5 },
});

/**
 * Started every hour by the schedule `prune-records/{taskQueue}`: deletes the writes,
 * registrations and notices older than the retention window. Its result, in the Web UI, says how many.
 */
export async function pruneRecords({ retentionDays }: PruneRequest): Promise<Pruned> {
  return prune(retentionDays);
}
