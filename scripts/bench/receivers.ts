// Child process: HTTPS webhook receivers on loopback. Every request's signature is checked
// (pings, whose secret is only known once the registration answered, are checked when it
// arrives) and every receipt is recorded with its time, for the harness to collect. Requests
// under the probes' path (`split-probes`) are answered 503 and recorded apart. With
// BENCH_RECEIVER_AUTH, requests under AUTHED_PATH must carry the credential (else 401), and for
// `oauth2` a token endpoint of the bench's issues the bearer tokens.
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { verifySignature } from '../../src/delivery/signing';
import { serveRpc, type Served } from './lib/ipc';
import { API_KEY_HEADER, AUTHED_PATH, TOKEN_LIFETIME_S, TOKEN_PATH, type ReceiverAuthMode, type WebhookAuth } from './lib/receiver-auth';
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
/** Whether a request under AUTHED_PATH carries the credential; null: BENCH_RECEIVER_AUTH=none. */
let authorized: ((req: IncomingMessage) => boolean) | null = null;
let unauthorized = 0;
/** `Bearer <token>` of every token the endpoint issued: the receivers' check is one lookup. */
const issued = new Set<string>();

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const t = nowMs();
    if (authorized !== null && req.url?.startsWith(AUTHED_PATH) && !authorized(req)) {
      // Not recorded as received: the delivery fails, and the ledger shows it.
      unauthorized++;
      res.writeHead(401).end();
      return;
    }
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

/** An HTTPS server of this process on a free loopback port. */
async function listen(cert: string, key: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<https.Server> {
  const server = https.createServer({ cert, key, keepAliveTimeout: 30_000 }, handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return server;
}

/**
 * The token endpoint: the client credentials grant (RFC 6749 §4.4) for the one client, its id
 * and secret in HTTP Basic as the service sends them; each grant a new token.
 */
function tokenEndpoint(basic: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const json = { 'content-type': 'application/json', 'cache-control': 'no-store' };
      if (req.method !== 'POST' || req.url !== TOKEN_PATH || req.headers.authorization !== basic) {
        res.writeHead(401, json).end(JSON.stringify({ error: 'invalid_client' }));
        return;
      }
      if (form.get('grant_type') !== 'client_credentials') {
        res.writeHead(400, json).end(JSON.stringify({ error: 'unsupported_grant_type' }));
        return;
      }
      const token = randomBytes(24).toString('base64url');
      issued.add(`Bearer ${token}`);
      res.writeHead(200, json).end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_S }));
    });
  };
}

/** Sets up BENCH_RECEIVER_AUTH's check, and returns the `auth` the webhooks under AUTHED_PATH are registered with. */
async function requireAuth(mode: ReceiverAuthMode, cert: string, key: string): Promise<WebhookAuth | null> {
  if (mode === 'headers') {
    const apiKey = randomBytes(18).toString('base64url');
    const header = API_KEY_HEADER.toLowerCase();
    authorized = (req) => req.headers[header] === apiKey;
    return { type: 'headers', headers: { [API_KEY_HEADER]: apiKey } };
  }
  if (mode === 'oauth2') {
    const clientId = 'svc-webhooks-bench';
    const clientSecret = randomBytes(18).toString('base64url');
    // Both are left as they are by form encoding, which the service applies before base64 (RFC 6749 §2.3.1).
    const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    const server = await listen(cert, key, tokenEndpoint(basic));
    authorized = (req) => issued.has(req.headers.authorization ?? '');
    return { type: 'oauth2', tokenUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}${TOKEN_PATH}`, clientId, clientSecret };
  }
  return null;
}

const handlers = {
  /**
   * Starts `count` receivers sharing one certificate (and for `oauth2` the token endpoint);
   * returns their ports and the `auth` to register.
   */
  async start({ count, cert, key, auth }: { count: number; cert: string; key: string; auth: ReceiverAuthMode }) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = await listen(cert, key, handle);
      server.on('secureConnection', () => connections++);
      ports.push((server.address() as AddressInfo).port);
    }
    return { ports, webhookAuth: await requireAuth(auth, cert, key) };
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
      unauthorized,
      tokensIssued: issued.size,
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
