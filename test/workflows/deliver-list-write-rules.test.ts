// How `list-write/{listId}/{writeId}` tells a receiver's failure from our own, on the real
// workflow code with activities the test passes: every planned delivery is attempted once;
// a receiver's failure is left as the activity logged it; anything else (our code failing,
// a worker lost mid-delivery so the activity times out) is recorded as `internal`.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DELIVERY_FAILED } from '../../src/contract/rules';
import { TOPICS } from '../../src/topics';
import type { DeliveryResult } from '../../src/objects';
import type { EventDeliveryOutcome, ListEvent, PlannedDelivery, Recipient } from '../../src/contract/payloads';
import { deliverListWrite } from '../../workflows';
import { startWorkflowWorker, type WorkflowWorker } from './support/worker';

const attempted: PlannedDelivery[] = [];
const recordedInternal: PlannedDelivery[] = [];
const delivered: DeliveryResult = { delivered: true, statusCode: 200, durationMs: 1, error: null };

/** What each webhook's receiver, or our side, does with a delivery. */
const behaviour: Record<string, () => Promise<EventDeliveryOutcome>> = {
  wh_answers_2xx: async () => delivered,
  wh_paused_since: async () => ({ skipped: true }),
  wh_answers_500: async () => {
    throw ApplicationFailure.create({ type: DELIVERY_FAILED, message: 'HTTP 500', nonRetryable: true });
  },
  wh_hits_our_bug: async () => {
    throw new TypeError('a bug of ours');
  },
  // As if the worker had died mid-POST: the activity never completes and times out.
  wh_lost_worker: () => Context.current().cancelled,
};

let worker: WorkflowWorker;
beforeAll(async () => {
  worker = await startWorkflowWorker({
    async deliverEvent({ delivery }: { delivery: PlannedDelivery; event: ListEvent }) {
      attempted.push(delivery);
      return behaviour[delivery.webhookId]();
    },
    async recordInternalFailure({ delivery }: { delivery: PlannedDelivery; event: ListEvent }) {
      recordedInternal.push(delivery);
    },
  });
});
afterAll(() => worker?.stop());

it('attempts every delivery once and records only our own failures as internal', async () => {
  const recipients: Recipient[] = Object.keys(behaviour).map((webhookId) => ({ webhookId, topics: ['item.added', 'list.changed'] }));
  const write = { listId: 'list-rules', writeId: 'split', cursor: 7, at: new Date().toISOString(), topics: [...TOPICS] };
  await worker.client.workflow.execute(deliverListWrite, {
    taskQueue: worker.taskQueue,
    workflowId: `list-write/${write.listId}/${write.writeId}`,
    // The shortest delivery deadline, so the lost delivery's activity times out soon.
    args: [{ write, recipients, deliveryTimeoutMs: 100 }],
  });

  const pairs = (deliveries: PlannedDelivery[]) => deliveries.map(({ webhookId, topic }) => `${webhookId} ${topic}`).sort();
  expect(pairs(attempted)).toEqual(recipients.flatMap(({ webhookId, topics }) => topics.map((topic) => `${webhookId} ${topic}`)).sort());
  expect(new Set(attempted.map((delivery) => delivery.deliveryId)).size).toBe(attempted.length);
  expect(attempted.every((delivery) => /^dlv_[0-9a-f]{24}$/.test(delivery.deliveryId))).toBe(true);
  expect(pairs(recordedInternal)).toEqual([
    'wh_hits_our_bug item.added',
    'wh_hits_our_bug list.changed',
    'wh_lost_worker item.added',
    'wh_lost_worker list.changed',
  ]);
  // Recorded under the ids the attempts had, so the log shows one row per delivery.
  const attemptedIds = new Set(attempted.map((delivery) => delivery.deliveryId));
  expect(recordedInternal.every((delivery) => attemptedIds.has(delivery.deliveryId))).toBe(true);
});
