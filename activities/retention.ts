// The pruning activity of the hourly schedule `prune-records/{taskQueue}`.
import type { Pruned } from '../src/contract/payloads';
import { deleteRecordsOlderThan } from '../src/db/retention';
import type { ActivityDependencies } from './dependencies';

export function createRetentionActivities({ sql, logger }: ActivityDependencies) {
  return {
    async pruneRecords(retentionDays: number): Promise<Pruned> {
      const pruned = await deleteRecordsOlderThan(sql, retentionDays);
      logger.info({ msg: 'records pruned', retentionDays, ...pruned });
      return pruned;
    },
  };
}
