// @ts-check
// Child process: the Temporal floor. The same write request as the internal API, answered
// 202 once a bare workflow is started (as durable as the service's 202), which fans out one
// no-op activity per recipient (normal activities, or local ones with BENCH_FLOOR_LOCAL=1).
// Client and worker share one connection and the start is eager, as in the service's
// one-process mode. Each activity's completion is an outcome, kept in memory for the ledger,
// and stands in for the receipt of a delivery (nothing is POSTed).
'use strict';

const http = require('node:http');
const path = require('node:path');
const { once } = require('node:events');
const { Client } = require('@temporalio/client');
const { NativeConnection, Worker } = require('@temporalio/worker');
const { serveRpc } = require('./lib/ipc');
const { nowMs } = require('./lib/stats');

const MAX_BODY = 1024 * 1024;
const TASK_QUEUE = 'floor';
const token = /** @type {string} */ (process.env.BENCH_TOKEN);
const local = process.env.BENCH_FLOOR_LOCAL === '1';

/** @type {Map<string, string[]>} list id -> webhook ids */
let recipients = new Map();
/** @type {Map<string, number>} list id -> cursor */
const cursors = new Map();
/** @type {Map<string, string>} `${listId}/${writeId}` -> the 202's body */
const answers = new Map();

// Completions, column-wise, collected by `take`.
const empty = () => ({ t: /** @type {number[]} */ ([]), webhook: /** @type {string[]} */ ([]), list: /** @type {string[]} */ ([]), cursor: /** @type {number[]} */ ([]), event: /** @type {string[]} */ ([]) });
let completions = empty();
let completionsTotal = 0;

const activities = {
  /** @param {{ webhookId: string, listId: string, cursor: number, topic: string }} delivery */
  async noop({ webhookId, listId, cursor, topic }) {
    completions.t.push(nowMs());
    completions.webhook.push(webhookId);
    completions.list.push(listId);
    completions.cursor.push(cursor);
    completions.event.push(topic);
    completionsTotal++;
  },
};

/** @type {import('@temporalio/client').Client} */
let client;
/** @type {import('@temporalio/worker').Worker} */
let worker;
/** @type {Promise<void>} */
let running;

/** @param {http.ServerResponse} res @param {number} status @param {string} body */
function answer(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  const match = /^\/internal\/v3\/lists\/([^/]+)\/writes$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) return answer(res, 404, '{"error":{"code":"NOT_FOUND","message":"no such route"}}');
  if (req.headers.authorization !== `Bearer ${token}`) return answer(res, 401, '{"error":{"code":"UNAUTHORIZED","message":"bad token"}}');
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const listId = decodeURIComponent(/** @type {string} */ (match[1]));
    const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    if (size > MAX_BODY) return answer(res, 413, '{"error":{"code":"PAYLOAD_TOO_LARGE","message":"too large"}}');
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const key = `${listId}/${body.writeId}`;
    const previous = answers.get(key);
    if (previous) return answer(res, 202, previous);
    const cursor = (cursors.get(listId) ?? 0) + 1;
    cursors.set(listId, cursor);
    const accepted = JSON.stringify({ writeId: body.writeId, listId, cursor, topics: ['list.changed'] });
    answers.set(key, accepted);
    const write = { listId, cursor, topic: 'list.changed', webhookIds: recipients.get(listId) ?? [], local };
    client.workflow
      .start('floorFanout', { taskQueue: TASK_QUEUE, workflowId: `floor/${key}`, args: [write], requestEagerStart: true })
      .then(
        () => answer(res, 202, accepted),
        (/** @type {Error} */ error) => answer(res, 503, JSON.stringify({ error: { code: 'UNAVAILABLE', message: error.message } })),
      );
  });
});

serveRpc({
  async start() {
    const connection = await NativeConnection.connect({ address: /** @type {string} */ (process.env.TEMPORAL_ADDRESS) });
    client = new Client({ connection });
    worker = await Worker.create({ connection, taskQueue: TASK_QUEUE, workflowsPath: path.join(__dirname, 'floor-workflows.js'), activities });
    running = worker.run();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: /** @type {import('node:net').AddressInfo} */ (server.address()).port };
  },
  /** The lists and their recipients: [{ listId, webhookIds }]. */
  configure({ config }) {
    recipients = new Map(config.map((/** @type {{ listId: string, webhookIds: string[] }} */ entry) => [entry.listId, entry.webhookIds]));
    return {};
  },
  counts() {
    return { outcomesTotal: completionsTotal };
  },
  take() {
    const taken = completions;
    completions = empty();
    return taken;
  },
  async stop() {
    server.close();
    server.closeAllConnections();
    worker.shutdown();
    await running;
    setTimeout(() => process.exit(0), 50);
    return {};
  },
});
