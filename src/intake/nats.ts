// List writes from NATS JetStream (DESIGN.md §18): the stream NATS_STREAM on NATS_SUBJECT and
// the durable pull consumer NATS_CONSUMER, both created when missing and shared by every
// service process (work-queue semantics: each message goes to one process at a time; one left
// unacked goes to another after ACK_WAIT_MS). Refused messages are kept in a stream of their own.
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { connect, nanos, type NodeConnectionOptions } from '@nats-io/transport-node';
import type { NatsConfig } from '../config';
import type { IntakeDeps } from './list-writes';
import { countConsumed, countSettled, inFlight, judgeMessage, RETRY_AFTER_MS, type BrokerConsumer } from './messages';

/** A message delivered and neither acked nor nakked this long (its process died) is delivered again. */
export const ACK_WAIT_MS = 30_000;

/** Where refused messages are kept: the stream `<NATS_STREAM>_REJECTED` on the subject `<NATS_SUBJECT>.rejected`. */
export function rejectedOf(config: Pick<NatsConfig, 'stream' | 'subject'>): { stream: string; subject: string } {
  return { stream: `${config.stream}_REJECTED`, subject: `${config.subject}.rejected` };
}

/**
 * The client's options from NATS_URL: its servers, and the credentials the first one carries
 * (`user:password@`, or a token as `token@`), which the client takes as options of their own.
 */
export function connectionOptions(url: string): NodeConnectionOptions {
  const servers = url.split(',').map((server) => new URL(server.trim()));
  const withCredentials = servers.find((server) => server.username !== '');
  const credentials =
    withCredentials === undefined
      ? {}
      : withCredentials.password === ''
        ? { token: decodeURIComponent(withCredentials.username) }
        : { user: decodeURIComponent(withCredentials.username), pass: decodeURIComponent(withCredentials.password) };
  return {
    servers: servers.map((server) => `${server.protocol}//${server.host}`),
    ...credentials,
    name: 'svc-webhooks',
    // Once connected, never give up: the consumer goes on when the server is back.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
  };
}

const isMissing = (error: unknown, code: number) => error instanceof JetStreamApiError && error.code === code;

/** Creates the stream when missing; one that exists is left as its operator made it. */
async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await jsm.streams.info(config.name);
  } catch (error) {
    if (!isMissing(error, JetStreamApiCodes.StreamNotFound)) throw error;
    // Processes starting at once may race: adding a stream that exists with this config succeeds.
    await jsm.streams.add(config);
  }
}

async function ensureConsumer(jsm: JetStreamManager, config: NatsConfig): Promise<void> {
  try {
    const info = await jsm.consumers.info(config.stream, config.consumer);
    // The bound is the service's: the last process started with another sets it.
    if (info.config.max_ack_pending !== config.maxAckPending) {
      await jsm.consumers.update(config.stream, config.consumer, { max_ack_pending: config.maxAckPending });
    }
  } catch (error) {
    if (!isMissing(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
    await jsm.consumers.add(config.stream, {
      durable_name: config.consumer,
      filter_subject: config.subject,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ACK_WAIT_MS),
      max_ack_pending: config.maxAckPending,
      deliver_policy: DeliverPolicy.All,
    });
  }
}

/** The streams and the consumer, created when missing (also by tests and the bench before they publish). */
export async function ensureNatsTopology(jsm: JetStreamManager, config: NatsConfig): Promise<void> {
  // A work queue: a message acked is removed, so the stream holds only what is still to do.
  await ensureStream(jsm, {
    name: config.stream,
    subjects: [config.subject],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
  });
  const rejected = rejectedOf(config);
  // Kept until an operator removes them (docs/operating.md).
  await ensureStream(jsm, {
    name: rejected.stream,
    subjects: [rejected.subject],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
  });
  await ensureConsumer(jsm, config);
}

export async function startNatsConsumer(config: NatsConfig, deps: IntakeDeps): Promise<BrokerConsumer> {
  const { logger } = deps;
  const connection = await connect(connectionOptions(config.url));
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect') logger.warn({ msg: 'nats disconnected', server: status.server });
      if (status.type === 'reconnect') logger.info({ msg: 'nats reconnected', server: status.server });
    }
  })();
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(connection);
    await ensureNatsTopology(jsm, config);
  } catch (error) {
    await connection.close();
    throw error;
  }
  const js: JetStreamClient = jetstream(connection);
  const rejected = rejectedOf(config);
  const messages = await (await js.consumers.get(config.stream, config.consumer)).consume({ max_messages: config.maxAckPending });
  const work = inFlight();
  let stopping = false;

  async function handle(message: JsMsg): Promise<void> {
    countConsumed('nats', message.info.deliveryCount > 1);
    const source = {
      broker: 'nats' as const,
      seq: message.seq,
      delivery: message.info.deliveryCount,
      msgId: message.headers?.get('Nats-Msg-Id') || undefined,
    };
    const verdict = await judgeMessage(deps, message.data, source);
    try {
      if (verdict.outcome === 'refused') {
        // The stream's sequence as its id: a refusal kept before a crash, and judged again, is kept once.
        await js.publish(rejected.subject, verdict.deadLetter, { msgID: `${config.stream}:${message.seq}` });
      }
      if (verdict.outcome === 'failed') message.nak(RETRY_AFTER_MS);
      else message.ack();
      countSettled('nats', verdict);
    } catch (error) {
      // Unacked, it comes again after ACK_WAIT_MS at the latest.
      logger.warn({ msg: 'nats message left to come again', ...source, err: error });
      countSettled('nats', 'failed');
      if (!connection.isClosed()) message.nak(RETRY_AFTER_MS);
    }
  }

  const consuming = (async () => {
    for await (const message of messages) {
      // Taken while stopping: handed back at once, for another process.
      if (stopping) message.nak();
      else work.track(handle(message));
    }
  })().catch((error: unknown) => logger.error({ msg: 'nats consumer stopped', err: error }));

  return {
    broker: 'nats',
    reachable: () => connection.rtt().then(() => true),
    pending: async () => (await jsm.consumers.info(config.stream, config.consumer)).num_pending,
    async stop() {
      stopping = true;
      await messages.close();
      await consuming;
      await work.settled();
      await connection.drain();
    },
  };
}
