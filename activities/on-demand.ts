// The sends an owner asks for through /v3: a ping, a test event, a redelivery. Each is one
// signed POST to the webhook as it is now, paused or not (its owner asked), logged with the
// audit log entry of who asked, and never counted against the webhook; its result is what the
// receiver answered. The steps are the worker's delivery bookkeeping (delivery-bookkeeping.ts).
import { ApplicationFailure } from '@temporalio/activity';
import type { AuditActor, Redelivery, TestEvent } from '../src/contract/payloads';
import { WEBHOOK_GONE } from '../src/contract/rules';
import { findDeliveryTarget } from '../src/db/deliveries';
import { eventPayload, pingPayload } from '../src/delivery/message';
import type { DeliveryResult } from '../src/objects';
import { pingEntry, type DeliveryBookkeeping, type DeliveryEntry } from './delivery-bookkeeping';
import type { ActivityDependencies } from './dependencies';

/** The audit log entry of a send an owner asked for, without who asked. */
type AskedFor = Pick<NonNullable<DeliveryEntry['audit']>, 'action' | 'target' | 'details'>;

export function createOnDemandActivities({ sql }: ActivityDependencies, bookkeeping: DeliveryBookkeeping) {
  /**
   * To the webhook as it is now, logged with its audit log entry; `actor` absent: asked of an
   * API of the release before, recorded with none.
   */
  async function sendAsked(entry: DeliveryEntry, body: string, askedFor: AskedFor, actor: AuditActor | undefined): Promise<DeliveryResult> {
    const target = await findDeliveryTarget(sql, entry.webhookId);
    if (target === null) throw ApplicationFailure.nonRetryable(`webhook ${entry.webhookId} no longer exists`, WEBHOOK_GONE);
    const { result } = await bookkeeping.send(target, { ...entry, audit: { ...askedFor, actor: actor ?? null } }, body);
    // The result alone: what the receiver sent back stays in PostgreSQL, out of Temporal.
    return result;
  }

  return {
    /** POST /v3/webhooks/{id}/pings: one signed ping. */
    sendPing(webhookId: string, actor?: AuditActor): Promise<DeliveryResult> {
      const ping = pingEntry(webhookId, 'ping');
      const askedFor = { action: 'webhook.pinged', target: { type: 'webhook', id: webhookId }, details: { deliveryId: ping.id } } as const;
      return sendAsked(ping, pingPayload(webhookId), askedFor, actor);
    },

    /**
     * POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries: the logged event's body
     * again, byte for byte, signed with the current secret.
     */
    redeliverEvent({ webhookId, deliveryId, redeliveryOf, topic, event, actor }: Redelivery): Promise<DeliveryResult> {
      const redelivery = { id: deliveryId, webhookId, kind: 'redelivery', event: topic, ...event, redeliveryOf } as const;
      const askedFor = {
        action: 'delivery.redelivered',
        target: { type: 'delivery', id: redeliveryOf },
        details: { webhookId, deliveryId },
      } as const;
      return sendAsked(redelivery, eventPayload(topic, event.listId, event.cursor, event.at), askedFor, actor);
    },

    /** POST /v3/webhooks/{id}/test-events: one delivery of the topic the owner chose, with the `SVC-Test` header; logged as `test`. */
    deliverTestEvent({ webhookId, deliveryId, topic, event, actor }: TestEvent): Promise<DeliveryResult> {
      const testEvent = { id: deliveryId, webhookId, kind: 'test', event: topic, ...event } as const;
      const details = { deliveryId, event: topic, listId: event.listId };
      const askedFor = { action: 'webhook.test_event_sent', target: { type: 'webhook', id: webhookId }, details } as const;
      return sendAsked(testEvent, eventPayload(topic, event.listId, event.cursor, event.at), askedFor, actor);
    },
  };
}
