// The event deliveries of a list write: each one attempt, claimed before its POST, logged, and
// told to `webhook/{id}` when it can change the count; a relay session's outcomes are never
// told. The steps are the worker's delivery bookkeeping (activities/delivery-bookkeeping.ts).
import { ApplicationFailure } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import type { EventDelivery, EventDeliveryOutcome, ListEvent, PlannedDelivery } from '../src/contract/payloads';
import { DELIVERY_FAILED } from '../src/contract/rules';
import type { DeliveryTarget } from '../src/db/deliveries';
import { eventPayload } from '../src/delivery/message';
import type { DeliveryResult } from '../src/objects';
import { annotateSpan } from '../src/tracing/spans';
import { eventLogFields, INTERNAL_FAILURE, outcomesToTell, type DeliveryBookkeeping, type DeliveryEntry } from './delivery-bookkeeping';
import type { ActivityDependencies } from './dependencies';

/** An event delivery of a write, as the log says it. */
function eventEntry({ deliveryId: id, webhookId, topic }: PlannedDelivery, event: ListEvent): DeliveryEntry {
  return { id, webhookId, kind: 'event', event: topic, ...event };
}

/**
 * A failed event delivery, already logged and told: the receiver's failure or one of ours,
 * as `result.error` says. The SDK logs it at DEBUG, not as a worker warning.
 */
function deliveryFailed(entry: DeliveryEntry, result: DeliveryResult, detail: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: DELIVERY_FAILED,
    message: `delivery ${entry.id} to ${entry.webhookId} failed: ${result.error}${detail}`,
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN,
    details: [result],
  });
}

/** The activity's end: the result alone (what the receiver sent back stays in PostgreSQL, out of Temporal), or, without a 2xx, its failure. */
function ended(entry: DeliveryEntry, result: DeliveryResult): DeliveryResult {
  if (!result.delivered) throw deliveryFailed(entry, result, result.statusCode === null ? '' : ` (HTTP ${result.statusCode})`);
  return result;
}

export function createDeliveryActivities({ logger, metrics }: ActivityDependencies, bookkeeping: DeliveryBookkeeping) {
  /** A delivery not sent, its webhook paused or deleted since the write was accepted: counted in metrics and logs, never against the webhook. */
  function skip(entry: DeliveryEntry, reason: 'paused' | 'deleted'): EventDeliveryOutcome {
    metrics.deliveriesSkipped.inc({ reason });
    annotateSpan({ outcome: 'skipped' });
    logger.info({ msg: 'delivery skipped', reason, ...eventLogFields(entry) });
    return { skipped: true };
  }

  /** Paused (now, or when an earlier run claimed it): logged as skipped, never sent, never counted. */
  async function skipPaused(entry: DeliveryEntry): Promise<EventDeliveryOutcome> {
    await bookkeeping.record({ ...entry, result: 'skipped', request: null, response: null });
    return skip(entry, 'paused');
  }

  /**
   * Run again after its workflow task was retried (a worker died before this attempt's result
   * was recorded): the first run may have sent it, so this one sends nothing. Logged as
   * `internal` unless the first run logged its own outcome.
   */
  async function refuseRepeat(entry: DeliveryEntry): Promise<never> {
    await bookkeeping.logAttempt(entry, INTERNAL_FAILURE);
    throw deliveryFailed(entry, INTERNAL_FAILURE.result, ' (already attempted by an earlier run: nothing sent)');
  }

  /** To a receiver: told to `webhook/{id}` when it can change the count. */
  async function deliverToReceiver(target: DeliveryTarget, entry: DeliveryEntry, body: string): Promise<DeliveryResult> {
    // What to tell is read as the attempt is logged, after the POST (outcomesToTell).
    const { result, endedAt, recorded } = await bookkeeping.send(target, entry, body);
    const told = outcomesToTell(entry.id, { delivered: result.delivered, endedAt }, recorded);
    if (told.length > 0) await bookkeeping.tellOutcomes(entry.webhookId, told);
    return ended(entry, result);
  }

  /** To a relay session: logged, never told, since a session never pauses. */
  async function deliverToRelay(target: DeliveryTarget, entry: DeliveryEntry, body: string): Promise<DeliveryResult> {
    const { result } = await bookkeeping.send(target, entry, body);
    return ended(entry, result);
  }

  return {
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
      const entry = eventEntry(delivery, event);
      const target = await bookkeeping.claim({ webhookId: delivery.webhookId, deliveryId: delivery.deliveryId });
      // Deleted (since the write was accepted): it matches nothing, and nothing is logged.
      if (target === null) return skip(entry, 'deleted');
      if (!target.claimed) return target.skipped ? skipPaused(entry) : refuseRepeat(entry);
      if (target.status !== 'active') return skipPaused(entry);
      const body = eventPayload(delivery.topic, event.listId, event.cursor, event.at);
      if (target.relay) return deliverToRelay(target, entry, body);
      return deliverToReceiver(target, entry, body);
    },

    /** A delivery whose attempt was lost on our side (a worker died mid-way): logged as `internal`. */
    async recordInternalFailure({ delivery, event }: EventDelivery): Promise<void> {
      await bookkeeping.logAttempt(eventEntry(delivery, event), INTERNAL_FAILURE);
    },
  };
}
