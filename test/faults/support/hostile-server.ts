// A loopback server whose behaviour a test chooses and can change while it runs: it can
// behave (an ordinary HTTPS receiver, so that a webhook can be registered) and then turn
// hostile at any layer: TCP (accept and never read), TLS (a certificate or protocol version
// the client refuses, no TLS at all) or HTTP (anything written raw on the TLS socket).
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex, Writable } from 'node:stream';
import tls from 'node:tls';

export interface TlsSettings {
  cert: string;
  key: string;
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  ciphers?: string;
}

export interface Behaviour {
  /** The TLS the server speaks; false: none (the TCP socket goes straight to onConnection). */
  tls: TlsSettings | false;
  /** Takes the connection once TLS is up (or the bare TCP socket). `raw` is the TCP socket under it, for resets. */
  onConnection(socket: Duplex, raw: net.Socket, server: HostileServer): void;
}

export interface HostileStats {
  /** TCP connections accepted. */
  connections: number;
  /** TLS handshakes completed. */
  handshakes: number;
  /** Requests whose first bytes arrived (counted by the behaviours that read them). */
  requests: number;
  /** Response bytes the behaviours wrote. */
  bytesSent: number;
}

export interface HostileServer {
  readonly port: number;
  /** https://127.0.0.1:PORT */
  readonly url: string;
  urlFor(path: string): string;
  readonly stats: Readonly<HostileStats>;
  /** Switches behaviour for new connections and drops the open ones (kept-alive sockets included). */
  behave(behaviour: Behaviour): void;
  /** Resolves once `stats[stat]` reaches `count`. */
  waitFor(stat: keyof HostileStats, count: number, timeoutMs?: number): Promise<void>;
  /** Called by behaviours. */
  count(stat: keyof HostileStats, by?: number): void;
  /** Sets every figure back to 0, e.g. once a webhook is registered and the hostile part begins. */
  resetStats(): void;
  close(): Promise<void>;
}

export async function startHostileServer(initial: Behaviour): Promise<HostileServer> {
  const stats: HostileStats = { connections: 0, handshakes: 0, requests: 0, bytesSent: 0 };
  const events = new EventEmitter();
  const open = new Set<net.Socket>();
  const contexts = new WeakMap<TlsSettings, tls.SecureContext>();
  let current = initial;

  const contextFor = (settings: TlsSettings): tls.SecureContext => {
    let context = contexts.get(settings);
    if (!context) {
      context = tls.createSecureContext(settings);
      contexts.set(settings, context);
    }
    return context;
  };

  const server = net.createServer((raw) => {
    open.add(raw);
    raw.on('close', () => open.delete(raw));
    raw.on('error', () => {});
    hostile.count('connections');
    const behaviour = current;
    if (behaviour.tls === false) {
      behaviour.onConnection(raw, raw, hostile);
      return;
    }
    let secureContext: tls.SecureContext;
    try {
      secureContext = contextFor(behaviour.tls);
    } catch {
      raw.destroy(); // settings this OpenSSL refuses (say, a protocol version it was built without)
      return;
    }
    const socket = new tls.TLSSocket(raw, { isServer: true, secureContext });
    socket.on('error', () => {}); // the client refusing us is the point of some behaviours
    socket.on('secure', () => {
      hostile.count('handshakes');
      behaviour.onConnection(socket, raw, hostile);
    });
  });

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `https://127.0.0.1:${port}`;

  const hostile: HostileServer = {
    port,
    url,
    urlFor: (path) => url + path,
    stats,
    behave(behaviour) {
      current = behaviour;
      for (const socket of open) socket.destroy();
    },
    waitFor(stat, count, timeoutMs = 10_000) {
      if (stats[stat] >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (stats[stat] < count) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`expected ${stat} to reach ${count} within ${timeoutMs} ms, got ${stats[stat]}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          events.off('count', check);
        };
        events.on('count', check);
      });
    },
    count(stat, by = 1) {
      stats[stat] += by;
      events.emit('count');
    },
    resetStats() {
      Object.assign(stats, { connections: 0, handshakes: 0, requests: 0, bytesSent: 0 });
    },
    async close() {
      const closed = once(server, 'close');
      server.close();
      for (const socket of open) socket.destroy();
      await closed;
    },
  };
  return hostile;
}

// ---- building blocks for behaviours ----

/** An ordinary HTTP server on the connection; `handler` may be hostile itself. */
export function httpBehaviour(
  settings: TlsSettings | false,
  handler: (req: http.IncomingMessage, res: http.ServerResponse, raw: net.Socket, server: HostileServer) => void,
): Behaviour {
  const raws = new WeakMap<Duplex, net.Socket>();
  let server: HostileServer;
  // Node's own clientError handling stays: a request it cannot parse gets a plain 400.
  const httpServer = http.createServer((req, res) => {
    server.count('requests');
    req.resume();
    req.on('end', () => handler(req, res, raws.get(req.socket)!, server));
  });
  return {
    tls: settings,
    onConnection(socket, raw, hostile) {
      server = hostile;
      raws.set(socket, raw);
      httpServer.emit('connection', socket);
    },
  };
}

/** Calls `then` once the first bytes of the request have arrived (counted as a request). */
export function afterRequestBytes(socket: Duplex, server: HostileServer, then: () => void): void {
  socket.once('data', () => {
    server.count('requests');
    then();
  });
}

/** Calls `tick` every `ms` until the socket closes; stops if `tick` returns false. */
export function everyUntilClosed(socket: Duplex, ms: number, tick: () => boolean | void): void {
  const timer = setInterval(() => {
    if (socket.destroyed || tick() === false) clearInterval(timer);
  }, ms);
  socket.once('close', () => clearInterval(timer));
}

/**
 * Writes `total` bytes of `chunk` repeated (the last one cut to size), waiting for
 * 'drain' as a well-behaved stream would; stops when the other side goes away. Nothing
 * larger than one chunk is ever held. Resolves with the bytes written.
 */
export async function streamBytes(stream: Writable, chunk: Buffer, total: number, server: HostileServer): Promise<number> {
  let sent = 0;
  let closed = false;
  let wake = () => {};
  stream.once('close', () => {
    closed = true;
    wake();
  });
  while (sent < total && !closed && !stream.destroyed && !stream.writableEnded) {
    const piece = total - sent >= chunk.length ? chunk : chunk.subarray(0, total - sent);
    sent += piece.length;
    server.count('bytesSent', piece.length);
    if (!stream.write(piece)) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        stream.once('drain', resolve);
      });
    }
  }
  return sent;
}
