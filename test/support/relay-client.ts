// A relay session's connection as the tests drive it: what `svc-webhooks listen` does, without
// a local server: each request handed over is kept and answered as the test says.
import WebSocket from 'ws';
import type { RelayAnswerMessage, ServiceMessage } from '../../src/relay/protocol';
import type { RequestFunction } from './stack';
import { waitFor } from './wait';

export type RelayedRequest = Extract<ServiceMessage, { type: 'request' }>;
/** The answer to give a request: a response, or the error the command line would send. */
export type LocalAnswer =
  | { status: number; headers?: Record<string, string>; body?: string; bodyTruncated?: boolean }
  | { error: 'connection' | 'timeout' | 'tls' }
  /** Never answered. */
  | 'silence';

export interface RelayConnection {
  socket: WebSocket;
  /** Every request handed over, in order. */
  requests: RelayedRequest[];
  /** How the next requests are answered (default: 200 with body "ok"). */
  answerWith(answer: LocalAnswer | ((request: RelayedRequest) => LocalAnswer)): void;
  /** Settles with the close code once the service or the test closed the connection. */
  closed: Promise<number>;
  close(): Promise<number>;
}

/** Where a connection comes from: by default the system's choice of loopback address. */
export interface RelayConnectionOptions {
  localAddress?: string;
}

/** Issues a ticket of the session and opens its connection; resolves once the session is the connection's. */
export async function connectRelay(
  request: RequestFunction,
  apiUrl: string,
  token: string,
  webhookId: string,
  options: RelayConnectionOptions = {},
): Promise<RelayConnection> {
  const issued = await request('POST', `/v3/webhooks/${webhookId}/relay-connections`, { token });
  if (issued.status !== 201) throw new Error(`ticket refused: ${issued.status} ${JSON.stringify(issued.body)}`);
  return openRelayConnection(apiUrl, issued.body.ticket, options);
}

/** Opens a connection with a ticket; resolves once the service says it is ready. */
export function openRelayConnection(
  apiUrl: string,
  ticket: string,
  { localAddress }: RelayConnectionOptions = {},
): Promise<RelayConnection> {
  const socket = new WebSocket(`${apiUrl.replace(/^http/, 'ws')}/v3/relay-connections/${ticket}`, { localAddress });
  const requests: RelayedRequest[] = [];
  let answer: (request: RelayedRequest) => LocalAnswer = () => ({ status: 200, body: 'ok' });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  const connection: RelayConnection = {
    socket,
    requests,
    answerWith(given) {
      answer = typeof given === 'function' ? given : () => given;
    },
    closed,
    close() {
      socket.close(1000);
      return closed;
    },
  };
  return new Promise((resolve, reject) => {
    socket.on('unexpected-response', (_, response) => reject(new Error(`connection refused: HTTP ${response.statusCode}`)));
    socket.on('error', reject);
    socket.on('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as ServiceMessage;
      if (message.type === 'ready') {
        resolve(connection);
        return;
      }
      requests.push(message);
      const given = answer(message);
      if (given === 'silence') return;
      const reply: RelayAnswerMessage =
        'error' in given
          ? { type: 'answer', id: message.id, error: given.error }
          : {
              type: 'answer',
              id: message.id,
              statusCode: given.status,
              headers: given.headers ?? {},
              body: given.body ?? '',
              bodyTruncated: given.bodyTruncated ?? false,
            };
      socket.send(JSON.stringify(reply));
    });
  });
}

/** Waits until the connection has been handed `count` requests, and returns them. */
export async function relayedRequests(connection: RelayConnection, count: number): Promise<RelayedRequest[]> {
  return waitFor(async () => (connection.requests.length >= count ? connection.requests : undefined), {
    what: `${count} relayed requests`,
  });
}
