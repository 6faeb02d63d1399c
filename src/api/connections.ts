// The HTTP server against slow and idle clients: Node's time-outs, from configuration, and a
// cap on the connections one client address holds open at once, so that no client holds the
// sockets others need. What a deployment puts in front of it for larger floods: docs/operating.md.
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpServerConfig } from '../config';
import type { Logger } from '../logger';
import { metrics } from '../metrics';
import { addressKey } from './rate-limits';

/**
 * How often Node looks for requests past their headers or request time-out: a time-out is
 * honoured up to this much late (Node's default, 30 s, would let a 10 s one run to 40 s).
 */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/** Refusals are logged as one summary line per window, never one per connection. */
const REFUSAL_LOG_WINDOW_MS = 10_000;

/** The summary names this many of the addresses refused most. */
const REFUSAL_LOG_ADDRESSES = 5;

/**
 * The options of `http.createServer`, as Node 20 applies them:
 * - headersTimeout: from the start of a request (a new connection's accept, or the first byte
 *   of the next request on a kept-alive one) until its headers are in; past it Node answers
 *   408 and closes the connection. A connection that sends nothing is closed so too.
 * - requestTimeout: the same for the whole request, body included (a trickled body). Not the
 *   answer's time, and not a connection upgraded to a WebSocket (the relay), which leaves
 *   Node's checks at the upgrade. Node refuses a headersTimeout longer than this.
 * - keepAliveTimeout: how long a connection may idle after an answer before Node closes it;
 *   Node announces it (`Keep-Alive: timeout=5`) and closes about a second after it, so that
 *   a client stops reusing the connection first.
 * - connectionsCheckingInterval: see CONNECTIONS_CHECK_INTERVAL_MS.
 */
export function httpServerOptions(config: HttpServerConfig): ServerOptions {
  return {
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
  };
}

/** The open connections of each client address key, held to `maxPerAddress` (0: no cap). */
export interface ConnectionCap {
  /** Counts a new connection of `key` and says true, or says false when `key` holds the most already. */
  admit(key: string): boolean;
  /** A connection `admit` counted has closed. */
  release(key: string): void;
}

export function createConnectionCap(maxPerAddress: number): ConnectionCap {
  // Only keys with connections open: the map is as large as the connections are many.
  const open = new Map<string, number>();
  return {
    admit(key) {
      const count = open.get(key) ?? 0;
      if (maxPerAddress > 0 && count >= maxPerAddress) return false;
      open.set(key, count + 1);
      return true;
    },
    release(key) {
      const count = open.get(key) ?? 0;
      if (count > 1) open.set(key, count - 1);
      else open.delete(key);
    },
  };
}

/** Refusals gathered into one warning per window: how many, and the addresses refused most. */
export interface RefusalLog {
  record(key: string): void;
  /** Logs what the window holds now, if anything (also at stop, so that nothing is dropped). */
  flush(): void;
}

export function createRefusalLog(logger: Logger, windowMs = REFUSAL_LOG_WINDOW_MS): RefusalLog {
  // At most one key per MAX_CONNECTIONS_PER_ADDRESS connections open: an address is refused
  // only while it holds that many.
  const byAddress = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  const log: RefusalLog = {
    record(key) {
      byAddress.set(key, (byAddress.get(key) ?? 0) + 1);
      timer ??= setTimeout(() => log.flush(), windowMs).unref();
    },
    flush() {
      clearTimeout(timer);
      timer = undefined;
      if (byAddress.size === 0) return;
      const counts = [...byAddress].sort(([, a], [, b]) => b - a);
      byAddress.clear();
      logger.warn({
        msg: 'connections refused',
        reason: 'per_address',
        refused: counts.reduce((sum, [, count]) => sum + count, 0),
        addresses: counts.length,
        most: counts.slice(0, REFUSAL_LOG_ADDRESSES).map(([address, refused]) => ({ address, refused })),
      });
    },
  };
  return log;
}

/**
 * Holds `server`'s connections to the cap per client address: over it a new connection is
 * destroyed as it is accepted. Counted on the socket's peer (an IPv6 address by its /64, as
 * the rate limits count it), for as long as the socket is open, a relay's WebSocket included.
 */
export function capConnections(server: Server, maxPerAddress: number, logger: Logger): { stop(): void } {
  const cap = createConnectionCap(maxPerAddress);
  const refusals = createRefusalLog(logger);
  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress ?? '');
    if (!cap.admit(key)) {
      socket.destroy();
      metrics.connectionsRefused.inc({ reason: 'per_address' });
      refusals.record(key);
      return;
    }
    metrics.connectionsOpen.inc();
    socket.once('close', () => {
      cap.release(key);
      metrics.connectionsOpen.dec();
    });
  });
  return { stop: () => refusals.flush() };
}
