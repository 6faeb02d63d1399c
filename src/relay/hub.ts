// The API process's side of the relay: the WebSocket connections of `svc-webhooks listen` that
// this process holds. Each connection, once its ticket is redeemed, takes its session (its
// deliveries are notified on the connection's PostgreSQL channel from then on), hands every
// delivery notified to the command line, and stores the local server's answer for the worker
// that waits for it. While a connection is open this process holds its advisory lock: a
// process that dies disconnects its sessions (src/db/relay-sessions.ts).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import postgres from 'postgres';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import {
  findSessionConnections,
  newConnectionKey,
  redeemRelayTicket,
  releaseRelaySession,
  storeRelayAnswer,
  sweepRelaySessions,
  takeRelaySession,
} from '../db/relay-sessions';
import type { Sql } from '../db/sql';
import { captureResponse } from '../delivery/response-capture';
import { lowerCaseKeys } from '../delivery/sender';
import type { Logger } from '../logger';
import type { ErrorEnvelope } from '../objects';
import { validators } from '../api/schemas';
import {
  CLOSE,
  connectionChannel,
  type RelayAnswer,
  type RelayAnswerMessage,
  type RelayNotification,
  type ServiceMessage,
} from './protocol';

export interface RelayHubOptions {
  /** A session closed this long is deleted (RELAY_GRACE_SECONDS). */
  graceSeconds: number;
  /** How long a delivery may wait for its answer; the worker's own deadline. */
  deliveryTimeoutMs: number;
  logger: Logger;
}

export interface RelayHub {
  /** An HTTP upgrade request: GET /v3/relay-connections/{ticket} becomes a connection, anything else is refused. */
  upgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  start(): Promise<void>;
  /** Closes every connection (their sessions stay, for the command lines to reconnect elsewhere). */
  stop(): Promise<void>;
}

/** How often the process sweeps expired sessions and checks that its connections still hold theirs. */
const SWEEP_MS = 1000;
/** How often each connection is pinged; one that has not answered the last ping by then is dropped. */
const HEARTBEAT_MS = 15_000;
/** The largest message a command line may send: an answer holds at most 4 KiB of body and of headers. */
const MAX_MESSAGE_BYTES = 64 * 1024;
const CONNECTION_PATH = /^\/v3\/relay-connections\/(rt_[A-Za-z0-9_-]{43})$/;

interface Connection {
  webhookId: string;
  key: number;
  socket: WebSocket;
  /** Deliveries handed over and not answered yet: their ids, with the channel of the worker that waits. */
  pending: Map<string, string>;
  alive: boolean;
  closed: Promise<void>;
}

export function createRelayHub(sql: Sql, { graceSeconds, deliveryTimeoutMs, logger }: RelayHubOptions): RelayHub {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const connections = new Set<Connection>();
  // The advisory locks of this process's connections live on this one connection: if it is
  // lost, so are they, and every connection is closed for its command line to reconnect.
  const locks = postgres({
    ...sql.options,
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    onclose: () => {
      for (const connection of connections) connection.socket.close(1012, 'service restarting');
    },
  } as unknown as postgres.Options<Record<string, never>>);
  let timers: NodeJS.Timeout[] = [];

  function refuse(socket: Duplex, status: 401 | 404, envelope: ErrorEnvelope): void {
    const body = JSON.stringify(envelope);
    const reason = status === 401 ? 'Unauthorized' : 'Not Found';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }

  function send(connection: Connection, message: ServiceMessage): void {
    connection.socket.send(JSON.stringify(message));
  }

  /** A delivery notified by a worker: handed to the command line, to be answered within the deadline. */
  function handOver(connection: Connection, payload: string): void {
    const { id, answerTo, headers, body } = JSON.parse(payload) as RelayNotification;
    connection.pending.set(id, answerTo);
    // The worker stops waiting at its deadline; an answer later than that is dropped here too.
    setTimeout(() => connection.pending.delete(id), deliveryTimeoutMs).unref();
    send(connection, { type: 'request', id, headers, body });
  }

  /** A message from the command line: an answer, kept within the delivery log's limits whatever it sent. */
  function received(connection: Connection, data: RawData): void {
    let message: unknown;
    try {
      message = JSON.parse((data as Buffer).toString('utf8')) as unknown;
    } catch {
      message = undefined;
    }
    if (!validators.relayAnswerMessage(message)) {
      connection.socket.close(1008, 'not a relay answer');
      return;
    }
    const channel = connection.pending.get(message.id);
    if (channel === undefined) return; // past its deadline, or never asked
    connection.pending.delete(message.id);
    const relayed: RelayAnswer = 'error' in message ? { error: message.error } : kept(message);
    storeRelayAnswer(sql, channel, message.id, relayed).catch((error: unknown) =>
      logger.error({ msg: 'relay answer not stored', err: error }),
    );
  }

  async function open(socket: WebSocket, webhookId: string): Promise<void> {
    const connection: Connection = {
      webhookId,
      key: newConnectionKey(),
      socket,
      pending: new Map(),
      alive: true,
      closed: Promise.resolve(),
    };
    // Its lock, then its channel: listening before the session is taken, no delivery notified after that is missed.
    const listening = locks`SELECT pg_advisory_lock(${connection.key})`.then(() =>
      sql.listen(connectionChannel(connection.key), (payload) => handOver(connection, payload)),
    );
    // From the start: a command line gone while the rest is under way still lets go of what was taken.
    connection.closed = new Promise((resolve) => {
      socket.once('close', () => {
        connections.delete(connection);
        closed(connection, listening)
          .catch((error: unknown) => logger.warn({ msg: 'relay connection not released', webhookId, err: error }))
          .finally(resolve);
      });
    });
    socket.on('message', (data) => received(connection, data));
    socket.on('pong', () => (connection.alive = true));
    await listening;
    const taken = await takeRelaySession(sql, webhookId, connection.key);
    if (taken === undefined) {
      socket.close(CLOSE.sessionGone, 'the relay session was deleted');
      return;
    }
    if (socket.readyState !== socket.OPEN) return;
    connections.add(connection);
    logger.info({ msg: 'relay connected', webhookId, replaced: taken.replaced !== null });
    send(connection, { type: 'ready', webhookId });
  }

  /** The command line has gone: what it had not answered failed, and the session is closed unless another connection took it. */
  async function closed(connection: Connection, listening: Promise<{ unlisten(): Promise<void> }>): Promise<void> {
    const { webhookId, key } = connection;
    await (await listening).unlisten();
    // Told at once, so that no worker waits for its deadline.
    for (const [id, answerTo] of connection.pending) await storeRelayAnswer(sql, answerTo, id, { error: 'relay_disconnected' });
    connection.pending.clear();
    await releaseRelaySession(sql, webhookId, key);
    await locks`SELECT pg_advisory_unlock(${key})`;
    logger.info({ msg: 'relay disconnected', webhookId });
  }

  /** Deletes expired sessions, and closes this process's connections whose sessions were deleted or taken over. */
  async function sweep(): Promise<void> {
    const { deleted } = await sweepRelaySessions(sql, graceSeconds);
    if (deleted.length > 0) logger.info({ msg: 'relay sessions expired', webhookIds: deleted });
    const held = [...connections];
    const now = await findSessionConnections(
      sql,
      held.map(({ webhookId }) => webhookId),
    );
    for (const connection of held) {
      const key = now.get(connection.webhookId);
      if (key === undefined) connection.socket.close(CLOSE.sessionGone, 'the relay session was deleted');
      else if (key !== connection.key) connection.socket.close(CLOSE.replaced, 'a newer connection took the relay session over');
    }
  }

  function heartbeat(): void {
    for (const connection of connections) {
      if (!connection.alive) connection.socket.terminate();
      connection.alive = false;
      connection.socket.ping();
    }
  }

  return {
    upgrade(request, socket, head) {
      const ticket = CONNECTION_PATH.exec(new URL(request.url ?? '/', 'http://relay').pathname)?.[1];
      if (ticket === undefined) {
        refuse(socket, 404, { error: { code: 'NOT_FOUND', message: 'No such route.' } });
        return;
      }
      redeemRelayTicket(sql, ticket)
        .then((session) => {
          if (session === null) {
            refuse(socket, 401, { error: { code: 'UNAUTHORIZED', message: 'The relay ticket is unknown, used or expired.' } });
            return;
          }
          server.handleUpgrade(request, socket, head, (webSocket) => {
            open(webSocket, session.webhookId).catch((error: unknown) => {
              logger.error({ msg: 'relay connection failed', err: error });
              webSocket.close(1011, 'internal error');
            });
          });
        })
        .catch((error: unknown) => {
          logger.error({ msg: 'relay ticket not redeemed', err: error });
          socket.destroy();
        });
    },
    async start() {
      const sweepSafely = () => sweep().catch((error: unknown) => logger.warn({ msg: 'relay sweep failed', err: error }));
      timers = [setInterval(() => void sweepSafely(), SWEEP_MS).unref(), setInterval(heartbeat, HEARTBEAT_MS).unref()];
      await sweepSafely();
    },
    async stop() {
      for (const timer of timers) clearInterval(timer);
      const open = [...connections];
      for (const connection of open) connection.socket.close(1001, 'service stopping');
      // A command line that does not answer the closing handshake is cut off.
      const cutOff = setTimeout(() => open.forEach((connection) => connection.socket.terminate()), 2000);
      await Promise.all(open.map((connection) => connection.closed));
      clearTimeout(cutOff);
      server.close();
      await locks.end({ timeout: 1 });
    },
  };
}

/** An answer as any receiver's response is kept for the log (4 KiB of headers, 4 KiB of body), whatever the command line sent. */
function kept(answer: Extract<RelayAnswerMessage, { statusCode: number }>): RelayAnswer {
  const capture = captureResponse(answer.statusCode, lowerCaseKeys(answer.headers));
  capture.keep(Buffer.from(answer.body));
  if (!answer.bodyTruncated) capture.end();
  return capture.response();
}
