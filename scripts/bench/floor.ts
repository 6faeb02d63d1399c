// Child process: the Temporal floor. The same write request as the internal API, answered
// 202 once a bare workflow is started (as durable as the service's 202), which fans out one
// no-op activity per recipient (normal activities, or local ones with BENCH_FLOOR_LOCAL=1).
// Client and worker share one connection and the start is eager, as in the service's
// one-process mode. Each activity's completion is an outcome, kept in memory for the ledger,
// and stands in for the receipt of a delivery (nothing is POSTed).
import http from 'node:http';
import path from 'node:path';
import { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { serveRpc, type Served } from './lib/ipc';
import { nowMs } from './lib/stats';
import { type FloorActivities, type FloorDelivery, type FloorWrite } from './floor-workflows';

const MAX_BODY = 1024 * 1024;
const TASK_QUEUE = 'floor';
const token = process.env.BENCH_TOKEN!;
const local = process.env.BENCH_FLOOR_LOCAL === '1';

/** list id -> webhook ids */
let recipients = new Map<string, string[]>();
/** list id -> cursor */
const cursors = new Map<string, number>();
/** `${listId}/${writeId}` -> the 202's body */
const answers = new Map<string, string>();

/** Completions, column-wise, collected by `take`. */
export interface Completions {
  t: number[];
  webhook: string[];
  list: string[];
  cursor: number[];
  event: string[];
}
const empty = (): Completions => ({ t: [], webhook: [], list: [], cursor: [], event: [] });
let completions = empty();
let completionsTotal = 0;

const activities: FloorActivities = {
  noop({ webhookId, listId, cursor, topic }: FloorDelivery) {
    completions.t.push(nowMs());
    completions.webhook.push(webhookId);
    completions.list.push(listId);
    completions.cursor.push(cursor);
    completions.event.push(topic);
    completionsTotal++;
    return Promise.resolve();
  },
};

let client: Client;
let worker: Worker;
let running: Promise<void>;

function answer(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  const match = /^\/internal\/v3\/lists\/([^/]+)\/writes$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) return answer(res, 404, '{"error":{"code":"NOT_FOUND","message":"no such route"}}');
  if (req.headers.authorization !== `Bearer ${token}`) return answer(res, 401, '{"error":{"code":"UNAUTHORIZED","message":"bad token"}}');
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const listId = decodeURIComponent(match[1]);
    const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    if (size > MAX_BODY) return answer(res, 413, '{"error":{"code":"PAYLOAD_TOO_LARGE","message":"too large"}}');
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { writeId: string };
    const key = `${listId}/${body.writeId}`;
    const previous = answers.get(key);
    if (previous) return answer(res, 202, previous);
    const cursor = (cursors.get(listId) ?? 0) + 1;
    cursors.set(listId, cursor);
    const accepted = JSON.stringify({ writeId: body.writeId, listId, cursor, topics: ['list.changed'] });
    answers.set(key, accepted);
    const write: FloorWrite = { listId, cursor, topic: 'list.changed', webhookIds: recipients.get(listId) ?? [], local };
    client.workflow
      .start('floorFanout', { taskQueue: TASK_QUEUE, workflowId: `floor/${key}`, args: [write], requestEagerStart: true })
      .then(
        () => answer(res, 202, accepted),
        (error: Error) => answer(res, 503, JSON.stringify({ error: { code: 'UNAVAILABLE', message: error.message } })),
      );
  });
});

const handlers = {
  async start() {
    const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    client = new Client({ connection });
    // The compiled workflow file beside this one (dist/scripts/bench), bundled by the SDK.
    worker = await Worker.create({
      connection,
      taskQueue: TASK_QUEUE,
      workflowsPath: path.join(__dirname, 'floor-workflows.js'),
      activities,
    });
    running = worker.run();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port };
  },
  /** The lists and their recipients: [{ listId, webhookIds }]. */
  configure({ config }: { config: { listId: string; webhookIds: string[] }[] }) {
    recipients = new Map(config.map((entry) => [entry.listId, entry.webhookIds]));
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
};
serveRpc(handlers);

export type FloorApi = Served<typeof handlers>;
