// The consumers of list writes from message brokers (DESIGN.md §18) that an API process runs
// (src/service.ts): one per configured broker, each calling what the route calls.
import { Gauge } from 'prom-client';
import { ConfigError, type BrokersConfig } from '../config';
import { registry } from '../metrics';
import { startAmqpConsumer } from './amqp';
import type { IntakeDeps } from './list-writes';
import type { BrokerConsumer, BrokerName } from './messages';
import { startNatsConsumer } from './nats';

/** The consumers of the configured brokers, as the API process runs them. */
export interface BrokerIntake {
  /** The configured brokers that do not answer now (for /readyz). */
  unreachable(): Promise<BrokerName[]>;
  stop(): Promise<void>;
}

/** How long /readyz and /metrics wait for a broker's answer. */
const BROKER_CHECK_TIMEOUT_MS = 2_000;

function withinCheckTimeout<T>(promise: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), BROKER_CHECK_TIMEOUT_MS)));
  return Promise.race([promise.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

/** The consumers running in this process, whose pending counts /metrics reads as it is scraped. */
const running = new Set<BrokerConsumer>();

const pending = new Gauge({
  name: 'broker_consumer_pending',
  help: "Messages waiting for the consumer, not yet delivered to any process (NATS: the consumer's num_pending; RabbitMQ: the queue's ready messages), read at each scrape",
  labelNames: ['broker'],
  registers: [registry],
  async collect() {
    await Promise.all(
      [...running].map(async (consumer) => {
        const count = await withinCheckTimeout(consumer.pending(), null);
        if (count !== null) this.set({ broker: consumer.broker }, count);
      }),
    );
  },
});

/** A consumer started, or start-up stopped with one line naming the broker's variable (never its URL, which may hold a password). */
async function reaching(variable: string, start: () => Promise<BrokerConsumer>): Promise<BrokerConsumer> {
  try {
    return await start();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`${variable}: cannot consume list writes from the broker (${why})`, { cause: error });
  }
}

/**
 * Starts a consumer for each configured broker; undefined when none is. A broker unreachable at
 * start stops start-up, as PostgreSQL and Temporal do; after that each consumer reconnects by itself.
 */
export async function startBrokerIntake(config: BrokersConfig, deps: IntakeDeps): Promise<BrokerIntake | undefined> {
  if (!config.nats && !config.amqp) return undefined;
  const consumers: BrokerConsumer[] = [];
  const stop = async () => {
    for (const consumer of consumers) {
      running.delete(consumer);
      pending.remove({ broker: consumer.broker });
      await consumer.stop();
    }
  };
  try {
    const { nats, amqp } = config;
    if (nats) consumers.push(await reaching('NATS_URL', () => startNatsConsumer(nats, deps)));
    if (amqp) consumers.push(await reaching('AMQP_URL', () => startAmqpConsumer(amqp, deps)));
  } catch (error) {
    await stop();
    throw error;
  }
  for (const consumer of consumers) running.add(consumer);
  return {
    async unreachable() {
      const answers = await Promise.all(consumers.map((consumer) => withinCheckTimeout(consumer.reachable(), false)));
      return consumers.filter((_, i) => !answers[i]).map((consumer) => consumer.broker);
    },
    stop,
  };
}
