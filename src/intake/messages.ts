// List writes from message brokers (DESIGN.md §18): what every consumer does with a message,
// whichever broker it came from. A message is judged as the route would answer its body:
// accepted (acked once ingestListWrite returns, as the route answers 202), refused (400, 404,
// 409, 413: acked once kept in the dead-letter with its error) or failed on our side (left
// unacked, to come again).
import { ApiError, apiErrors, errorEnvelopeOf } from '../api/errors';
import { validate, validators } from '../api/schemas';
import { INTERNAL_BODY_LIMIT_BYTES } from '../limits';
import { metrics } from '../metrics';
import type { WriteAccepted } from '../objects';
import { ingestListWrite, type IntakeDeps } from './list-writes';

export type BrokerName = 'nats' | 'amqp';

/** How operators know each broker: by its name and the variable that configures it. */
export const BROKER_LABELS: Record<BrokerName, string> = { nats: 'NATS (NATS_URL)', amqp: 'RabbitMQ (AMQP_URL)' };

/**
 * How long a message that failed on our side waits before it comes again (NATS: the nak's
 * delay; RabbitMQ: the pause before its requeue): the Retry-After of the route's 503.
 */
export const RETRY_AFTER_MS = 5_000;

/** The statuses of a refusal: the message is the upstream's to fix, so it goes to the dead-letter. */
const REFUSED_STATUSES = new Set([400, 404, 409, 413]);

export type Verdict =
  | { outcome: 'accepted'; accepted: WriteAccepted }
  /** `deadLetter`: `{"message": <the body>, "error": {...}}`, the contract's envelope beside the message. */
  | { outcome: 'refused'; code: string; deadLetter: string }
  | { outcome: 'failed'; error: unknown };

/** Where a message came from, for the log: the broker and its own ids of the message. */
export type MessageSource = { broker: BrokerName } & Record<string, unknown>;

/**
 * A message's verdict, the write ingested when it is accepted. Its body is the route's with
 * `listId` added; one that is not JSON is kept in the dead-letter as its text.
 */
export async function judgeMessage(deps: IntakeDeps, content: Uint8Array, source: MessageSource): Promise<Verdict> {
  const text = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
  let message: unknown = text;
  try {
    if (content.byteLength > INTERNAL_BODY_LIMIT_BYTES) throw apiErrors.payloadTooLarge(INTERNAL_BODY_LIMIT_BYTES);
    try {
      message = JSON.parse(text);
    } catch {
      throw apiErrors.malformedJson();
    }
    const { listId, ...body } = validate(validators.brokerListWrite, message);
    return { outcome: 'accepted', accepted: await ingestListWrite(deps, listId, body, source) };
  } catch (error) {
    if (error instanceof ApiError && REFUSED_STATUSES.has(error.status)) {
      deps.logger.info({ msg: 'broker message refused', ...source, code: error.code });
      return { outcome: 'refused', code: error.code, deadLetter: JSON.stringify({ message, ...errorEnvelopeOf(error) }) };
    }
    deps.logger.warn({ msg: 'broker message failed, to come again', ...source, err: error });
    return { outcome: 'failed', error };
  }
}

/** Counts a consumed message; `redelivered`: the broker says it delivered it before. */
export function countConsumed(broker: BrokerName, redelivered: boolean): void {
  metrics.brokerConsumed.inc({ broker });
  if (redelivered) metrics.brokerRedelivered.inc({ broker });
}

/** Counts how a message ended: acked (its write accepted, or kept refused) or left to come again. */
export function countSettled(broker: BrokerName, verdict: Verdict | 'failed'): void {
  if (verdict === 'failed' || verdict.outcome === 'failed') {
    metrics.brokerFailed.inc({ broker });
    return;
  }
  metrics.brokerAcked.inc({ broker });
  if (verdict.outcome === 'refused') metrics.brokerRejected.inc({ broker, code: verdict.code });
}

/** A running consumer of one broker. */
export interface BrokerConsumer {
  readonly broker: BrokerName;
  /** Whether the broker answers now (a round trip, or the connection's state). */
  reachable(): Promise<boolean>;
  /** Messages waiting for the consumer, not yet delivered to any process. */
  pending(): Promise<number>;
  /** Stops taking messages, lets those under way settle (acked or left to come again), and disconnects. */
  stop(): Promise<void>;
}

/** Tracks the messages under way, so that a consumer stopping waits for them to settle. */
export function inFlight(): { track(work: Promise<void>): void; settled(): Promise<void>; readonly size: number } {
  const under = new Set<Promise<void>>();
  return {
    track(work) {
      under.add(work);
      const done = () => under.delete(work);
      work.then(done, done);
    },
    async settled() {
      await Promise.allSettled([...under]);
    },
    get size() {
      return under.size;
    },
  };
}
