// @ts-check
// Child process: the plain-Node baseline. No Temporal, no database: it accepts the same
// write request as the internal API, answers 202 at once, then POSTs the same signed
// bodies with the service's own HTTP client (dist/src/delivery/sender.js) and headers
// (post-signed.js) to the same receivers. Outcomes are kept in memory for the ledger.
'use strict';

const http = require('node:http');
const { createHash } = require('node:crypto');
const { once } = require('node:events');
const dist = /** @type {string} */ (process.env.BENCH_DIST);
const { createHttpSender } = require(`${dist}/src/delivery/sender.js`);
const { postSigned } = require(`${dist}/src/delivery/post-signed.js`);
const { eventPayload } = require(`${dist}/src/delivery/payloads.js`);
const { topicsOfWrite } = require(`${dist}/src/delivery/topics.js`);
const { createAddressPolicy, systemResolver } = require(`${dist}/src/delivery/url-policy.js`);
const { newId } = require(`${dist}/src/ids.js`);
const { serveRpc } = require('./lib/ipc');

const MAX_BODY = 1024 * 1024;
const token = /** @type {string} */ (process.env.BENCH_TOKEN);

/** @type {Map<string, { webhookId: string, url: string, secret: string, events: string[] }[]>} list id -> recipients */
let recipients = new Map();
/** @type {Map<string, { cursor: number, writes: Map<string, { hash: string, answer: string }> }>} */
const lists = new Map();
const sender = createHttpSender({
  timeoutMs: Number(process.env.DELIVERY_TIMEOUT_MS ?? 10_000),
  policy: createAddressPolicy((process.env.WEBHOOK_ALLOWED_CIDRS ?? '').split(',').filter(Boolean)),
  resolve: systemResolver,
  userAgent: /** @type {string} */ (process.env.BENCH_USER_AGENT),
});

// Outcomes, column-wise, collected by `take`.
let outcomes = { webhook: /** @type {string[]} */ ([]), list: /** @type {string[]} */ ([]), cursor: /** @type {number[]} */ ([]), event: /** @type {string[]} */ ([]), delivered: /** @type {number[]} */ ([]) };
let outcomesTotal = 0;
let inFlight = 0;
let maxInFlight = 0;

/** @param {http.ServerResponse} res @param {number} status @param {unknown} body */
function answer(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  const match = /^\/internal\/v3\/lists\/([^/]+)\/writes$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) return answer(res, 404, { error: { code: 'NOT_FOUND', message: 'no such route' } });
  if (req.headers.authorization !== `Bearer ${token}`) return answer(res, 401, { error: { code: 'UNAUTHORIZED', message: 'bad token' } });
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY) return answer(res, 413, { error: { code: 'PAYLOAD_TOO_LARGE', message: 'too large' } });
    const listId = decodeURIComponent(/** @type {string} */ (match[1]));
    const raw = Buffer.concat(chunks).toString('utf8');
    let body;
    try {
      body = JSON.parse(raw);
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
    const previous = list.writes.get(body.writeId);
    if (previous) {
      if (previous.hash !== hash) return answer(res, 409, { error: { code: 'WRITE_ID_REUSED', message: 'reused' } });
      return res.writeHead(202, { 'content-type': 'application/json' }).end(previous.answer);
    }
    const cursor = ++list.cursor;
    const at = new Date(body.at ?? Date.now()).toISOString();
    const topics = topicsOfWrite(body.changes);
    const accepted = JSON.stringify({ writeId: body.writeId, listId, cursor, topics });
    list.writes.set(body.writeId, { hash, answer: accepted });
    res.writeHead(202, { 'content-type': 'application/json' }).end(accepted);
    for (const webhook of recipients.get(listId) ?? []) {
      for (const topic of topics) {
        if (!webhook.events.includes(topic)) continue;
        const payload = eventPayload(topic, listId, cursor, at);
        const message = { url: webhook.url, webhookId: webhook.webhookId, deliveryId: newId('dlv'), event: topic, body: payload };
        inFlight++;
        if (inFlight > maxInFlight) maxInFlight = inFlight;
        void postSigned(sender, message, webhook.secret).then((/** @type {{ delivered: boolean }} */ result) => {
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

serveRpc({
  async start() {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: /** @type {import('node:net').AddressInfo} */ (server.address()).port };
  },
  /** The lists and who receives their writes: [{ listId, recipients: [{ webhookId, url, secret, events }] }]. */
  configure({ config }) {
    recipients = new Map(config.map((/** @type {any} */ entry) => [entry.listId, entry.recipients]));
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
});
