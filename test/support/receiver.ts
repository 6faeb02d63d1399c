// A real HTTPS webhook receiver on loopback for integration tests.
import { EventEmitter, once } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  receivedAt: Date;
  /** SNI name the client sent, null for none (IP-literal URLs). */
  servername: string | null;
  /** The common name of the client certificate the sender presented (a receiver started with `clientCa`), else null. */
  clientCommonName: string | null;
}

export interface Reply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Default empty. */
  body?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (no status line at all). */
  hang?: boolean;
  /** Send status, headers and body, but never end the response. */
  leaveOpen?: boolean;
}

export type ReplyHandler = (request: ReceivedRequest) => Reply | Promise<Reply>;

export interface Receiver {
  /** Base URL, e.g. https://127.0.0.1:PORT */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  urlFor(path: string): string;
  /** Requests received, in order, each recorded once its body has been read. */
  readonly requests: ReceivedRequest[];
  /** TLS connections accepted (completed handshakes). */
  readonly connections: number;
  respondWith(reply: Reply | ReplyHandler): void;
  /** Answers 200 again, as when it started (the requests received are kept). */
  reset(): void;
  waitForRequests(count: number, options?: { timeoutMs?: number }): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** Mutual TLS: only a client presenting a certificate this CA issued completes a handshake. */
  clientCa?: string;
}

export async function startReceiver(options: { cert: string; key: string; host?: string } & ReceiverOptions): Promise<Receiver> {
  const host = options.host ?? '127.0.0.1';
  const requests: ReceivedRequest[] = [];
  const events = new EventEmitter();
  const timers = new Set<NodeJS.Timeout>();
  const answerOk: ReplyHandler = () => ({});
  let handler = answerOk;
  let connections = 0;

  const mutualTls = options.clientCa === undefined ? {} : { requestCert: true, rejectUnauthorized: true, ca: [options.clientCa] };
  const server = https.createServer({ cert: options.cert, key: options.key, ...mutualTls }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        receivedAt: new Date(),
        servername: ((req.socket as TLSSocket).servername as string | false | undefined) || null,
        clientCommonName: options.clientCa === undefined ? null : commonNameOf((req.socket as TLSSocket).getPeerCertificate()),
      };
      requests.push(received);
      events.emit('request');

      void Promise.resolve(handler(received)).then((reply) => {
        if (reply.hang) return;
        const answer = () => {
          res.writeHead(reply.status ?? 200, reply.headers);
          if (reply.leaveOpen) res.write(reply.body ?? '');
          else res.end(reply.body ?? '');
        };
        if (!reply.delayMs) return answer();
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, reply.delayMs);
        timers.add(timer);
      });
    });
  });
  server.on('secureConnection', () => {
    connections += 1;
  });

  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    host,
    port,
    urlFor: (path) => url + path,
    requests,
    get connections() {
      return connections;
    },
    respondWith(reply) {
      handler = typeof reply === 'function' ? reply : () => reply;
    },
    reset() {
      handler = answerOk;
    },
    async waitForRequests(count, { timeoutMs = 5000 } = {}) {
      if (requests.length >= count) return requests;
      return new Promise<ReceivedRequest[]>((resolve, reject) => {
        const onRequest = () => {
          if (requests.length < count) return;
          cleanup();
          resolve(requests);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`expected ${count} request(s) within ${timeoutMs} ms, got ${requests.length}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          events.off('request', onRequest);
        };
        events.on('request', onRequest);
      });
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

function commonNameOf(certificate: PeerCertificate): string | null {
  const name = certificate.subject?.CN;
  return typeof name === 'string' ? name : null;
}
