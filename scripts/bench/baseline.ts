// Child process: the plain-Node baseline. No Temporal, no database: it accepts the same
// write request as the internal API, answers 202 at once, then POSTs the same signed
// bodies with the service's own HTTP client (src/delivery/sender.ts, compiled beside the bench) and headers
// (message.ts) to the same receivers. Outcomes are kept in memory for the ledger.
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createHttpSender } from '../../src/delivery/sender';
import { eventPayload, postSigned } from '../../src/delivery/message';
import { topicsOfWrite, type ChangeType } from '../../src/topics';
import { createAddressPolicy, systemResolver } from '../../src/delivery/url-policy';
import { newId } from '../../src/ids';
import { serveRpc, type Served } from './lib/ipc';

const MAX_BODY = 1024 * 1024;
const token = process.env.BENCH_TOKEN!;

export interface BaselineRecipient {
  webhookId: string;
  url: string;
  secret: string;
  events: string[];
}

/** list id -> recipients */
let recipients = new Map<string, BaselineRecipient[]>();
const lists = new Map<string, { cursor: number; writes: Map<string, { hash: string; answer: string }> }>();
const sender = createHttpSender({
  timeoutMs: Number(process.env.DELIVERY_TIMEOUT_MS ?? 10_000),
  policy: createAddressPolicy((process.env.WEBHOOK_ALLOWED_CIDRS ?? '').split(',').filter(Boolean)),
  resolve: systemResolver,
  userAgent: process.env.BENCH_USER_AGENT!,
});

// Outcomes, column-wise, collected by `take`.
let outcomes: { webhook: string[]; list: string[]; cursor: number[]; event: string[]; delivered: number[] } = {
  webhook: [],
  list: [],
  cursor: [],
  event: [],
  delivered: [],
};
let outcomesTotal = 0;
let inFlight = 0;
let maxInFlight = 0;

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  const match = /^\/internal\/v3\/lists\/([^/]+)\/writes$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) return answer(res, 404, { error: { code: 'NOT_FOUND', message: 'no such route' } });
  if (req.headers.authorization !== `Bearer ${token}`) return answer(res, 401, { error: { code: 'UNAUTHORIZED', message: 'bad token' } });
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY) return answer(res, 413, { error: { code: 'PAYLOAD_TOO_LARGE', message: 'too large' } });
    const listId = decodeURIComponent(match[1]);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: { writeId?: unknown; changes?: unknown; at?: string | number } | null;
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      return answer(res, 400, { error: { code: 'MALFORMED_JSON', message: 'bad JSON' } });
    }
    if (typeof body?.writeId !== 'string' || !Array.isArray(body.changes) || body.changes.length === 0) {
      return answer(res, 400, { error: { code: 'VALIDATION_FAILED', message: 'bad write' } });
    }
    const list = lists.get(listId);
    if (!list) return answer(res, 404, { error: { code: 'LIST_NOT_FOUND', message: 'no such list' } });
    // Like the service, a repeat is told from a reuse by a hash of the body.
    const hash = createHash('sha256').update(raw).digest('base64');
    const writeId = body.writeId;
    const changes = body.changes as { type: ChangeType }[];
    const previous = list.writes.get(writeId);
    if (previous) {
      if (previous.hash !== hash) return answer(res, 409, { error: { code: 'WRITE_ID_REUSED', message: 'reused' } });
      return res.writeHead(202, { 'content-type': 'application/json' }).end(previous.answer);
    }
    const cursor = ++list.cursor;
    const at = new Date(body.at ?? Date.now()).toISOString();
    const topics = topicsOfWrite(changes);
    const accepted = JSON.stringify({ writeId, listId, cursor, topics });
    list.writes.set(writeId, { hash, answer: accepted });
    res.writeHead(202, { 'content-type': 'application/json' }).end(accepted);
    for (const webhook of recipients.get(listId) ?? []) {
      for (const topic of topics) {
        if (!webhook.events.includes(topic)) continue;
        const payload = eventPayload(topic, listId, cursor, at);
        const message = { url: webhook.url, webhookId: webhook.webhookId, deliveryId: newId('dlv'), event: topic, body: payload };
        inFlight++;
        if (inFlight > maxInFlight) maxInFlight = inFlight;
        void postSigned(sender, message, webhook.secret).then(({ result }) => {
          inFlight--;
          outcomes.webhook.push(webhook.webhookId);
          outcomes.list.push(listId);
          outcomes.cursor.push(cursor);
          outcomes.event.push(topic);
          outcomes.delivered.push(result.delivered ? 1 : 0);
          outcomesTotal++;
        });
      }
    }
  });
});

const handlers = {
  async start() {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port };
  },
  /** The lists and who receives their writes: [{ listId, recipients: [{ webhookId, url, secret, events }] }]. */
  configure({ config }: { config: { listId: string; recipients: BaselineRecipient[] }[] }) {
    recipients = new Map(config.map((entry) => [entry.listId, entry.recipients]));
    for (const entry of config) if (!lists.has(entry.listId)) lists.set(entry.listId, { cursor: 0, writes: new Map() });
    return {};
  },
  counts() {
    return { outcomesTotal, inFlight, maxInFlight };
  },
  take() {
    const taken = outcomes;
    outcomes = { webhook: [], list: [], cursor: [], event: [], delivered: [] };
    return taken;
  },
  async stop() {
    server.close();
    server.closeAllConnections();
    await sender.close().catch(() => {});
    setTimeout(() => process.exit(0), 50);
    return {};
  },
};
serveRpc(handlers);

export type BaselineApi = Served<typeof handlers>;
