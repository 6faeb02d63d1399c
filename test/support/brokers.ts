// The machine's brokers as tests use them (.ci/run starts them when absent): names of a run's
// own, so that runs never collide, and an upstream's side of each broker (a publisher, and
// the dead-letter read back), which deletes what the run made when closed.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { AmqpConfig, NatsConfig } from '../../src/config';
import { assertAmqpQueues, rejectedQueueOf, sendConfirmed } from '../../src/intake/amqp';
import type { BrokerName } from '../../src/intake/messages';
import { connectionOptions, ensureNatsTopology, rejectedOf } from '../../src/intake/nats';

/** The machine's NATS server with JetStream, and its RabbitMQ. */
export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** The variables of a run's own stream, subject, consumer and queue. */
export function brokerNames(prefix = 'test'): Record<'NATS_STREAM' | 'NATS_SUBJECT' | 'NATS_CONSUMER' | 'AMQP_QUEUE', string> {
  const id = `${prefix}-${randomBytes(4).toString('hex')}`;
  return {
    NATS_STREAM: `WRITES_${id.replaceAll('-', '_')}`,
    NATS_SUBJECT: `${id}.list-writes`,
    NATS_CONSUMER: id,
    AMQP_QUEUE: `${id}.list-writes`,
  };
}

/** The service's config of each broker, at `urls` (default: the machine's), under `names`. */
export function brokerConfigs(
  names: ReturnType<typeof brokerNames>,
  urls: { nats?: string; amqp?: string } = {},
): { nats: NatsConfig; amqp: AmqpConfig } {
  return {
    nats: {
      url: urls.nats ?? NATS_URL,
      stream: names.NATS_STREAM,
      subject: names.NATS_SUBJECT,
      consumer: names.NATS_CONSUMER,
      maxAckPending: 32,
    },
    amqp: { url: urls.amqp ?? AMQP_URL, queue: names.AMQP_QUEUE, prefetch: 32 },
  };
}

/** An upstream's side of one broker. */
export interface TestBroker {
  readonly name: BrokerName;
  /**
   * Publishes a message (JSON, or a string sent as it is) and waits for the broker to hold it;
   * `id`: its dedupe id (Nats-Msg-Id, or the AMQP message-id).
   */
  publish(body: unknown, id?: string): Promise<void>;
  /** Every message in the dead-letter so far, parsed, in the order kept. */
  rejected(): Promise<unknown[]>;
  /** Deletes the run's streams or queues, and disconnects. */
  close(): Promise<void>;
}

const bytesOf = (body: unknown) => Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));

export async function natsTestBroker(config: NatsConfig): Promise<TestBroker> {
  const connection: NatsConnection = await natsConnect({ ...connectionOptions(config.url), name: 'test-upstream' });
  const jsm: JetStreamManager = await jetstreamManager(connection);
  const js: JetStreamClient = jetstream(connection);
  // Made as the service makes them, so that nothing published before it starts is lost.
  await ensureNatsTopology(jsm, config);
  const rejected = rejectedOf(config);
  return {
    name: 'nats',
    async publish(body, id) {
      await js.publish(config.subject, bytesOf(body), id === undefined ? {} : { msgID: id });
    },
    async rejected() {
      const { state } = await jsm.streams.info(rejected.stream);
      const kept: unknown[] = [];
      for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
        const message = await jsm.streams.getMessage(rejected.stream, { seq });
        if (message) kept.push(message.json());
      }
      return kept;
    },
    async close() {
      await Promise.allSettled([jsm.streams.delete(config.stream), jsm.streams.delete(rejected.stream)]);
      await connection.close();
    },
  };
}

export async function amqpTestBroker(config: AmqpConfig): Promise<TestBroker> {
  const connection: ChannelModel = await amqp.connect(config.url);
  const channel: ConfirmChannel = await connection.createConfirmChannel();
  // A broker restart closes both with an error: seen by the calls that fail after it, not thrown here.
  connection.on('error', () => {});
  channel.on('error', () => {});
  await assertAmqpQueues(connection, config.queue);
  /** Read off the queue as they come (a get takes a message): kept here for the next call. */
  const taken: unknown[] = [];
  return {
    name: 'amqp',
    async publish(body, id) {
      await sendConfirmed(channel, config.queue, bytesOf(body), { persistent: true, contentType: 'application/json', messageId: id });
    },
    async rejected() {
      for (;;) {
        const message = await channel.get(rejectedQueueOf(config.queue), { noAck: true });
        if (message === false) break;
        taken.push(JSON.parse(message.content.toString('utf8')));
      }
      return [...taken];
    },
    async close() {
      await Promise.allSettled([channel.deleteQueue(config.queue), channel.deleteQueue(rejectedQueueOf(config.queue))]);
      await connection.close();
    },
  };
}

/** The upstream's side of `broker`. */
export const testBroker = (broker: BrokerName, configs: ReturnType<typeof brokerConfigs>): Promise<TestBroker> =>
  broker === 'nats' ? natsTestBroker(configs.nats) : amqpTestBroker(configs.amqp);

/** `url` with its host and port replaced by a loopback proxy's (credentials kept). */
export function throughPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.host = `127.0.0.1:${port}`;
  return parsed.href;
}

/** The host and port of a broker URL (for a proxy in front of it). */
export function hostAndPort(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}
