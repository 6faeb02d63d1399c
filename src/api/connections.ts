// The HTTP server against slow and idle clients: Node's time-outs, from configuration, and a
// cap on the connections one client address holds open at once, so that no client holds the
// sockets others need. What a deployment puts in front of it for larger floods: docs/operating.md.
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpServerConfig } from '../config';
import type { Logger } from '../logger';
import { metrics } from '../metrics';
import { addressKey } from './rate-limits';
import { createRefusalLog } from './refusal-log';

/**
 * How often Node looks for requests past their headers or request time-out: a time-out is
 * honoured up to this much late (Node's default, 30 s, would let a 10 s one run to 40 s).
 */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

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

/**
 * Holds `server`'s connections to the cap per client address: over it a new connection is
 * destroyed as it is accepted. Counted on the socket's peer (an IPv6 address by its /64, as
 * the rate limits count it), for as long as the socket is open, a relay's WebSocket included.
 */
export function capConnections(server: Server, maxPerAddress: number, logger: Logger): { stop(): void } {
  const cap = createConnectionCap(maxPerAddress);
  const refusals = createRefusalLog<'per_address'>(logger, { msg: 'connections refused', level: 'warn' });
  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress ?? '');
    if (!cap.admit(key)) {
      socket.destroy();
      metrics.connectionsRefused.inc({ reason: 'per_address' });
      refusals.count({ reason: 'per_address', address: key });
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
