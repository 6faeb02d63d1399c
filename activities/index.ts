import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailureCategory } from '@temporalio/common';
import type { DeliveryRecord } from '../src/db/deliveries';
import { createDeliveryBatcher } from '../src/db/delivery-batcher';
import { deleteRecordsOlderThan, type Pruned } from '../src/db/retention';
import { claimRegistrationPing, markRegistrationUnreachable, storeRegisteredWebhook } from '../src/db/registrations';
import type { Sql } from '../src/db/sql';
import { deleteWebhookRow, findDeliveryTarget, mirrorWebhookState } from '../src/db/webhooks';
import { eventPayload, pingPayload } from '../src/delivery/payloads';
import { postSigned } from '../src/delivery/post-signed';
import type { HttpSender } from '../src/delivery/sender';
import { newId } from '../src/ids';
import { createOutcomeSignals, startWebhookLifecycle } from '../src/temporal/lifecycle-client';
import type { Logger } from '../src/logger';
import type { Metrics } from '../src/metrics';
import {
  DELIVERY_FAILED,
  type DeliveryResult,
  type EventDeliveryOutcome,
  type ListEvent,
  type PlannedDelivery,
  type Redelivery,
  type RegistrationInput,
  type RegistrationResult,
  type WebhookLifecycleState,
} from '../src/types';

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

export interface ActivityDependencies {
  sql: Sql;
  http: HttpSender;
  logger: Logger;
  /** The process's metrics (`GET /metrics`). */
  metrics: Metrics;
  /** The worker's Temporal client, to start and signal `webhook/{id}`. */
  client: Client;
}

/**
 * Every side effect of the workflows. Secrets are read here, from PostgreSQL, and never
 * returned: nothing an activity takes or gives may hold one.
 */
export function createActivities({ sql, http, logger, metrics, client }: ActivityDependencies) {
  const outcomeSignals = createOutcomeSignals(client);
  const deliveries = createDeliveryBatcher(sql);

  /** One log line, metrics and a log row per event delivery attempt. */
  async function recordEventAttempt(
    delivery: PlannedDelivery,
    event: ListEvent,
    result: DeliveryResult,
  ): Promise<{ failuresToReset: boolean }> {
    const outcome = result.delivered ? 'delivered' : 'failed';
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
    return deliveries.record({
      id: delivery.deliveryId,
      webhookId: delivery.webhookId,
      kind: 'event',
      event: delivery.topic,
      listId: event.listId,
      cursor: event.cursor,
      at: event.at,
      result,
    });
  }

  /** A ping or redelivery an owner asked for: one signed attempt, counted in metrics and logged, never against the webhook. */
  async function sendOnDemand(
    delivery: Omit<DeliveryRecord, 'result'> & { kind: 'ping' | 'redelivery' },
    body: string,
  ): Promise<DeliveryResult> {
    const { id: deliveryId, webhookId, kind } = delivery;
    const target = await findDeliveryTarget(sql, webhookId);
    if (target === null) throw ApplicationFailure.nonRetryable(`webhook ${webhookId} no longer exists`, 'WebhookGone');
    const result = await postSigned(http, { url: target.url, webhookId, deliveryId, event: delivery.event, body }, target.secret);
    (kind === 'ping' ? metrics.pings : metrics.redeliveries).inc({
      outcome: result.delivered ? 'delivered' : 'failed',
      error: result.error ?? 'none',
    });
    logger.info({
      msg: kind,
      deliveryId,
      webhookId,
      redeliveryOf: delivery.redeliveryOf,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
    });
    await deliveries.record({ ...delivery, result });
    return result;
  }

  return {
    /**
     * The registration's ping: one attempt, claimed in PostgreSQL before the POST. A run
     * that finds the claim taken (its workflow task was retried after a worker died) sends
     * nothing and fails the registration as ours, not the receiver's.
     */
    async pingRegistrationUrl(request: { registrationId: string; webhookId: string; url: string }): Promise<DeliveryResult> {
      const claim = await claimRegistrationPing(sql, request.registrationId);
      if (!claim?.secret) {
        throw ApplicationFailure.nonRetryable(`registration ${request.registrationId} is no longer pending`);
      }
      if (!claim.claimed) {
        throw ApplicationFailure.nonRetryable(
          `registration ${request.registrationId}: ping already attempted by an earlier run: nothing sent`,
        );
      }
      const message = {
        url: request.url,
        webhookId: request.webhookId,
        deliveryId: newId('dlv'),
        event: 'ping',
        body: pingPayload(request.webhookId),
      };
      return postSigned(http, message, claim.secret);
    },

    abandonRegistration(registrationId: string): Promise<void> {
      return markRegistrationUnreachable(sql, registrationId);
    },

    /** Stores the pinged webhook and starts its `webhook/{id}`; a retry answers as the first attempt did. */
    async completeRegistration(input: RegistrationInput): Promise<RegistrationResult> {
      const result = await storeRegisteredWebhook(sql, input);
      if (result.outcome === 'created' || result.outcome === 'updated') {
        await startWebhookLifecycle(client, Context.current().info.taskQueue, result.webhook.id, input.accountId);
      }
      return result;
    },

    /** POST /v3/webhooks/{id}/pings: one signed ping, logged, never counted. */
    sendPing(webhookId: string): Promise<DeliveryResult> {
      const ping = { id: newId('dlv'), webhookId, kind: 'ping', event: 'ping', listId: null, cursor: null, at: null } as const;
      return sendOnDemand(ping, pingPayload(webhookId));
    },

    /**
     * POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries: the logged event's body
     * again, byte for byte, signed with the current secret; logged, never counted. It goes
     * to a paused webhook too: its owner asked for it.
     */
    redeliverEvent({ webhookId, deliveryId, redeliveryOf, topic, event }: Redelivery): Promise<DeliveryResult> {
      const redelivery = { id: deliveryId, webhookId, kind: 'redelivery', event: topic, ...event, redeliveryOf } as const;
      return sendOnDemand(redelivery, eventPayload(topic, event.listId, event.cursor, event.at));
    },

    /**
     * One event delivery: a single attempt (the workflow never retries it), claimed in
     * PostgreSQL before the POST, logged, and told to `webhook/{id}` when it can change the
     * count. One that gets no 2xx fails the activity with its class, so the Temporal UI
     * shows it.
     */
    async deliverEvent({ delivery, event }: { delivery: PlannedDelivery; event: ListEvent }): Promise<EventDeliveryOutcome> {
      const target = await deliveries.claim({ webhookId: delivery.webhookId, deliveryId: delivery.deliveryId });
      // Paused or deleted since the write was accepted: nothing is sent, nothing counted.
      if (target === null || target.status !== 'active') {
        const reason = target === null ? 'deleted' : 'paused';
        metrics.deliveriesSkipped.inc({ reason });
        logger.info({ msg: 'delivery skipped', reason, ...describe(delivery, event) });
        return { skipped: true };
      }
      // Run again after its workflow task was retried (a worker died before this attempt's
      // result was recorded): the first run may have sent it, so this one sends nothing.
      // Logged as `internal` unless the first run logged its own outcome.
      if (!target.claimed) {
        const result: DeliveryResult = { delivered: false, statusCode: null, durationMs: 0, error: 'internal' };
        await recordEventAttempt(delivery, event, result);
        throw deliveryFailed(delivery, result, ' (already attempted by an earlier run: nothing sent)');
      }
      const body = eventPayload(delivery.topic, event.listId, event.cursor, event.at);
      const message = { url: target.url, webhookId: delivery.webhookId, deliveryId: delivery.deliveryId, event: delivery.topic, body };
      const result = await postSigned(http, message, target.secret);
      // Read as the attempt is logged, after the POST: a failure reported before then is
      // one this success comes after, and so resets. A success that resets nothing would
      // only wake the webhook's workflow for nothing.
      const { failuresToReset } = await recordEventAttempt(delivery, event, result);
      if (!result.delivered || failuresToReset) {
        await outcomeSignals.tell(delivery.webhookId, result.delivered);
      }
      if (!result.delivered) throw deliveryFailed(delivery, result, result.statusCode === null ? '' : ` (HTTP ${result.statusCode})`);
      return result;
    },

    /** A delivery whose attempt was lost on our side (a worker died mid-way): logged as `internal`. */
    async recordInternalFailure({ delivery, event }: { delivery: PlannedDelivery; event: ListEvent }): Promise<void> {
      await recordEventAttempt(delivery, event, { delivered: false, statusCode: null, durationMs: 0, error: 'internal' });
    },

    async storeWebhookState(state: WebhookLifecycleState): Promise<void> {
      const { paused } = await mirrorWebhookState(sql, state);
      if (paused) {
        metrics.webhooksPaused.inc({ reason: state.pausedReason ?? 'manual' });
        logger.info({
          msg: 'webhook paused',
          webhookId: state.webhookId,
          reason: state.pausedReason,
          consecutiveFailures: state.consecutiveFailures,
        });
      }
    },

    deleteWebhook(webhookId: string): Promise<void> {
      return deleteWebhookRow(sql, webhookId);
    },

    async pruneRecords(retentionDays: number): Promise<Pruned> {
      const pruned = await deleteRecordsOlderThan(sql, retentionDays);
      logger.info({ msg: 'records pruned', retentionDays, ...pruned });
      return pruned;
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
