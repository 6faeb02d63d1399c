// Hostile receivers (issue 6, item 2). Each is a real loopback server that misbehaves at
// one layer. Every case runs twice: through the sender directly (short deadline, one
// shared sender as in the worker) while an ordinary delivery runs next to it, and end to
// end through a list write to a webhook that was registered while the server behaved
// and then turned hostile, next to a second webhook of the same list that behaves.
// Each must end with the right class within the deadline (the class is asserted; the
// time only goes in the table), memory must stay flat, the neighbour must be delivered.
// What came back is kept within the 4 KiB limits, as text, whatever the receiver sent:
// through the sender, and as the delivery log's detail stores it.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_BODY_BYTES, KEPT_HEADER_BYTES } from '../../src/delivery/response-capture';
import { createHttpSender, type HttpSender } from '../../src/delivery/sender';
import { signPayload } from '../../src/delivery/signing';
import { createAddressPolicy, type AddressPolicy, type Resolver } from '../../src/delivery/url-policy';
import type { DeliveryError, ReceivedResponse } from '../../src/objects';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';
import { createSelfSignedCert, issueServerCert, type Pem } from '../../scripts/lib/tls';
import {
  afterRequestBytes,
  everyUntilClosed,
  httpBehaviour,
  startHostileServer,
  streamBytes,
  type Behaviour,
  type HostileServer,
  type TlsSettings,
} from './support/hostile-server';
import { watchMemory } from './support/memory';
import { megabytes, recordScenario, type ScenarioFigures } from './support/scenarios';

/** Deadline of the sender-level cases; the stack's (end-to-end) is E2E_TIMEOUT_MS. */
const SENDER_TIMEOUT_MS = 1500;
const E2E_TIMEOUT_MS = 2000;
/** A memory bound, not a timing one: a 200 MB body or a 10 GiB gzip bomb must never be held. */
const MAX_RSS_GROWTH_MB = 100;
const MB = 1024 * 1024;
const HUGE_BODY_BYTES = 200 * MB;

let stack: TestStack;
let neighbour: Receiver;
let sender: HttpSender;
/** Every address the shared sender was about to dial, in order (its policy sees each dial). */
const dialled: string[] = [];
let leaf: TlsSettings;
let selfSigned: Pem;
let wrongHost: Pem;
/** One gzip member of 64 MiB of zeros (~64 KB); repeated, it is a 10 GiB bomb. */
let gzipMember: Buffer;
/** A plain-HTTP server on loopback that redirects point at: it must never see a connection. */
let internalTarget: { port: number; connections: number; close(): Promise<void> };
const servers: HostileServer[] = [];
let tls11Note = '';

const noLookup: Resolver = async (hostname) => {
  throw new Error(`unexpected lookup of ${hostname}`);
};

function spyingPolicy(inner: AddressPolicy): AddressPolicy {
  return {
    isAllowed(address) {
      dialled.push(address);
      return inner.isAllowed(address);
    },
  };
}

async function startInternalTarget() {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    async close() {
      server.close();
      await once(server, 'close');
    },
  };
}

beforeAll(async () => {
  stack = await startTestStack({ DELIVERY_TIMEOUT_MS: String(E2E_TIMEOUT_MS) });
  neighbour = await stack.startReceiver();
  const pem = await issueServerCert(stack.ca);
  leaf = { cert: pem.cert, key: pem.key };
  selfSigned = await createSelfSignedCert();
  wrongHost = await issueServerCert(stack.ca, ['other.example']);
  gzipMember = gzipSync(Buffer.alloc(64 * MB), { level: 9 });
  internalTarget = await startInternalTarget();
  sender = createHttpSender({
    timeoutMs: SENDER_TIMEOUT_MS,
    policy: spyingPolicy(createAddressPolicy(['127.0.0.0/8', '::1/128'])),
    resolve: noLookup,
    ca: [stack.ca.cert],
    userAgent: 'svc-webhooks/faults',
  });
});

afterAll(async () => {
  await sender?.close();
  await Promise.all(servers.map((server) => server.close()));
  await internalTarget?.close();
  await stack?.stop();
});

// ---- behaviours ----

/** An ordinary receiver: 200 to everything. */
const behaving = (settings: TlsSettings = leaf) => httpBehaviour(settings, (_req, res) => res.end('ok'));

/** Raw bytes on the TLS socket, once the request has started to arrive. */
function raw(onRequest: (socket: Duplex, rawSocket: net.Socket, server: HostileServer) => void): Behaviour {
  return {
    tls: leaf,
    onConnection(socket, rawSocket, server) {
      afterRequestBytes(socket, server, () => onRequest(socket, rawSocket, server));
    },
  };
}

const TLS_1_1_ONLY = (): TlsSettings => ({ ...leaf, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' });

/**
 * Proves the TLS 1.1 server is one: a client that allows TLS 1.0-1.1 gets exactly that.
 * Where this OpenSSL cannot speak TLS 1.1 at all, the probe gets no handshake and the row
 * says so (the case still asserts how the sender ends: tls).
 */
function probeTls11(server: HostileServer): Promise<string> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: server.port,
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.1',
      ciphers: 'DEFAULT@SECLEVEL=0',
      rejectUnauthorized: false,
    });
    socket.once('secureConnect', () => {
      resolve(socket.getProtocol() ?? 'an unknown protocol');
      socket.destroy();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(`no handshake (${error.code ?? error.message})`));
  });
}

interface Seen {
  server: HostileServer;
  /** Addresses the shared sender dialled during the case (sender-level cases only). */
  dialled: string[];
  /** Request headers the hostile server saw, when it parsed HTTP. */
  requestHeaders: Array<Record<string, unknown>>;
}

interface HostileCase {
  name: string;
  /** The class it must end with; null: delivered (a 2xx acknowledges). */
  expected: DeliveryError | null;
  behaviour(seen: Seen): Behaviour;
  /** Extra assertions once it has ended (server figures count from the start of the case); may return a note. */
  check?(seen: Seen): string | void;
  /** What must have been kept of the response (null: none arrived), through the sender and in the log alike. */
  kept?(response: ReceivedResponse | null): void;
  /** Why this case cannot run here, if it cannot (the row says so instead). */
  unavailable?(): string | undefined;
}

/** The bytes of a response's kept headers, counted as the limit counts them: `name: value\r\n` lines. */
const headerBytes = (headers: Record<string, string>) =>
  Object.entries(headers).reduce((sum, [name, value]) => sum + Buffer.byteLength(`${name}: ${value}\r\n`), 0);

/**
 * What holds of any kept response, whatever the receiver sent: at most 4 KiB of headers,
 * at most the first 4 KiB of the body (a byte gives at most one character), text without
 * NUL. Returns the row's note.
 */
function expectWithinLimits(response: ReceivedResponse | null): string {
  if (response === null) return 'no response kept';
  expect(typeof response.body).toBe('string');
  expect(response.body.length).toBeLessThanOrEqual(KEPT_BODY_BYTES);
  expect(response.body).not.toContain('\0');
  expect(headerBytes(response.headers)).toBeLessThanOrEqual(KEPT_HEADER_BYTES);
  return `kept ${response.body.length} characters of body${response.bodyTruncated ? ' (truncated)' : ''}, ${headerBytes(response.headers)} bytes of headers`;
}

const noResponse = (response: ReceivedResponse | null) => void expect(response).toBeNull();

/** Markup that would run if it were ever rendered as HTML, longer than what is kept. */
const HOSTILE_HTML = `<!doctype html><html><head><script>document.title='pwned'</script></head><body><img src=x onerror="alert(1)">${'<p>padding</p>'.repeat(500)}</body></html>`;
/** Bytes that are not UTF-8: lone continuation bytes, a cut sequence, 0xFF and 0xFE. */
const INVALID_UTF8 = Buffer.from([0xff, 0xfe, 0x80, 0xbf, 0xc3, 0x28, 0xe2, 0x82, 0x41]);

function redirectCase(status: 301 | 302 | 307 | 308, location: () => string, label: string): HostileCase {
  return {
    name: `${status} redirect to ${label}`,
    expected: 'redirect',
    behaviour: () => httpBehaviour(leaf, (_req, res) => res.writeHead(status, { location: location() }).end()),
    check(seen) {
      // Never followed: the target saw nothing and nothing but the receiver itself was dialled.
      expect(internalTarget.connections).toBe(0);
      expect(seen.dialled.filter((address) => address !== '127.0.0.1')).toEqual([]);
      expect(seen.server.stats.requests).toBe(1);
      return 'not followed';
    },
    kept: (response) => void expect(response).toMatchObject({ statusCode: status, headers: { location: location() } }),
  };
}

const hugeBodyNote = (seen: Seen) =>
  `server wrote ${megabytes(seen.server.stats.bytesSent)} of ${megabytes(HUGE_BODY_BYTES)} MB before the client hung up`;

/** A 200 MB body streamed with `status`: never read to its end. */
function hugeBody(status: 200 | 500, expected: DeliveryError | null, name: string): HostileCase {
  return {
    name,
    expected,
    behaviour: () =>
      httpBehaviour(leaf, (_req, res, _raw, server) => {
        res.writeHead(status, { 'content-length': String(HUGE_BODY_BYTES) });
        void streamBytes(res, Buffer.alloc(64 * 1024, 'x'), HUGE_BODY_BYTES, server);
      }),
    check(seen) {
      expect(seen.server.stats.bytesSent).toBeLessThan(HUGE_BODY_BYTES);
      return hugeBodyNote(seen);
    },
    kept: (response) =>
      void expect(response).toEqual(
        expect.objectContaining({ statusCode: status, body: 'x'.repeat(KEPT_BODY_BYTES), bodyTruncated: true }),
      ),
  };
}

/** A body of status 500 that is not plain text, sent whole: kept as text within the limits. */
function failureWithBody(
  name: string,
  headers: Record<string, string>,
  body: () => Buffer | string,
  kept: (text: string) => void,
): HostileCase {
  return {
    name,
    expected: 'non_2xx',
    behaviour: () => httpBehaviour(leaf, (_req, res) => res.writeHead(500, headers).end(body())),
    kept(response) {
      expect(response).toMatchObject({ statusCode: 500, bodyTruncated: Buffer.byteLength(body()) > KEPT_BODY_BYTES });
      kept(response!.body);
    },
  };
}

const CASES: HostileCase[] = [
  {
    name: 'never sends headers',
    expected: 'timeout',
    behaviour: () => httpBehaviour(leaf, () => {}),
    check: (seen) => void expect(seen.server.stats.requests).toBe(1),
    kept: noResponse,
  },
  {
    name: 'status line and headers trickled a byte at a time',
    expected: 'timeout',
    behaviour: () =>
      raw((socket) => {
        const head = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: ${'a'.repeat(100_000)}`);
        let at = 0;
        everyUntilClosed(socket, 10, () => {
          socket.write(head.subarray(at, at + 1));
          at += 1;
          return at < head.length;
        });
      }),
  },
  {
    name: 'headers, then the body trickled a byte at a time',
    expected: 'timeout',
    behaviour: () =>
      httpBehaviour(leaf, (_req, res) => {
        res.writeHead(200, { 'content-length': String(MB) });
        everyUntilClosed(res.socket!, 10, () => void res.write('x'));
      }),
    // What arrived before the deadline, and no more.
    kept: (response) => void expect(response).toMatchObject({ statusCode: 200, body: expect.stringMatching(/^x*$/), bodyTruncated: true }),
  },
  {
    name: 'status 500, then the body trickled a byte at a time',
    expected: 'non_2xx',
    behaviour: () =>
      httpBehaviour(leaf, (_req, res) => {
        res.writeHead(500, { 'content-length': String(MB) });
        everyUntilClosed(res.socket!, 10, () => void res.write('x'));
      }),
    // Read for what it says until the deadline; the class stays the status's.
    kept: (response) => void expect(response).toMatchObject({ statusCode: 500, body: expect.stringMatching(/^x*$/), bodyTruncated: true }),
  },
  {
    name: 'endless 102 Processing',
    expected: 'timeout',
    behaviour: () => raw((socket) => everyUntilClosed(socket, 10, () => void socket.write('HTTP/1.1 102 Processing\r\n\r\n'))),
    kept: noResponse,
  },
  hugeBody(500, 'non_2xx', '200 MB body with status 500'),
  hugeBody(200, null, '200 MB body with status 200 (read stops at 64 KiB)'),
  failureWithBody(
    'binary body (64 KiB of random bytes), status 500',
    { 'content-type': 'application/octet-stream' },
    () => randomBytes(64 * 1024),
    (text) => expect(text).toContain('\uFFFD'),
  ),
  failureWithBody(
    'invalid UTF-8 body, status 500',
    { 'content-type': 'text/plain; charset=utf-8' },
    () => INVALID_UTF8,
    (text) => expect(text).toBe('\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD(\uFFFDA'),
  ),
  failureWithBody(
    'HTML with a script, status 500',
    { 'content-type': 'text/html' },
    () => HOSTILE_HTML,
    // Kept as the characters it is, never interpreted.
    (text) => expect(text).toBe(HOSTILE_HTML.slice(0, KEPT_BODY_BYTES)),
  ),
  {
    name: 'headers over 4 KiB (40 of 200 bytes), status 500',
    expected: 'non_2xx',
    behaviour: () =>
      httpBehaviour(leaf, (_req, res) => {
        for (let i = 0; i < 40; i++) res.setHeader(`x-filler-${String(i).padStart(2, '0')}`, 'f'.repeat(200));
        res.writeHead(500).end('too many headers');
      }),
    kept(response) {
      const names = Object.keys(response!.headers).filter((name) => name.startsWith('x-filler-'));
      // The first ones, in order, as many as fit.
      expect(names.length).toBeGreaterThan(0);
      expect(names.length).toBeLessThan(40);
      expect(names).toEqual(Array.from({ length: names.length }, (_, i) => `x-filler-${String(i).padStart(2, '0')}`));
      expect(response!.body).toBe('too many headers');
    },
  },
  {
    name: 'gzip bomb: 10 GiB of zeros as 10 MB of gzip, status 200',
    expected: null,
    behaviour: (seen) =>
      httpBehaviour(leaf, (req, res, _raw, server) => {
        seen.requestHeaders.push(req.headers);
        const members = 160; // 160 × 64 MiB = 10 GiB once inflated
        res.writeHead(200, {
          'content-encoding': 'gzip',
          'content-type': 'application/json',
          'content-length': String(members * gzipMember.length),
        });
        void streamBytes(res, gzipMember, members * gzipMember.length, server);
      }),
    check(seen) {
      // Never asked for, never inflated (an inflating client would also fail the memory bound).
      expect(seen.requestHeaders.length).toBeGreaterThan(0);
      for (const headers of seen.requestHeaders) expect(headers['accept-encoding']).toBeUndefined();
      return `${megabytes(seen.server.stats.bytesSent)} MB of gzip written before the client hung up; never inflated`;
    },
    // The compressed bytes as they came, as text: never inflated for the log either.
    kept: (response) =>
      void expect(response).toMatchObject({
        statusCode: 200,
        headers: { 'content-encoding': 'gzip' },
        body: expect.stringContaining('\uFFFD'),
        bodyTruncated: true,
      }),
  },
  {
    name: 'oversized headers (one 1 MiB header)',
    expected: 'connection',
    behaviour: () =>
      raw((socket, _raw, server) => {
        socket.write('HTTP/1.1 200 OK\r\nX-Big: ');
        void streamBytes(socket, Buffer.alloc(64 * 1024, 'h'), MB, server).then(() => socket.write('\r\nContent-Length: 0\r\n\r\n'));
      }),
    kept: noResponse,
  },
  {
    name: 'garbage instead of HTTP',
    expected: 'connection',
    behaviour: () => raw((socket) => void socket.write(randomBytes(4096))),
  },
  {
    name: 'reset before the response',
    expected: 'connection',
    behaviour: () => httpBehaviour(leaf, (_req, _res, rawSocket) => rawSocket.resetAndDestroy()),
  },
  {
    name: 'reset during the response',
    expected: 'connection',
    behaviour: () =>
      httpBehaviour(leaf, (_req, res, rawSocket) => {
        res.writeHead(200, { 'content-length': String(MB) });
        res.write(Buffer.alloc(1024, 'r'), () => setImmediate(() => rawSocket.resetAndDestroy()));
      }),
  },
  {
    name: 'self-signed certificate',
    expected: 'tls',
    behaviour: () => behaving({ cert: selfSigned.cert, key: selfSigned.key }),
    check: (seen) => void expect(seen.server.stats.requests).toBe(0),
  },
  {
    name: 'certificate for another host',
    expected: 'tls',
    behaviour: () => behaving({ cert: wrongHost.cert, key: wrongHost.key }),
    check: (seen) => void expect(seen.server.stats.requests).toBe(0),
  },
  {
    name: 'TLS 1.1 only',
    expected: 'tls',
    behaviour: () => behaving(TLS_1_1_ONLY()),
    unavailable() {
      try {
        tls.createSecureContext(TLS_1_1_ONLY());
        return undefined;
      } catch (error) {
        return `this Node's OpenSSL refuses a TLS 1.1 server: ${(error as Error).message}`;
      }
    },
    check(seen) {
      expect(seen.server.stats.requests).toBe(0);
      return tls11Note;
    },
  },
  {
    name: 'plain HTTP on the TLS port',
    expected: 'tls',
    behaviour: () => httpBehaviour(false, (_req, res) => res.end('plain')),
    check: (seen) => void expect(seen.server.stats.handshakes).toBe(0),
  },
  ...([301, 302, 307, 308] as const).flatMap((status) => [
    redirectCase(status, () => 'https://169.254.169.254/latest/meta-data/', 'https://169.254.169.254/'),
    redirectCase(status, () => `http://127.0.0.1:${internalTarget.port}/admin`, 'http://127.0.0.1:PORT/'),
  ]),
  {
    name: 'accepts the TCP connection and never reads',
    expected: 'timeout',
    behaviour: () => ({ tls: false, onConnection: (socket) => void socket.pause() }),
    check(seen) {
      expect(seen.server.stats.connections).toBeGreaterThan(0);
      expect(seen.server.stats.handshakes).toBe(0);
    },
  },
];

// ---- running a case ----

const body = '{"event":"list.changed","listId":"faults","cursor":1,"at":"2026-01-01T00:00:00.000Z"}';
const headers = {
  'svc-event': 'list.changed',
  'svc-signature': signPayload(body, 'test-only-key'),
  'svc-delivery': 'dlv_faults',
  'svc-webhook': 'wh_faults',
};

async function hostileServer(behaviour: Behaviour): Promise<HostileServer> {
  const server = await startHostileServer(behaviour);
  servers.push(server);
  return server;
}

const outcomeOf = (error: DeliveryError | null) => error ?? 'delivered';

/** Instead of a case this machine cannot run: the row gives the reason, and the test checks that it still holds. */
function notRunnable(hostileCase: HostileCase, row: ScenarioFigures): boolean {
  const reason = hostileCase.unavailable?.();
  if (reason === undefined) return false;
  Object.assign(row, { outcome: 'not run', note: reason });
  // Only TLS 1.1 can be unavailable: its refusal is what the row reports.
  expect(() => tls.createSecureContext(TLS_1_1_ONLY())).toThrow();
  return true;
}
const byName = CASES.map((hostileCase) => [hostileCase.name, hostileCase] as const);

describe('hostile receivers, through the sender', () => {
  it.for(byName)('%s', async ([name, hostileCase], { task }) => {
    const row = recordScenario(task, { scenario: `sender: ${name}`, requests: 2 });
    if (notRunnable(hostileCase, row)) return;
    const seen: Seen = { server: undefined as unknown as HostileServer, dialled: [], requestHeaders: [] };
    seen.server = await hostileServer(hostileCase.behaviour(seen));
    if (name === 'TLS 1.1 only') {
      tls11Note = `a TLS 1.0-1.1 client gets ${await probeTls11(seen.server)} from this server`;
      seen.server.resetStats();
    }
    const dialledBefore = dialled.length;

    const memory = watchMemory();
    const hostile = sender.post(seen.server.urlFor('/hook'), body, headers);
    // The neighbour starts once the hostile server holds a connection of the same sender.
    await seen.server.waitFor('connections', 1);
    const { result: neighbourResult } = await sender.post(neighbour.urlFor(`/sender-neighbour/${encodeURIComponent(name)}`), body, headers);
    const { result, response } = await hostile;
    const figures = memory.stop();
    seen.dialled = dialled.slice(dialledBefore);

    Object.assign(row, {
      outcome: outcomeOf(result.error),
      durationMs: result.durationMs,
      peakRssMb: figures.peakMb,
      rssGrowthMb: figures.growthMb,
    });
    expect(result.error).toBe(hostileCase.expected);
    expect(result.delivered).toBe(hostileCase.expected === null);
    expect(neighbourResult).toMatchObject({ delivered: true, error: null });
    expect(figures.growthMb).toBeLessThan(MAX_RSS_GROWTH_MB);
    const keptNote = expectWithinLimits(response);
    hostileCase.kept?.(response);
    row.note = [hostileCase.check?.(seen), keptNote, 'neighbour delivered'].filter(Boolean).join('; ');
  });
});

describe('hostile receivers, end to end through a list write', () => {
  it.for(byName)('%s', async ([name, hostileCase], { task }) => {
    const row = recordScenario(task, { scenario: `e2e: ${name}`, requests: 2 });
    if (notRunnable(hostileCase, row)) return;
    const seen: Seen = { server: undefined as unknown as HostileServer, dialled: [], requestHeaders: [] };
    // Registered while it behaves (the registration ping needs a 2xx)...
    seen.server = await hostileServer(behaving());
    const owner = await stack.createAccount();
    const hostileHook = await stack.registerWebhook(owner.token, seen.server.urlFor('/e2e'));
    const neighbourPath = `/e2e-neighbour/${randomBytes(4).toString('hex')}`;
    const neighbourHook = await stack.registerWebhook(owner.token, neighbour.urlFor(neighbourPath));
    const listId = `faults-${randomBytes(6).toString('hex')}`;
    expect((await stack.putList(listId, owner.id)).status).toBe(201);
    // ...then hostile for every new connection (the ping's kept-alive one is dropped).
    seen.server.behave(hostileCase.behaviour(seen));
    seen.server.resetStats(); // the figures and checks below are this write's

    const memory = watchMemory();
    await stack.reportWrite(listId, 'hostile-1');
    const figures = memory.stop();
    row.writesAccepted = 1;

    const [hostileDelivery] = (await stack.request('GET', `/v3/webhooks/${hostileHook.id}/deliveries`, { token: owner.token })).body.data;
    const [neighbourDelivery] = (await stack.request('GET', `/v3/webhooks/${neighbourHook.id}/deliveries`, { token: owner.token })).body
      .data;
    Object.assign(row, {
      outcome: hostileDelivery ? outcomeOf(hostileDelivery.error) : 'no delivery recorded',
      durationMs: hostileDelivery?.durationMs,
      peakRssMb: figures.peakMb,
      rssGrowthMb: figures.growthMb,
      // Accepted and neither delivered nor recorded as failed: lost.
      writesLost: hostileDelivery && neighbourDelivery ? 0 : 1,
    });

    expect(hostileDelivery).toMatchObject({
      kind: 'event',
      listId,
      cursor: 1,
      outcome: hostileCase.expected === null ? 'delivered' : 'failed',
      error: hostileCase.expected,
    });
    expect(seen.server.stats.connections).toBeGreaterThan(0);
    expect(neighbourDelivery).toMatchObject({ kind: 'event', listId, cursor: 1, outcome: 'delivered', error: null });
    expect(
      neighbour.requests.filter((request) => request.path === neighbourPath && request.headers['svc-event'] === 'list.changed'),
    ).toHaveLength(1);
    expect(figures.growthMb).toBeLessThan(MAX_RSS_GROWTH_MB);
    // What the log keeps of it: the same limits, text as the API answers it.
    const detail = await stack.request('GET', `/v3/webhooks/${hostileHook.id}/deliveries/${hostileDelivery.id}`, { token: owner.token });
    expect(detail.status).toBe(200);
    const keptNote = expectWithinLimits(detail.body.response);
    hostileCase.kept?.(detail.body.response);
    row.note = [hostileCase.check?.(seen), keptNote, 'neighbour delivered'].filter(Boolean).join('; ');
  });
});
