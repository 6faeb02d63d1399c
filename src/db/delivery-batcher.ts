import DataLoader from 'dataloader';
import { recordDeliveries, type DeliveryRecord } from './deliveries';
import type { Sql } from './sql';
import { claimDeliveries, type ClaimedTarget, type DeliveryClaim } from './webhooks';

export interface DeliveryBatcher {
  /** See `claimDeliveries`. */
  claim(claim: DeliveryClaim): Promise<ClaimedTarget | null>;
  /** See `recordDeliveries`. */
  record(delivery: DeliveryRecord): Promise<{ failuresToReset: boolean }>;
}

/**
 * The claims and log rows of this process's deliveries, gathered into batches of one
 * statement each. A write's deliveries start together, so their claims (and many of their
 * log rows) reach PostgreSQL in one round trip rather than one each: the round trips, not
 * the rows, are what a delivery's bookkeeping costs.
 */
export function createDeliveryBatcher(sql: Sql): DeliveryBatcher {
  const claims = batchedOneAtATime((batch: readonly DeliveryClaim[]) => claimDeliveries(sql, batch));
  const records = batchedOneAtATime((batch: readonly DeliveryRecord[]) => recordDeliveries(sql, batch));
  return {
    claim: (claim) => claims.load(claim),
    record: (delivery) => records.load(delivery),
  };
}

/**
 * A loader whose statements run one at a time: a batch is sent at the end of the event
 * loop's turn in which its first call came, or once the statement before it has answered,
 * whichever is later. Idle, a call waits for nothing more than the end of its turn; busy,
 * the calls that come while a statement runs go together in the next one (a group commit)
 * instead of queueing a statement each.
 */
function batchedOneAtATime<K, V>(run: (batch: readonly K[]) => Promise<V[]>): DataLoader<K, V> {
  let previous: Promise<unknown> = Promise.resolve();
  return new DataLoader<K, V>(
    (batch) => {
      const statement = run(batch);
      previous = statement.catch(() => {});
      return statement;
    },
    {
      cache: false, // every call is work to do, never an answer to reuse
      maxBatchSize: 500,
      batchScheduleFn: (send) => void previous.then(() => setImmediate(send)),
    },
  );
}
