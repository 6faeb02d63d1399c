// A write larger than one batch, on the whole stack: delivered in full by child workflows,
// each delivery once; a small write starts none. The batch size is lowered by configuration.
import { expect, it } from 'vitest';
import { listWriteBatchWorkflowId, listWriteWorkflowId } from '../../src/contract/workflows';
import type { ListChange } from '../../src/objects';
import { TOPICS } from '../../src/topics';
import { useStackWithReceiver } from '../support/stack';

const DELIVERIES_PER_BATCH = 3;
const suite = useStackWithReceiver({ DELIVERIES_PER_BATCH: String(DELIVERIES_PER_BATCH) });

// Every change type that together fire all five topics.
const everyTopic: ListChange[] = [{ type: 'item.added' }, { type: 'item.removed' }, { type: 'item.checked' }, { type: 'list.updated' }];

it('delivers a write of several batches in full, each delivery once, through one child workflow per batch', async () => {
  const {
    owner,
    webhookId: answering,
    listId,
  } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/answers'), { events: [...TOPICS] });
  const failing = await suite.stack.registerWebhook(owner.token, suite.receiver.urlFor('/fails'), {
    events: ['item.added', 'list.changed'],
  });
  suite.receiver.respondWith((request) => (request.path === '/fails' ? { status: 500 } : {}));
  suite.receiver.requests.length = 0;
  await suite.stack.reportWrite(listId, 'several-batches', everyTopic);

  // 4 topics fired (not list.members.changed) to the first, 2 to the second: 6 deliveries, 2 batches.
  const expected = ['item.added', 'item.removed', 'item.checked', 'list.changed']
    .map((topic) => `/answers ${topic}`)
    .concat(['/fails item.added', '/fails list.changed'])
    .sort();
  expect(suite.receiver.requests.map((request) => `${request.path} ${String(request.headers['svc-event'])}`).sort()).toEqual(expected);
  expect(new Set(suite.receiver.requests.map((request) => request.headers['svc-delivery'])).size).toBe(expected.length);

  const client = suite.stack.service.client;
  for (const batch of [1, 2]) {
    const child = await client.workflow.getHandle(listWriteBatchWorkflowId(listId, 'several-batches', batch)).describe();
    expect(child.status.name).toBe('COMPLETED');
    expect(child.parentExecution?.workflowId).toBe(listWriteWorkflowId(listId, 'several-batches'));
  }
  await expect(client.workflow.getHandle(listWriteBatchWorkflowId(listId, 'several-batches', 3)).describe()).rejects.toThrow();

  // The receiver's failures are logged and counted as in any write.
  expect(await suite.stack.waitForFailureCount(owner.token, failing.id, 2)).toMatchObject({ status: 'active' });
  const log = await suite.stack.request('GET', `/v3/webhooks/${failing.id}/deliveries`, { token: owner.token });
  expect(log.body.data.map((entry: { outcome: string }) => entry.outcome)).toEqual(['failed', 'failed']);
  const answeredLog = await suite.stack.request('GET', `/v3/webhooks/${answering}/deliveries`, { token: owner.token });
  expect(answeredLog.body.data.filter((entry: { kind: string }) => entry.kind === 'event')).toHaveLength(4);
});

it('delivers a write of one batch or less itself, with no child workflow', async () => {
  const { listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/small'), { events: [...TOPICS] });
  suite.receiver.requests.length = 0;
  await suite.stack.reportWrite(listId, 'one-batch', [{ type: 'item.added' }]);
  expect(suite.receiver.requests.map((request) => request.headers['svc-event']).sort()).toEqual(['item.added', 'list.changed']);
  const history = await suite.stack.service.client.workflow.getHandle(listWriteWorkflowId(listId, 'one-batch')).fetchHistory();
  expect(history.events!.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(0);
});
