// Which task queue each kind of work runs on: a large write (its batches with it) and a
// recovery on the bulk task queue, served by a worker with slots of its own; a small write on
// the main one. On the real stack, with the queues read back from Temporal.
import { expect, it } from 'vitest';
import { bulkTaskQueue, listWriteBatchWorkflowId, listWriteWorkflowId, recoveryWorkflowId } from '../../src/contract/workflows';
import { LARGE_WRITE_DELIVERIES } from '../../src/temporal/client';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../../src/limits';
import { TOPICS } from '../../src/topics';
import { insertFailedEvents } from '../../scripts/lib/failed-deliveries';
import { useStackWithReceiver } from '../support/stack';

const DELIVERIES_PER_BATCH = 50;
const suite = useStackWithReceiver({ DELIVERIES_PER_BATCH: String(DELIVERIES_PER_BATCH) });

const taskQueueOf = async (workflowId: string) => (await suite.stack.service.client.workflow.getHandle(workflowId).describe()).taskQueue;

it(`runs a write of more than ${LARGE_WRITE_DELIVERIES} deliveries and its batches on the bulk task queue, and delivers each once`, async () => {
  const { stack, receiver } = suite;
  // An owner and 4 members, each with 5 webhooks on every topic: a write firing every topic
  // makes 5 × 5 × 5 = 125 deliveries, in 3 batches of at most 50.
  const accounts = await Promise.all(Array.from({ length: 5 }, () => stack.createAccount()));
  const [owner, ...members] = accounts;
  const listId = `large-${Date.now()}`;
  await stack.putList(
    listId,
    owner.id,
    members.map((member) => member.id),
  );
  for (const [a, account] of accounts.entries()) {
    for (let w = 0; w < MAX_WEBHOOKS_PER_ACCOUNT; w++) {
      await stack.registerWebhook(account.token, receiver.urlFor(`/large/a${a}/w${w}`), { events: [...TOPICS] });
    }
  }
  const expected = accounts.length * MAX_WEBHOOKS_PER_ACCOUNT * TOPICS.length;
  expect(expected).toBeGreaterThan(LARGE_WRITE_DELIVERIES);

  await stack.reportWrite(listId, 'large', [
    { type: 'item.added' },
    { type: 'item.removed' },
    { type: 'item.checked' },
    { type: 'member.joined', accountId: members[0].id },
  ]);

  expect(await taskQueueOf(listWriteWorkflowId(listId, 'large'))).toBe(bulkTaskQueue(stack.taskQueue));
  expect(await taskQueueOf(listWriteBatchWorkflowId(listId, 'large', 3))).toBe(bulkTaskQueue(stack.taskQueue));
  const deliveryIds = receiver.requests
    .filter((request) => request.path.startsWith('/large/') && request.headers['svc-event'] !== 'ping')
    .map((request) => request.headers['svc-delivery']);
  expect(deliveryIds).toHaveLength(expected);
  expect(new Set(deliveryIds).size).toBe(expected);
});

it('runs a one-delivery write on the main task queue', async () => {
  const { stack, receiver } = suite;
  const { listId } = await stack.setUpListWebhook(receiver.urlFor('/small'));
  await stack.reportWrite(listId, 'small');
  expect(await taskQueueOf(listWriteWorkflowId(listId, 'small'))).toBe(stack.taskQueue);
  expect(receiver.requests.filter((request) => request.path === '/small' && request.headers['svc-event'] !== 'ping')).toHaveLength(1);
});

it('runs a recovery on the bulk task queue', async () => {
  const { stack, receiver } = suite;
  const { owner, webhookId } = await stack.setUpListWebhook(receiver.urlFor('/recovered'));
  const since = new Date(Date.now() - 60_000).toISOString();
  await insertFailedEvents(stack.service.sql, webhookId, `missed-${Date.now()}`, 3);
  const started = await stack.request('POST', `/v3/webhooks/${webhookId}/recoveries`, { token: owner.token, body: { since } });
  expect(started.status).toBe(202);
  const workflowId = recoveryWorkflowId(webhookId, started.body.id);
  await stack.service.client.workflow.getHandle(workflowId).result();
  expect(await taskQueueOf(workflowId)).toBe(bulkTaskQueue(stack.taskQueue));
  expect(receiver.requests.filter((request) => request.path === '/recovered' && request.headers['svc-event'] !== 'ping')).toHaveLength(3);
});
