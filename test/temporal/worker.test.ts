// Which queues a worker process serves, by WORKER_TASK_QUEUES.
import { expect, it } from 'vitest';
import { queueSettings } from '../../src/temporal/worker';

const main = { taskQueue: 'webhooks' };
const bulk = { taskQueue: 'webhooks-bulk', maxConcurrentLocalActivityExecutions: 25 };

it.each([
  ['both', [main, bulk]],
  ['main', [main]],
  ['bulk', [bulk]],
] as const)('serves %s: one worker per queue, the bulk one with its own delivery slots', (queues, expected) => {
  expect(queueSettings({ taskQueue: 'webhooks', bulkDeliveries: 25, queues })).toEqual(expected);
});
