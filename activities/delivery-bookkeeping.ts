// A worker's delivery bookkeeping: the steps every send shares, whatever its kind (an event
// delivery, a ping, a test event, a redelivery, a probe). An event delivery's claim; one
// signed POST, counted in the metrics and a log line of its kind; its log row; and the outcome
// told to its webhook's `webhook/{id}`. Claims, log rows and outcomes are gathered across the
// deliveries under way in this process: a write's deliveries start together, so their claims
// reach PostgreSQL in one statement rather than one each; event deliveries' log rows wait for
// those of the writes that follow, so one statement logs several writes; and a webhook failing
// fast gets a few signals a second rather than one per delivery.
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { TimedOutcome } from '../src/contract/payloads';
import { isBulkTaskQueue } from '../src/contract/workflows';
import {
  claimDeliveries,
  recordAskedDeliveries,
  type ClaimedTarget,
  type DeliveryClaim,
  type DeliveryRecord,
  type DeliveryTarget,
  type RecordedDelivery,
} from '../src/db/deliveries';
import type { Sql } from '../src/db/sql';
import { postSigned } from '../src/delivery/message';
import type { HttpExchange } from '../src/delivery/sender';
import { newId } from '../src/ids';
import type { DeliveryResult } from '../src/objects';
import { signalDeliveryOutcomes } from '../src/temporal/lifecycle-client';
import { annotateSpan, currentTraceId, inDatabaseSpan, inSpan } from '../src/tracing/spans';
import { batchedOneAtATime } from './batched-statements';
import type { ActivityDependencies } from './dependencies';

/** What the delivery log says of a delivery before its attempt: which, to which webhook, of what. */
export type DeliveryEntry = Omit<DeliveryRecord, 'result' | 'request' | 'response' | 'traceId'>;

/** What an attempt came to: a POST's exchange and when it ended, or INTERNAL_FAILURE (logged as it is written). */
export type AttemptOutcome = (HttpExchange & { endedAt: number }) | typeof INTERNAL_FAILURE;

/** An attempt lost or refused on our side: nothing known to be sent, nothing came back. */
export const INTERNAL_FAILURE = {
  result: { delivered: false, statusCode: null, durationMs: 0, error: 'internal' },
  request: null,
  response: null,
} as const satisfies Pick<DeliveryRecord, 'result' | 'request' | 'response'>;

/** A ping's log entry, under a new delivery id: an owner's ping or a probe. */
export function pingEntry(webhookId: string, kind: 'ping' | 'probe'): DeliveryEntry {
  return { id: newId('dlv'), webhookId, kind, event: 'ping', listId: null, cursor: null, at: null };
}

/** The fields that name an event delivery in the logs. */
export function eventLogFields(entry: DeliveryEntry) {
  return {
    deliveryId: entry.id,
    webhookId: entry.webhookId,
    workflowId: Context.current().info.workflowExecution?.workflowId,
    topic: entry.event,
    listId: entry.listId,
    cursor: entry.cursor,
  };
}

/** The metric and the log line of each kind of send never counted against its webhook. */
const UNCOUNTED_SENDS = {
  ping: { counter: 'pings', msg: 'ping' },
  redelivery: { counter: 'redeliveries', msg: 'redelivery' },
  test: { counter: 'testEvents', msg: 'test event' },
  probe: { counter: 'probes', msg: 'probe' },
} as const;

export interface DeliveryBookkeeping {
  /** An event delivery's one attempt claimed, with its target read (`claimDeliveries`). */
  claim: (claim: DeliveryClaim) => Promise<ClaimedTarget | null>;
  /**
   * One signed POST of `body` to `target`, then `logAttempt`. The result, when it was known,
   * and what logging it told; what was sent and came back stays in the log.
   */
  send: (
    target: DeliveryTarget,
    entry: DeliveryEntry,
    body: string,
  ) => Promise<{ result: DeliveryResult; endedAt: number; recorded: RecordedDelivery }>;
  /** An attempt counted in metrics and a log line of its kind, then its log row (`record`). */
  logAttempt: (entry: DeliveryEntry, attempt: AttemptOutcome) => Promise<RecordedDelivery>;
  /** A log row alone (`recordDeliveries`, `recordAskedDeliveries`), an event delivery's gathered as its write's task queue allows. */
  record: (delivery: DeliveryRecord) => Promise<RecordedDelivery>;
  /** Tells `webhook/{id}` outcomes of event deliveries: see OutcomeSignals. */
  tellOutcomes: OutcomeSignals['tell'];
}

export interface DeliveryBatcher {
  /** See `claimDeliveries`. */
  claim: (claim: DeliveryClaim) => Promise<ClaimedTarget | null>;
  /**
   * See `recordDeliveries` and `recordAskedDeliveries`. `bulk`: an event delivery of the bulk
   * task queue (a large write), whose rows fill a statement by themselves.
   */
  record: (delivery: DeliveryRecord, from?: { bulk: boolean }) => Promise<RecordedDelivery>;
}

export interface OutcomeSignals {
  /** Settles once the signal carrying these outcomes has been accepted by Temporal. */
  tell: (webhookId: string, outcomes: TimedOutcome[]) => Promise<void>;
}

/**
 * The outcomes an event delivery logged as `recorded` tells its webhook: none when its row is
 * not its own (another run logged the delivery first, as our own failure) or when it is a
 * success with no failure to reset; else its own, with, for a failure, the webhook's latest
 * success when that ended after it. That success was logged first, found no failure to
 * reset, and told nothing: without it the count would keep a failure it reset.
 */
export function outcomesToTell(
  deliveryId: string,
  { delivered, endedAt }: Omit<TimedOutcome, 'deliveryId'>,
  { logged, failuresToReset, lastDeliveredAt }: RecordedDelivery,
): TimedOutcome[] {
  if (!logged || (delivered && !failuresToReset)) return [];
  const own = { deliveryId, delivered, endedAt };
  if (delivered || lastDeliveredAt === null || lastDeliveredAt <= endedAt) return [own];
  return [own, { delivered: true, endedAt: lastDeliveredAt }];
}

/**
 * One per worker process: the steps of its delivery activities, the claim, the log row and
 * the tell each a span of the delivery's trace, and each log row naming that trace.
 */
export function createDeliveryBookkeeping({
  bookkeepingSql,
  client,
  http,
  credentials,
  secrets,
  logger,
  metrics,
}: Pick<
  ActivityDependencies,
  'bookkeepingSql' | 'client' | 'http' | 'credentials' | 'secrets' | 'logger' | 'metrics'
>): DeliveryBookkeeping {
  const batcher = createDeliveryBatcher(bookkeepingSql);
  const outcomes = createOutcomeSignals(client);

  function countAttempt(entry: DeliveryEntry, { statusCode, error, durationMs, delivered }: DeliveryResult): void {
    const outcome = delivered ? 'delivered' : 'failed';
    if (entry.kind === 'event') {
      annotateSpan({ outcome });
      metrics.deliveries.inc({ topic: entry.event, outcome, error: error ?? 'none' });
      if (error !== 'internal') metrics.deliveryDuration.observe({ outcome }, durationMs / 1000);
      logger.info({ msg: 'delivery', ...eventLogFields(entry), outcome, statusCode, error, durationMs });
      return;
    }
    const { counter, msg } = UNCOUNTED_SENDS[entry.kind];
    metrics[counter].inc({ outcome, error: error ?? 'none' });
    logger.info({ msg, deliveryId: entry.id, webhookId: entry.webhookId, redeliveryOf: entry.redeliveryOf, statusCode, error, durationMs });
  }

  const bookkeeping: DeliveryBookkeeping = {
    claim: (claim) => inDatabaseSpan('claim delivery', () => batcher.claim(claim)),
    async send(target, entry, body) {
      const message = {
        url: target.url,
        webhookId: entry.webhookId,
        deliveryId: entry.id,
        event: entry.event,
        body,
        test: entry.kind === 'test',
      };
      const exchange = await postSigned(
        http,
        message,
        secrets.open(target.secret, entry.webhookId),
        target.credentials === null ? undefined : credentials.credentialsFor(entry.webhookId, target.credentials),
      );
      const endedAt = Date.now();
      const recorded = await bookkeeping.logAttempt(entry, { ...exchange, endedAt });
      return { result: exchange.result, endedAt, recorded };
    },
    logAttempt(entry, { result, request, response, ...ended }) {
      countAttempt(entry, result);
      const attemptedAt = 'endedAt' in ended ? ended.endedAt : undefined;
      return bookkeeping.record({ ...entry, result, request, response, attemptedAt });
    },
    record: (delivery) => {
      const bulk = delivery.kind === 'event' && isBulkTaskQueue(Context.current().info.taskQueue);
      return inDatabaseSpan('log delivery', () => batcher.record({ ...delivery, traceId: currentTraceId() }, { bulk }));
    },
    tellOutcomes: (webhookId, told) =>
      inSpan('tell webhook/{id}', { 'webhook.id': webhookId, outcome: told[0]?.delivered ? 'delivered' : 'failed' }, () =>
        outcomes.tell(webhookId, told),
      ),
  };
  return bookkeeping;
}

/**
 * How long the log row of a small write's event delivery waits for others before its statement
 * is sent. A statement's fixed cost in PostgreSQL is several times a row's, and its updates of
 * each webhook's counters, health hour and account meter are made once however many of the
 * webhook's rows it holds; so the rows of the writes that follow within this time share them.
 * At 20 writes/s of fan-out 10 that halves PostgreSQL's CPU per delivery against a wait of
 * 10 ms (docs/performance.md). The wait delays the end of the delivery's activity, and so
 * the count of a failure, not its POST: the claim, before the POST, hardly waits.
 */
export const LOG_ROWS_GATHER_MS = 250;

/**
 * How long the log row of a large write's delivery (the bulk task queue) waits: its write's
 * own deliveries, as many at once as the queue's slots (BULK_DELIVERIES_PER_WORKER), fill a
 * statement, and a longer wait would hold those few slots and slow the write.
 */
export const BULK_LOG_ROWS_GATHER_MS = 10;

/**
 * A batch of event deliveries' log rows this full goes without waiting out the rest of
 * LOG_ROWS_GATHER_MS: its statement's fixed cost is already shared, and the rows wait in
 * local activities, whose slots (100 a worker by default) would otherwise cap a worker at
 * about 100 deliveries per LOG_ROWS_GATHER_MS.
 */
export const LOG_ROWS_PER_STATEMENT = 50;

/**
 * How long a claim waits for others. A write's deliveries start as local activities of one
 * workflow task, a millisecond or so apart: without this the first went alone and the rest
 * in a second statement. It is the only wait before a POST.
 */
export const CLAIMS_GATHER_MS = 2;

/**
 * The claims and log rows of this process's deliveries, gathered into batches of one statement
 * each. The log rows of pings, test events, redeliveries and probes never wait: an owner, or a
 * recovery's pace, waits on each of the first three, and a probe's row, not written while it
 * waits, would be lost with its process (a probe run again is a new probe).
 */
export function createDeliveryBatcher(sql: Sql): DeliveryBatcher {
  const claims = batchedOneAtATime((batch: readonly DeliveryClaim[]) => claimDeliveries(sql, batch), { gatherMs: CLAIMS_GATHER_MS });
  const logRows = (options: { gatherMs: number; maxBatchSize?: number }) =>
    batchedOneAtATime((batch: readonly DeliveryRecord[]) => recordAskedDeliveries(sql, batch), options);
  const smallWriteRows = logRows({ gatherMs: LOG_ROWS_GATHER_MS, maxBatchSize: LOG_ROWS_PER_STATEMENT });
  const bulkRows = logRows({ gatherMs: BULK_LOG_ROWS_GATHER_MS });
  const onDemandRows = logRows({ gatherMs: 0 });
  return {
    claim: (claim) => claims.load(claim),
    record: (delivery, { bulk } = { bulk: false }) => {
      if (delivery.kind === 'event') return (bulk ? bulkRows : smallWriteRows).load(delivery);
      return onDemandRows.load(delivery);
    },
  };
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
  outcomes: TimedOutcome[];
  /** Settles each `tell` whose outcomes are in `outcomes`, one for one. */
  settlers: { resolve: () => void; reject: (error: unknown) => void }[];
}

/**
 * Tells `webhook/{id}` of delivery outcomes, batched per webhook as
 * `OUTCOME_SIGNAL_SPACING_MS` says, each signal's in the order the attempts ended (the order a
 * release before 0.8.0 counts them in). Each promise settles when the signal carrying its
 * outcomes has been accepted by Temporal, so a delivery is done only once its outcome is
 * durable.
 */
export function createOutcomeSignals(client: Client): OutcomeSignals {
  const pending = new Map<string, PendingOutcomes>();

  async function sendBatches(webhookId: string, batch: PendingOutcomes): Promise<void> {
    await Promise.resolve(); // outcomes told in the same turn join the first signal
    while (batch.outcomes.length > 0) {
      const outcomes = batch.outcomes.splice(0).sort((a, b) => a.endedAt - b.endedAt);
      const settlers = batch.settlers.splice(0);
      const sentAt = performance.now();
      try {
        await signalDeliveryOutcomes(client, webhookId, outcomes);
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
    tell(webhookId, outcomes) {
      let batch = pending.get(webhookId);
      if (batch === undefined) {
        batch = { outcomes: [], settlers: [] };
        pending.set(webhookId, batch);
        void sendBatches(webhookId, batch);
      }
      const joined = batch;
      return new Promise((resolve, reject) => {
        joined.outcomes.push(...outcomes);
        joined.settlers.push({ resolve, reject });
      });
    },
  };
}
