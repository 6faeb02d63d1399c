// @ts-check
// The floor's only workflow: a bare fan-out of no-op activities, one per recipient, all at
// once, each a single attempt. No database, no signals, no per-webhook state: what Temporal
// itself costs for a write's deliveries, which the service is measured against.
'use strict';

const { proxyActivities, proxyLocalActivities } = require('@temporalio/workflow');

const options = { startToCloseTimeout: '15 seconds', retry: { maximumAttempts: 1 } };
/** @type {{ noop: (delivery: { webhookId: string, listId: string, cursor: number, topic: string }) => Promise<void> }} */
const normal = proxyActivities(options);
/** @type {typeof normal} */
const local = proxyLocalActivities(options);

/** @param {{ listId: string, cursor: number, topic: string, webhookIds: string[], local: boolean }} write */
async function floorFanout(write) {
  const { noop } = write.local ? local : normal;
  await Promise.all(write.webhookIds.map((webhookId) => noop({ webhookId, listId: write.listId, cursor: write.cursor, topic: write.topic })));
}

module.exports = { floorFanout };
