// The contract's largest write: one list of 1,001 accounts (an owner and 1,000 members),
// each with 5 webhooks on every topic, and one write that fires all 5 topics: 25,025
// deliveries to HTTPS receivers on loopback. Every one arrives once; no history of the
// write nears Temporal's limits.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_DELIVERIES_PER_BATCH } from '../../src/contract/rules';
import { listWriteBatchWorkflowId, listWriteWorkflowId } from '../../src/contract/workflows';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../../src/limits';
import { TOPICS } from '../../src/topics';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';
import { recordScenario } from './support/scenarios';

const MEMBERS = 1000;
const EXPECTED_DELIVERIES = (MEMBERS + 1) * MAX_WEBHOOKS_PER_ACCOUNT * TOPICS.length;
/** Far below the 51,200 events at which Temporal ends a history. */
const EVENTS_PER_HISTORY_BOUND = 10_000;

let stack: TestStack;
let receiver: Receiver;
beforeAll(async () => {
  stack = await startTestStack({ DELIVERY_TIMEOUT_MS: '10000' });
  receiver = await stack.startReceiver();
});
afterAll(() => stack?.stop());

/** Runs `task` over `items`, `concurrency` at a time. */
async function inPool<T, R>(items: T[], concurrency: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]);
      }
    }),
  );
  return results;
}

it(`delivers a write of ${EXPECTED_DELIVERIES} deliveries in full, each once`, { timeout: 30 * 60_000 }, async ({ task }) => {
  const row = recordScenario(task, { scenario: `largest write: ${EXPECTED_DELIVERIES} deliveries`, writesAccepted: 0, writesLost: 0 });
  const setUpStarted = performance.now();
  const accounts = await inPool(
    Array.from({ length: MEMBERS + 1 }, (_, i) => i),
    16,
    () => stack.createAccount(),
  );
  const [owner, ...members] = accounts;
  const listId = `largest-${Date.now()}`;
  expect(
    (
      await stack.putList(
        listId,
        owner.id,
        members.map((member) => member.id),
      )
    ).status,
  ).toBe(201);
  const registrations = accounts.flatMap((account, a) =>
    Array.from({ length: MAX_WEBHOOKS_PER_ACCOUNT }, (_, w) => ({ account, path: `/a${a}/w${w}` })),
  );
  const webhooks = await inPool(registrations, 16, ({ account, path }) =>
    stack.registerWebhook(account.token, receiver.urlFor(path), { events: [...TOPICS] }),
  );
  const setUpSeconds = Math.round((performance.now() - setUpStarted) / 1000);
  receiver.requests.length = 0;

  const started = performance.now();
  const accepted = await stack.reportWrite(listId, 'largest', [
    { type: 'item.added' },
    { type: 'item.removed' },
    { type: 'item.checked' },
    { type: 'member.joined', accountId: members[0].id },
  ]);
  row.durationMs = Math.round(performance.now() - started);
  row.writesAccepted = 1;
  expect(accepted.topics.sort()).toEqual([...TOPICS].sort());

  const received = receiver.requests.filter((request) => JSON.parse(request.rawBody.toString('utf8')).cursor === accepted.cursor);
  const receivedKeys = received.map((request) => `${String(request.headers['svc-webhook'])} ${String(request.headers['svc-event'])}`);
  const failedRows = await stack.service.sql<{ key: string }[]>`
    SELECT webhook_id || ' ' || event AS key FROM deliveries WHERE list_id = ${listId} AND cursor = ${accepted.cursor} AND outcome = 'failed'`;
  const expected = webhooks.flatMap((webhook) => TOPICS.map((topic) => `${webhook.id} ${topic}`));
  const arrived = new Set([...receivedKeys, ...failedRows.map((failed) => failed.key)]);
  const lost = expected.filter((key) => !arrived.has(key));
  const duplicated =
    received.length -
    new Set(received.map((request) => request.headers['svc-delivery'])).size +
    (receivedKeys.length - new Set(receivedKeys).size);
  row.requests = received.length;
  row.writesLost = lost.length > 0 ? 1 : 0;
  row.note = `received ${received.length}, failed ${failedRows.length}, lost ${lost.length}, duplicated ${duplicated}; set-up (1,001 accounts, 5,005 webhooks) ${setUpSeconds} s`;

  expect(expected).toHaveLength(EXPECTED_DELIVERIES);
  expect(lost).toEqual([]);
  expect(duplicated).toBe(0);
  expect(received.length + failedRows.length).toBe(EXPECTED_DELIVERIES);

  const client = stack.service.client;
  const batches = Math.ceil(EXPECTED_DELIVERIES / DEFAULT_DELIVERIES_PER_BATCH);
  const histories = [
    await client.workflow.getHandle(listWriteWorkflowId(listId, 'largest')).fetchHistory(),
    ...(await inPool(
      Array.from({ length: batches }, (_, i) => i + 1),
      8,
      (batch) => client.workflow.getHandle(listWriteBatchWorkflowId(listId, 'largest', batch)).fetchHistory(),
    )),
  ];
  const longest = Math.max(...histories.map((history) => history.events!.length));
  row.note += `; ${batches} batches, longest history ${longest} events`;
  expect(longest).toBeLessThan(EVENTS_PER_HISTORY_BOUND);
});
