// The worker's side of the relay: a delivery to a relay session is notified, in PostgreSQL, to
// the API process that holds the session's connection, and the local server's answer comes
// back the same way. It is signed and logged as any POST is (activities/delivery-bookkeeping.ts):
// only the sender differs. Its outcome is never told to `webhook/{id}` (activities/deliveries.ts).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { findRelayConnection, newConnectionKey, takeRelayAnswer } from '../db/relay-sessions';
import type { Sql } from '../db/sql';
import { exchangeOf, sentRequest, statusError, type HttpExchange, type HttpSender } from '../delivery/sender';
import type { DeliveryError, ReceivedResponse } from '../objects';
import { connectionChannel, type RelayAnswer, type RelayNotification } from './protocol';

const RELAY_SCHEME = 'relay:';
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_NOTIFICATION_BYTES = 7999;

/** Sends to relay sessions through `relay` and to every other URL through `https`. */
export function routeRelayed(https: HttpSender, relay: HttpSender): HttpSender {
  return {
    // A relay session carries no receiver credentials (the API refuses them): only https presents any.
    post: (url, body, headers, credentials) =>
      url.startsWith(RELAY_SCHEME) ? relay.post(url, body, headers) : https.post(url, body, headers, credentials),
    async close() {
      await Promise.all([https.close(), relay.close()]);
    },
  };
}

/** The relay session's webhook id in its URL, relay://{id}. */
function sessionOf(url: string): string {
  return url.slice(`${RELAY_SCHEME}//`.length);
}

export function createRelaySender(sql: Sql, { timeoutMs, userAgent }: { timeoutMs: number; userAgent: string }): HttpSender {
  // This process's answers are told on a channel of its own; it listens from its first relay on.
  const answerChannel = `relay_answers_${newConnectionKey()}`;
  const waiting = new Map<string, () => void>();
  let listening: Promise<{ unlisten(): Promise<void> }> | undefined;

  async function post(url: string, body: string, headers: Record<string, string>): Promise<HttpExchange> {
    const started = performance.now();
    const request = sentRequest(url, body, headers, userAgent);
    const exchange = (error: DeliveryError | null, response: ReceivedResponse | null): HttpExchange =>
      exchangeOf(request, started, error, response?.statusCode ?? null, response);

    listening ??= sql
      .listen(answerChannel, (id) => waiting.get(id)?.())
      .catch((error: unknown) => {
        listening = undefined; // the next delivery tries again
        throw error;
      });
    await listening;
    const webhookId = sessionOf(url);
    const connection = await findRelayConnection(sql, webhookId);
    // No command line is connected: it fails at once rather than at the deadline.
    if (connection === null || !connection.open) return exchange('relay_disconnected', null);

    const id = randomUUID();
    const notification = JSON.stringify({ id, answerTo: answerChannel, headers: request.headers, body } satisfies RelayNotification);
    // Deliveries are a few hundred bytes; one that could not be notified is our failure, not the receiver's.
    if (Buffer.byteLength(notification) > MAX_NOTIFICATION_BYTES) return exchange('internal', null);

    const answered = new Promise<boolean>((resolve) => {
      waiting.set(id, () => resolve(true));
      setTimeout(() => resolve(false), timeoutMs).unref();
    });
    try {
      await sql.notify(connectionChannel(connection.key), notification);
      if (!(await answered)) {
        // No answer by the deadline: the local server was slow, unless the connection went away meanwhile.
        const now = await findRelayConnection(sql, webhookId);
        return exchange(now?.key === connection.key && now.open ? 'timeout' : 'relay_disconnected', null);
      }
    } finally {
      waiting.delete(id);
    }
    const answer = (await takeRelayAnswer(sql, id)) as RelayAnswer | null;
    if (answer === null) return exchange('internal', null);
    if ('error' in answer) return exchange(answer.error, null);
    return exchange(statusError(answer.statusCode), answer);
  }

  return {
    post,
    async close() {
      await (await listening)?.unlisten();
    },
  };
}
