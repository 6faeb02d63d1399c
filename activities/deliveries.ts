// The delivery activities: each one signed POST, claimed, logged and counted through the
// worker's delivery bookkeeping (activities/delivery-bookkeeping.ts).
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import type {
  AuditActor,
  EventDelivery,
  EventDeliveryOutcome,
  ListEvent,
  PlannedDelivery,
  Redelivery,
  TestEvent,
} from '../src/contract/payloads';
import { probeSendDelaysMs } from '../src/contract/probe-schedule';
import { DELIVERY_FAILED, WEBHOOK_GONE } from '../src/contract/rules';
import { isBulkTaskQueue } from '../src/contract/workflows';
import { findDeliveryTarget, type DeliveryRecord, type DeliveryTarget } from '../src/db/deliveries';
import type { DeliveryBookkeeping } from './delivery-bookkeeping';
import { eventPayload, pingPayload, postSigned } from '../src/delivery/message';
import type { HttpExchange } from '../src/delivery/sender';
import { newId } from '../src/ids';
import type { DeliveryResult } from '../src/objects';
import { annotateSpan } from '../src/tracing/spans';
import type { ActivityDependencies } from './dependencies';

/** The fields that name an event delivery in the logs. */
function describe(delivery: PlannedDelivery, event: ListEvent) {
  return {
    deliveryId: delivery.deliveryId,
    webhookId: delivery.webhookId,
    workflowId: Context.current().info.workflowExecution?.workflowId,
    topic: delivery.topic,
    listId: event.listId,
    cursor: event.cursor,
  };
}

/**
 * A failed event delivery, already logged and told: the receiver's failure or one of ours,
 * as `result.error` says. The SDK logs it at DEBUG, not as a worker warning.
 */
function deliveryFailed(delivery: PlannedDelivery, result: DeliveryResult, detail: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: DELIVERY_FAILED,
    message: `delivery ${delivery.deliveryId} to ${delivery.webhookId} failed: ${result.error}${detail}`,
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN,
    details: [result],
  });
}

/** An attempt lost or refused on our side: nothing known to be sent, nothing came back. */
export const INTERNAL_FAILURE = {
  result: { delivered: false, statusCode: null, durationMs: 0, error: 'internal' },
  request: null,
  response: null,
} as const satisfies Pick<DeliveryRecord, 'result' | 'request' | 'response'>;

/**
 * A ping, a redelivery or a test event, sent because an owner asked, or a probe of a webhook
 * paused by failures: never counted against the webhook.
 */
export type OnDemandDelivery = Omit<DeliveryRecord, 'result' | 'request' | 'response'> & {
  kind: 'ping' | 'redelivery' | 'test' | 'probe';
};

/** The metric and the log line of each kind of delivery sent on demand. */
const ON_DEMAND = {
  ping: { counter: 'pings', msg: 'ping' },
  redelivery: { counter: 'redeliveries', msg: 'redelivery' },
  test: { counter: 'testEvents', msg: 'test event' },
  probe: { counter: 'probes', msg: 'probe' },
} as const;

/**
 * A ping, redelivery, test event or probe, to `target`: one signed attempt, counted in metrics
 * and logged, never against the webhook. What was sent and what came back are logged with it.
 */
export async function sendOnDemandTo(
  { http, secrets, logger, metrics }: Pick<ActivityDependencies, 'http' | 'secrets' | 'logger' | 'metrics'>,
  bookkeeping: Pick<DeliveryBookkeeping, 'record'>,
  target: DeliveryTarget,
  delivery: OnDemandDelivery,
  body: string,
): Promise<DeliveryResult> {
  const { id: deliveryId, webhookId, kind } = delivery;
  const message = { url: target.url, webhookId, deliveryId, event: delivery.event, body, test: kind === 'test' };
  const exchange = await postSigned(http, message, secrets.open(target.secret, webhookId));
  const { result } = exchange;
  metrics[ON_DEMAND[kind].counter].inc({
    outcome: result.delivered ? 'delivered' : 'failed',
    error: result.error ?? 'none',
  });
  logger.info({
    msg: ON_DEMAND[kind].msg,
    deliveryId,
    webhookId,
    redeliveryOf: delivery.redeliveryOf,
    statusCode: result.statusCode,
    error: result.error,
    durationMs: result.durationMs,
  });
  await bookkeeping.record({ ...delivery, ...exchange });
  // The result alone: what the receiver sent back stays in PostgreSQL, out of Temporal.
  return result;
}

/** A ping's log row, under a new delivery id: an owner's ping or a probe. */
function pingOf(webhookId: string, kind: 'ping' | 'probe'): OnDemandDelivery {
  return { id: newId('dlv'), webhookId, kind, event: 'ping', listId: null, cursor: null, at: null };
}

/**
 * The delivery an owner asked for through /v3, with the audit log entry its log row is recorded
 * with; `actor` absent: asked of an API of the release before, recorded with none.
 */
function asked(
  delivery: OnDemandDelivery,
  actor: AuditActor | undefined,
  entry: Pick<NonNullable<OnDemandDelivery['audit']>, 'action' | 'target' | 'details'>,
): OnDemandDelivery {
  return { ...delivery, audit: { ...entry, actor: actor ?? null } };
}

export function createDeliveryActivities({ sql, http, secrets, logger, metrics }: ActivityDependencies, bookkeeping: DeliveryBookkeeping) {
  /** The log row of an event delivery of a write: what it came to, and what was sent and came back. */
  function eventRecord(
    delivery: PlannedDelivery,
    event: ListEvent,
    attempt: Pick<DeliveryRecord, 'result' | 'request' | 'response'>,
  ): DeliveryRecord {
    const { deliveryId: id, webhookId, topic } = delivery;
    return { id, webhookId, kind: 'event', event: topic, ...event, ...attempt };
  }

  /** One log line, metrics and a log row per event delivery attempt. */
  async function recordEventAttempt(
    delivery: PlannedDelivery,
    event: ListEvent,
    attempt: HttpExchange | typeof INTERNAL_FAILURE,
  ): Promise<{ failuresToReset: boolean }> {
    const { result } = attempt;
    const outcome = result.delivered ? 'delivered' : 'failed';
    annotateSpan({ outcome });
    metrics.deliveries.inc({ topic: delivery.topic, outcome, error: result.error ?? 'none' });
    if (result.error !== 'internal') metrics.deliveryDuration.observe({ outcome }, result.durationMs / 1000);
    logger.info({
      msg: 'delivery',
      ...describe(delivery, event),
      outcome,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
    });
    return recordEvent(eventRecord(delivery, event, attempt));
  }

  /** An event delivery's log row, gathered as its write's task queue allows (createDeliveryBatcher). */
  function recordEvent(record: DeliveryRecord): Promise<{ failuresToReset: boolean }> {
    return bookkeeping.record(record, { bulk: isBulkTaskQueue(Context.current().info.taskQueue) });
  }

  /** A ping, redelivery or test event an owner asked for, to the webhook as it is now. */
  async function sendOnDemand(delivery: OnDemandDelivery, body: string): Promise<DeliveryResult> {
    const target = await findDeliveryTarget(sql, delivery.webhookId);
    if (target === null) throw ApplicationFailure.nonRetryable(`webhook ${delivery.webhookId} no longer exists`, WEBHOOK_GONE);
    return sendOnDemandTo({ http, secrets, logger, metrics }, bookkeeping, target, delivery, body);
  }

  /** A delivery not sent, its webhook paused or deleted since the write was accepted: counted in metrics and logs, never against the webhook. */
  function skip(delivery: PlannedDelivery, event: ListEvent, reason: 'paused' | 'deleted'): EventDeliveryOutcome {
    metrics.deliveriesSkipped.inc({ reason });
    annotateSpan({ outcome: 'skipped' });
    logger.info({ msg: 'delivery skipped', reason, ...describe(delivery, event) });
    return { skipped: true };
  }

  return {
    /** POST /v3/webhooks/{id}/pings: one signed ping, logged with its audit log entry, never counted. */
    sendPing(webhookId: string, actor?: AuditActor): Promise<DeliveryResult> {
      const ping = pingOf(webhookId, 'ping');
      const entry = { action: 'webhook.pinged', target: { type: 'webhook', id: webhookId }, details: { deliveryId: ping.id } } as const;
      return sendOnDemand(asked(ping, actor, entry), pingPayload(webhookId));
    },

    /**
     * Probes of webhooks paused by failures, leaving one after another over `spreadMs`: a
     * ping's body and headers each, to the webhook as it is when its probe leaves, logged as
     * `probe`, never counted. A webhook reactivated or deleted since the wake gets none; that,
     * or a probe that fails on our side, is one not answered.
     */
    async probeWebhooks(webhookIds: string[], spreadMs = 0): Promise<boolean[]> {
      const context = Context.current();
      const delaysMs = probeSendDelaysMs(webhookIds.length, spreadMs);
      const probe = async (webhookId: string): Promise<boolean> => {
        const target = await findDeliveryTarget(sql, webhookId);
        if (target?.status !== 'paused') {
          logger.info({ msg: 'probe not sent', webhookId, reason: target ? `webhook ${target.status}` : 'webhook deleted' });
          return false;
        }
        const result = await sendOnDemandTo(
          { http, secrets, logger, metrics },
          bookkeeping,
          target,
          pingOf(webhookId, 'probe'),
          pingPayload(webhookId),
        );
        return result.delivered;
      };
      return Promise.all(
        webhookIds.map(async (webhookId, i) => {
          if (delaysMs[i] > 0) await context.sleep(delaysMs[i]);
          return probe(webhookId).catch((error: unknown) => {
            logger.warn({ msg: 'probe not sent', webhookId, error: String(error) });
            return false;
          });
        }),
      );
    },

    /**
     * POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries: the logged event's body
     * again, byte for byte, signed with the current secret; logged, never counted. It goes
     * to a paused webhook too: its owner asked for it.
     */
    redeliverEvent({ webhookId, deliveryId, redeliveryOf, topic, event, actor }: Redelivery): Promise<DeliveryResult> {
      const redelivery = { id: deliveryId, webhookId, kind: 'redelivery', event: topic, ...event, redeliveryOf } as const;
      const entry = {
        action: 'delivery.redelivered',
        target: { type: 'delivery', id: redeliveryOf },
        details: { webhookId, deliveryId },
      } as const;
      return sendOnDemand(asked(redelivery, actor, entry), eventPayload(topic, event.listId, event.cursor, event.at));
    },

    /**
     * POST /v3/webhooks/{id}/test-events: one delivery of the topic the owner chose, with the
     * `SVC-Test` header; logged as `test`, never counted. It goes to a paused webhook too.
     */
    sendTestEvent({ webhookId, deliveryId, topic, event, actor }: TestEvent): Promise<DeliveryResult> {
      const testEvent = { id: deliveryId, webhookId, kind: 'test', event: topic, ...event } as const;
      const details = { deliveryId, event: topic, listId: event.listId };
      const entry = { action: 'webhook.test_event_sent', target: { type: 'webhook', id: webhookId }, details } as const;
      return sendOnDemand(asked(testEvent, actor, entry), eventPayload(topic, event.listId, event.cursor, event.at));
    },

    /**
     * One event delivery: a single attempt (the workflow never retries it), claimed in
     * PostgreSQL before the POST, logged, and told to `webhook/{id}` when it can change the
     * count. One that gets no 2xx fails the activity with its class, so the Temporal UI
     * shows it.
     */
    async deliverEvent({ delivery, event }: EventDelivery): Promise<EventDeliveryOutcome> {
      annotateSpan({
        'webhook.id': delivery.webhookId,
        'delivery.id': delivery.deliveryId,
        event: delivery.topic,
        'list.id': event.listId,
        cursor: event.cursor,
      });
      const target = await bookkeeping.claim({ webhookId: delivery.webhookId, deliveryId: delivery.deliveryId });
      // Deleted (since the write was accepted): it matches nothing, and nothing is logged.
      if (target === null) return skip(delivery, event, 'deleted');
      // Run again after its workflow task was retried (a worker died before this attempt's
      // result was recorded): the first run may have sent it, so this one sends nothing.
      // Logged as `internal` unless the first run logged its own outcome.
      if (!target.claimed) {
        await recordEventAttempt(delivery, event, INTERNAL_FAILURE);
        throw deliveryFailed(delivery, INTERNAL_FAILURE.result, ' (already attempted by an earlier run: nothing sent)');
      }
      // Paused: logged as skipped, never sent, never counted.
      if (target.status !== 'active') {
        await recordEvent(eventRecord(delivery, event, { result: 'skipped', request: null, response: null }));
        return skip(delivery, event, 'paused');
      }
      const body = eventPayload(delivery.topic, event.listId, event.cursor, event.at);
      const message = { url: target.url, webhookId: delivery.webhookId, deliveryId: delivery.deliveryId, event: delivery.topic, body };
      const exchange = await postSigned(http, message, secrets.open(target.secret, delivery.webhookId));
      const { result } = exchange;
      // Read as the attempt is logged, after the POST: a failure reported before then is
      // one this success comes after, and so resets. A success that resets nothing would
      // only wake the webhook's workflow for nothing.
      const { failuresToReset } = await recordEventAttempt(delivery, event, exchange);
      // A relay session never pauses: its outcomes are not counted.
      if (!target.relay && (!result.delivered || failuresToReset)) {
        await bookkeeping.tellOutcome(delivery.webhookId, result.delivered);
      }
      if (!result.delivered) throw deliveryFailed(delivery, result, result.statusCode === null ? '' : ` (HTTP ${result.statusCode})`);
      // The result alone: what the receiver sent back stays in PostgreSQL, out of Temporal.
      return result;
    },

    /** A delivery whose attempt was lost on our side (a worker died mid-way): logged as `internal`. */
    async recordInternalFailure({ delivery, event }: EventDelivery): Promise<void> {
      await recordEventAttempt(delivery, event, INTERNAL_FAILURE);
    },
  };
}
