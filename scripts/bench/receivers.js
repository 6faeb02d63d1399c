// @ts-check
// Child process: HTTPS webhook receivers on loopback. Every request's signature is checked
// (pings, whose secret is only known once the registration answered, are checked when it
// arrives) and every receipt is recorded with its time, for the harness to collect.
'use strict';

const https = require('node:https');
const { once } = require('node:events');
const { verifySignature } = require(`${process.env.BENCH_DIST}/src/delivery/signing.js`);
const { serveRpc } = require('./lib/ipc');
const { nowMs } = require('./lib/stats');

/** @type {https.Server[]} */
const servers = [];
/** @type {Map<string, string>} webhook id -> secret */
const secrets = new Map();
/** @type {Map<string, { period: number, received: number }>} webhooks whose replies fail, but every period-th */
const hot = new Map();

// Receipts of events, column-wise, collected by `take`.
/** @type {{ t: number[], webhook: string[], list: string[], cursor: number[], event: string[], sigOk: number[], status: number[] }} */
let events = emptyEvents();
let eventsTotal = 0;
/** @type {{ webhookId: string, signature: string | undefined, body: Buffer, t: number }[]} */
let pendingPings = [];
const pings = { received: 0, verified: 0, badSignature: 0, unknownWebhook: 0 };
let badSignatures = 0;
let malformed = 0;
let connections = 0;

function emptyEvents() {
  return { t: [], webhook: [], list: [], cursor: [], event: [], sigOk: [], status: [] };
}

/** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
function handle(req, res) {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const t = nowMs();
    const body = Buffer.concat(chunks);
    const webhookId = String(req.headers['svc-webhook'] ?? '');
    const signature = /** @type {string | undefined} */ (req.headers['svc-signature']);
    const event = String(req.headers['svc-event'] ?? '');
    if (event === 'ping') {
      pings.received++;
      pendingPings.push({ webhookId, signature, body, t });
      verifyPendingPings();
      res.writeHead(200).end();
      return;
    }
    let parsed;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      malformed++;
      res.writeHead(400).end();
      return;
    }
    const secret = secrets.get(webhookId);
    const sigOk = secret !== undefined && verifySignature(body, signature, secret) && parsed.event === event;
    if (!sigOk) badSignatures++;
    let status = 200;
    const pattern = hot.get(webhookId);
    if (pattern) {
      status = pattern.received % pattern.period === 0 ? 200 : 500;
      pattern.received++;
    }
    events.t.push(t);
    events.webhook.push(webhookId);
    events.list.push(String(parsed.listId));
    events.cursor.push(Number(parsed.cursor));
    events.event.push(String(parsed.event));
    events.sigOk.push(sigOk ? 1 : 0);
    events.status.push(status);
    eventsTotal++;
    res.writeHead(status).end();
  });
}

function verifyPendingPings() {
  const still = [];
  for (const ping of pendingPings) {
    const secret = secrets.get(ping.webhookId);
    if (secret === undefined) {
      still.push(ping);
      continue;
    }
    if (verifySignature(ping.body, ping.signature, secret)) pings.verified++;
    else pings.badSignature++;
  }
  pendingPings = still;
}

serveRpc({
  /** Starts `count` receivers sharing one certificate; returns their ports. */
  async start({ count, cert, key }) {
    const ports = [];
    for (let i = 0; i < count; i++) {
      const server = https.createServer({ cert, key, keepAliveTimeout: 30_000 }, handle);
      server.on('secureConnection', () => connections++);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      servers.push(server);
      ports.push(/** @type {import('node:net').AddressInfo} */ (server.address()).port);
    }
    return { ports };
  },
  secrets({ entries }) {
    for (const [id, secret] of entries) secrets.set(id, secret);
    verifyPendingPings();
    return { pendingPings: pendingPings.length };
  },
  /** Replies 200 to every period-th event delivery of the webhook (the first included) and 500 to the others. */
  hot({ webhookId, period }) {
    hot.set(webhookId, { period, received: 0 });
    return {};
  },
  counts() {
    return { eventsTotal, pending: events.t.length, pings: { ...pings, pending: pendingPings.length }, badSignatures, malformed, connections };
  },
  /** Hands over and forgets the receipts recorded since the last take. */
  take() {
    const taken = events;
    events = emptyEvents();
    return taken;
  },
  async stop() {
    for (const server of servers) {
      server.close();
      server.closeAllConnections();
    }
    setTimeout(() => process.exit(0), 50);
    return {};
  },
});
