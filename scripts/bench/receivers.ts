// Child process: HTTPS webhook receivers on loopback. Every request's signature is checked
// (pings, whose secret is only known once the registration answered, are checked when it
// arrives) and every receipt is recorded with its time, for the harness to collect. Requests
// under the probes' path (`split-probes`) are answered 503 and recorded apart.
import https from 'node:https';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { verifySignature } from '../../src/delivery/signing';
import { serveRpc, type Served } from './lib/ipc';
import { emptyReceipts, type Receipts } from './lib/ledger';
import { emptyProbeReceipts, type ProbeReceipts } from './lib/probe-drift';
import { nowMs } from './lib/stats';

const servers: https.Server[] = [];
/** webhook id -> secret */
const secrets = new Map<string, string>();
/** webhooks whose replies fail, but every period-th */
const hot = new Map<string, { period: number; received: number }>();

// Receipts of events, column-wise, collected by `take`.
let events: Receipts = emptyReceipts();
let eventsTotal = 0;
let pendingPings: { webhookId: string; signature: string | undefined; body: Buffer; t: number }[] = [];
const pings = { received: 0, verified: 0, badSignature: 0, unknownWebhook: 0 };
let badSignatures = 0;
let malformed = 0;
let connections = 0;
/** The path under which every request is a probe of a paused webhook (`/probe/{tag}/`, then the webhook's id); null: none. */
let probePrefix: string | null = null;
let probes: ProbeReceipts = emptyProbeReceipts();

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const t = nowMs();
    const body = Buffer.concat(chunks);
    const webhookId = String(req.headers['svc-webhook'] ?? '');
    const signature = req.headers['svc-signature'] as string | undefined;
    const event = String(req.headers['svc-event'] ?? '');
    if (probePrefix !== null && req.url?.startsWith(probePrefix)) {
      // Never answered with a 2xx, so that the webhook's probing goes on.
      const pathWebhook = req.url.slice(probePrefix.length);
      const secret = secrets.get(pathWebhook);
      const sigOk = secret !== undefined && webhookId === pathWebhook && event === 'ping' && verifySignature(body, signature, secret);
      probes.t.push(t);
      probes.webhook.push(pathWebhook);
      probes.sigOk.push(sigOk ? 1 : 0);
      res.writeHead(503).end();
      return;
    }
    if (event === 'ping') {
      pings.received++;
      pendingPings.push({ webhookId, signature, body, t });
      verifyPendingPings();
      res.writeHead(200).end();
      return;
    }
    let parsed: { event?: unknown; listId?: unknown; cursor?: unknown };
    try {
      parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
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

function verifyPendingPings(): void {
  const still: typeof pendingPings = [];
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

const handlers = {
  /** Starts `count` receivers sharing one certificate; returns their ports. */
  async start({ count, cert, key }: { count: number; cert: string; key: string }) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = https.createServer({ cert, key, keepAliveTimeout: 30_000 }, handle);
      server.on('secureConnection', () => connections++);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      servers.push(server);
      ports.push((server.address() as AddressInfo).port);
    }
    return { ports };
  },
  secrets({ entries }: { entries: [string, string][] }) {
    for (const [id, secret] of entries) secrets.set(id, secret);
    verifyPendingPings();
    return { pendingPings: pendingPings.length };
  },
  /** Replies 200 to every period-th event delivery of the webhook (the first included) and 500 to the others. */
  hot({ webhookId, period }: { webhookId: string; period: number }) {
    hot.set(webhookId, { period, received: 0 });
    return {};
  },
  /** Requests under `prefix` are probes from now on: answered 503, recorded apart (`takeProbes`). */
  probes({ prefix }: { prefix: string }) {
    probePrefix = prefix;
    return {};
  },
  /** Hands over and forgets the probes received since the last call. */
  takeProbes() {
    const taken = probes;
    probes = emptyProbeReceipts();
    return taken;
  },
  counts() {
    return {
      eventsTotal,
      pending: events.t.length,
      pings: { ...pings, pending: pendingPings.length },
      badSignatures,
      malformed,
      connections,
    };
  },
  /** Hands over and forgets the receipts recorded since the last take. */
  take() {
    const taken = events;
    events = emptyReceipts();
    return taken;
  },
  stop() {
    for (const server of servers) {
      server.close();
      server.closeAllConnections();
    }
    setTimeout(() => process.exit(0), 50);
    return {};
  },
};
serveRpc(handlers);

export type ReceiversApi = Served<typeof handlers>;
