// A worker's delivery bookkeeping: the claims and log rows of the deliveries it runs, and
// the outcomes it tells each webhook's `webhook/{id}`, each gathered across the deliveries
// under way in this process. A write's deliveries start together, so their claims reach
// PostgreSQL in one statement rather than one each; their POSTs end apart, so their log rows
// wait a moment for each other; and a webhook failing fast gets a few signals a second
// rather than one per delivery.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import DataLoader from 'dataloader';
import { claimDeliveries, recordAskedDeliveries, type ClaimedTarget, type DeliveryClaim, type DeliveryRecord } from '../src/db/deliveries';
import type { Sql } from '../src/db/sql';
import { signalDeliveryOutcomes } from '../src/temporal/lifecycle-client';
import { currentTraceId, inDatabaseSpan, inSpan } from '../src/tracing/spans';

export interface DeliveryBatcher {
  /** See `claimDeliveries`. */
  claim: (claim: DeliveryClaim) => Promise<ClaimedTarget | null>;
  /** See `recordDeliveries` and `recordAskedDeliveries`. */
  record: (delivery: DeliveryRecord) => Promise<{ failuresToReset: boolean }>;
}

export interface OutcomeSignals {
  /** Settles once the signal carrying this outcome has been accepted by Temporal. */
  tell: (webhookId: string, delivered: boolean) => Promise<void>;
}

export type DeliveryBookkeeping = DeliveryBatcher & { tellOutcome: OutcomeSignals['tell'] };

/**
 * One per worker process: what its delivery activities claim, log and tell, each a span of the
 * delivery's trace, and each log row naming that trace.
 */
export function createDeliveryBookkeeping(sql: Sql, client: Client): DeliveryBookkeeping {
  const batcher = createDeliveryBatcher(sql);
  const outcomes = createOutcomeSignals(client);
  return {
    claim: (claim) => inDatabaseSpan('claim delivery', () => batcher.claim(claim)),
    record: (delivery) => inDatabaseSpan('log delivery', () => batcher.record({ ...delivery, traceId: currentTraceId() })),
    tellOutcome: (webhookId, delivered) =>
      inSpan('tell webhook/{id}', { 'webhook.id': webhookId, outcome: delivered ? 'delivered' : 'failed' }, () =>
        outcomes.tell(webhookId, delivered),
      ),
  };
}

/**
 * How long a log row waits for others before its statement is sent. The statement's fixed
 * cost in PostgreSQL is several times a row's, and POSTs end apart (a write's ten on loopback
 * within a few milliseconds), so alone each would pay it. The wait delays the end of the
 * delivery's activity, not its POST: the claim, before the POST, never waits.
 */
export const LOG_ROWS_GATHER_MS = 10;

/** The claims and log rows of this process's deliveries, gathered into batches of one statement each. */
export function createDeliveryBatcher(sql: Sql): DeliveryBatcher {
  const claims = batchedOneAtATime((batch: readonly DeliveryClaim[]) => claimDeliveries(sql, batch));
  const records = batchedOneAtATime((batch: readonly DeliveryRecord[]) => recordAskedDeliveries(sql, batch), LOG_ROWS_GATHER_MS);
  return {
    claim: (claim) => claims.load(claim),
    record: (delivery) => records.load(delivery),
  };
}

/**
 * A loader whose statements run one at a time: a batch is sent `gatherMs` after its first
 * call came (at the end of that call's turn of the event loop, with 0), or once the statement
 * before it has answered, whichever is later. Idle, a call waits for nothing more; busy, the
 * calls that come while a statement runs go together in the next one (a group commit)
 * instead of queueing a statement each.
 */
function batchedOneAtATime<K, V>(run: (batch: readonly K[]) => Promise<V[]>, gatherMs = 0): DataLoader<K, V> {
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
      batchScheduleFn: (send) => {
        const gathered = gatherMs === 0 ? previous : Promise.all([previous, new Promise((resolve) => setTimeout(resolve, gatherMs))]);
        void gathered.then(() => setImmediate(send));
      },
    },
  );
}

/**
 * The least time between two signals to one webhook from this process. Outcomes that come
 * meanwhile wait and go together in the next signal, so a webhook failing 50 deliveries a
 * second gets about ten signals a second: its workflow keeps up, and finds the quiet
 * workflow task it needs to continue-as-new (Temporal refuses one while signals wait).
 * A lone outcome goes at once.
 */
const OUTCOME_SIGNAL_SPACING_MS = 100;

interface PendingOutcomes {
  delivered: boolean[];
  /** Settles each `tell` of `delivered`, one for one. */
  settlers: { resolve: () => void; reject: (error: unknown) => void }[];
}

/**
 * Tells `webhook/{id}` of delivery outcomes, batched per webhook as
 * `OUTCOME_SIGNAL_SPACING_MS` says and in the order they were told. Each promise settles
 * when the signal carrying its outcome has been accepted by Temporal, so a delivery is done
 * only once its outcome is durable.
 */
export function createOutcomeSignals(client: Client): OutcomeSignals {
  const pending = new Map<string, PendingOutcomes>();

  async function sendBatches(webhookId: string, batch: PendingOutcomes): Promise<void> {
    await Promise.resolve(); // outcomes told in the same turn join the first signal
    while (batch.delivered.length > 0) {
      const delivered = batch.delivered.splice(0);
      const settlers = batch.settlers.splice(0);
      const sentAt = performance.now();
      try {
        await signalDeliveryOutcomes(client, webhookId, delivered);
        for (const { resolve } of settlers) resolve();
      } catch (error) {
        for (const { reject } of settlers) reject(error);
      }
      const untilNext = sentAt + OUTCOME_SIGNAL_SPACING_MS - performance.now();
      if (untilNext > 0) await sleep(untilNext);
    }
    pending.delete(webhookId);
  }

  return {
    tell(webhookId, delivered) {
      let batch = pending.get(webhookId);
      if (batch === undefined) {
        batch = { delivered: [], settlers: [] };
        pending.set(webhookId, batch);
        void sendBatches(webhookId, batch);
      }
      const joined = batch;
      return new Promise((resolve, reject) => {
        joined.delivered.push(delivered);
        joined.settlers.push({ resolve, reject });
      });
    },
  };
}
