// Child process: the flooding client of split-noisy-neighbour. It stands for a client on another
// machine (the harness caps its CPU, and may give it a network namespace of its own), so it is
// cheap: raw sockets, each request built once (the 401 flood's token apart), keep-alive, and
// on each connection one request at a time, the next sent as soon as the answer's end is seen.
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { readAnswerHead } from './lib/http-answer';
import { serveRpc, type Served } from './lib/ipc';
import { nowMs, percentiles, round } from './lib/stats';

/** The floods, by the answer each asks for. */
export const FLOOD_KINDS = ['429', '401', '413'] as const;
export type FloodKind = (typeof FLOOD_KINDS)[number];

export interface FloodRequest {
  kind: FloodKind;
  /** Where the service answers, as seen from this process. */
  host: string;
  port: number;
  /** A valid token (429, 413); the 401 flood makes a token of its own per request. */
  token: string;
  connections: number;
  /** Requests a second in all, each connection sending its share at most; null: each sends as soon as answered. */
  perSec: number | null;
  startAt: number;
  durationMs: number;
  /** An answer not begun within this long ends its connection. */
  timeoutMs: number;
  /** The 413 flood: the Content-Length declared, and how much of the body is sent. */
  declaredBytes: number;
  firstChunkBytes: number;
}

/** A flood's requests: the next one's bytes, and whether its connection ends with its answer. */
interface Requests {
  next(): Buffer;
  closeAfterAnswer: boolean;
}

/**
 * 429: one valid token, far over its limit: GET /v3/webhooks. 401: a token that does not exist,
 * fresh for each request. 413: POST /v3/webhooks declaring a body over the limit, of which only
 * the headers and a first chunk are sent: the connection cannot carry another request, so it
 * ends with the answer and the client connects again.
 */
function floodRequests({ kind, host, port, token, declaredBytes, firstChunkBytes }: FloodRequest): Requests {
  const head = (method: string, bearer: string, more = '') =>
    `${method} /v3/webhooks HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${bearer}\r\n${more}\r\n`;
  if (kind === '429') {
    const request = Buffer.from(head('GET', token), 'latin1');
    return { next: () => request, closeAfterAnswer: false };
  }
  if (kind === '401')
    return { next: () => Buffer.from(head('GET', `tok_${randomBytes(32).toString('base64url')}`), 'latin1'), closeAfterAnswer: false };
  const opening = '{"url":"https://example.com/';
  const request = Buffer.from(
    head('POST', token, `Content-Type: application/json\r\nContent-Length: ${declaredBytes}\r\n`) +
      opening +
      'a'.repeat(firstChunkBytes - opening.length),
    'latin1',
  );
  return { next: () => request, closeAfterAnswer: true };
}

/** What the connections found: each answer's latency, the answers by status and the failures by cause. */
interface Tally {
  latencies: number[];
  outcomes: Record<string, number>;
  connectionsOpened: number;
}

const count = (tally: Tally, outcome: string) => (tally.outcomes[outcome] = (tally.outcomes[outcome] ?? 0) + 1);

/**
 * One connection's loop until `endAt`: sends a request, reads its answer's head and skips its
 * body, then sends the next; a connection that ends (the server's close, the flood's, an error,
 * `timeoutMs` without a byte) is opened again.
 */
function floodConnection(flood: FloodRequest, requests: Requests, tally: Tally, endAt: number): Promise<void> {
  // A connection's turns, when paced: one every `connections / perSec` seconds from the start.
  const intervalMs = flood.perSec === null ? 0 : (1000 * flood.connections) / flood.perSec;
  const startedAt = nowMs();
  let turns = 0;
  const pace = { next: () => startedAt + turns * intervalMs, taken: () => void turns++ };
  return new Promise((resolve) => {
    const open = () => {
      if (nowMs() >= endAt) return resolve();
      tally.connectionsOpened++;
      const socket = net.connect({ host: flood.host, port: flood.port, noDelay: true });
      let ended = false;
      let inFlight = false;
      let sentAt = 0;
      /** The answer's bytes until its head is whole; then null. */
      let head: Buffer | null = null;
      let bodyLeft = 0;
      let status = 0;
      let closeAfter = false;
      /** Ends the connection (counting the request it leaves unanswered, if any, as `unanswered`) and opens the next. */
      const end = (unanswered = 'closed before the answer') => {
        if (ended) return;
        ended = true;
        if (inFlight) count(tally, unanswered);
        socket.destroy();
        setImmediate(open);
      };
      const send = () => {
        if (nowMs() >= endAt) {
          ended = true;
          socket.destroy();
          return resolve();
        }
        // Paced: the connection's next request waits for its turn (a connection behind catches up).
        const due = pace.next();
        if (due > nowMs()) return void setTimeout(send, due - nowMs());
        pace.taken();
        inFlight = true;
        head = Buffer.alloc(0);
        sentAt = nowMs();
        socket.write(requests.next());
      };
      socket.setTimeout(flood.timeoutMs, () => end('timeout'));
      socket.on('connect', send);
      socket.on('error', (error: NodeJS.ErrnoException) => end(error.code ?? 'error'));
      socket.on('close', () => end());
      socket.on('data', (chunk: Buffer) => {
        if (ended || !inFlight) return;
        if (head) {
          head = head.length ? Buffer.concat([head, chunk]) : chunk;
          const read = readAnswerHead(head);
          if (!read) return;
          status = read.status;
          // Without a length the body ends with the connection: the status is all the flood needs.
          closeAfter = read.close || read.contentLength === null || requests.closeAfterAnswer;
          bodyLeft = (read.contentLength ?? 0) - (head.length - read.headBytes);
          head = null;
        } else bodyLeft -= chunk.length;
        if (bodyLeft > 0 && !closeAfter) return;
        inFlight = false;
        tally.latencies.push(nowMs() - sentAt);
        count(tally, status ? String(status) : 'not HTTP');
        if (closeAfter) end();
        else send();
      });
    };
    open();
  });
}

const handlers = {
  /**
   * Floods from `startAt` for `durationMs`. Returns the answers by status (and the requests
   * left unanswered, by cause), their latency, the connections opened, and this process's own
   * CPU over the flood.
   */
  async flood(request: FloodRequest) {
    const requests = floodRequests(request);
    const tally: Tally = { latencies: [], outcomes: {}, connectionsOpened: 0 };
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, request.startAt - nowMs())));
    const cpuBefore = process.cpuUsage();
    const startedAt = nowMs();
    const endAt = startedAt + request.durationMs;
    await Promise.all(Array.from({ length: request.connections }, () => floodConnection(request, requests, tally, endAt)));
    const elapsedMs = nowMs() - startedAt;
    const cpu = process.cpuUsage(cpuBefore);
    const requestsSent = Object.values(tally.outcomes).reduce((a, b) => a + b, 0);
    return {
      requests: requestsSent,
      elapsedMs: round(elapsedMs),
      statuses: tally.outcomes,
      latencyMs: percentiles(tally.latencies, [50, 99]),
      connectionsOpened: tally.connectionsOpened,
      clientCpuMs: round((cpu.user + cpu.system) / 1000),
      clientCpuUsPerRequest: requestsSent ? round((cpu.user + cpu.system) / requestsSent) : null,
    };
  },

  /** Resolves once a connection to host:port opens: the service is reachable from here. */
  async reach({ host, port, timeoutMs }: { host: string; port: number; timeoutMs: number }) {
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host, port, timeout: timeoutMs });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('timeout', () => {
        socket.destroy();
        reject(new Error(`no connection to ${host}:${port} within ${timeoutMs} ms`));
      });
      socket.once('error', reject);
    });
    return {};
  },

  stop() {
    setTimeout(() => process.exit(0), 50);
    return {};
  },
};
serveRpc(handlers);

export type FlooderApi = Served<typeof handlers>;
export type FloodAnswers = Awaited<ReturnType<FlooderApi['flood']>>;
