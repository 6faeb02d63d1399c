// List writes from RabbitMQ (DESIGN.md §18): the durable queue AMQP_QUEUE, declared when
// missing, consumed with manual acks and at most AMQP_PREFETCH messages unacked per process.
// Refused messages go to the durable queue `<AMQP_QUEUE>.rejected`. The connection recovers by
// itself (amqplib's recovery) when the broker restarts: each new connection declares the
// queues and consumes again, and RabbitMQ requeues what the lost one had not acked.
import { setTimeout as sleep } from 'node:timers/promises';
import amqp, { type ChannelModel, type ConfirmChannel, type ConsumeMessage, type Options } from 'amqplib';
import type { AmqpConfig } from '../config';
import type { IntakeDeps } from './list-writes';
import { countConsumed, countSettled, inFlight, judgeMessage, RETRY_AFTER_MS, type BrokerConsumer } from './messages';

/** Where refused messages go. */
export const rejectedQueueOf = (queue: string) => `${queue}.rejected`;

/** Declares a durable queue when missing; one that exists is left as its operator made it (a quorum queue, say). */
async function declareWhenMissing(model: ChannelModel, queue: string): Promise<void> {
  const checking = await model.createChannel();
  // Asked for a queue that is missing, the broker closes the channel (404): expected here.
  checking.on('error', () => {});
  const exists = await checking.checkQueue(queue).then(
    () => true,
    () => false,
  );
  if (exists) {
    await checking.close();
    return;
  }
  const declaring = await model.createChannel();
  await declaring.assertQueue(queue, { durable: true });
  await declaring.close();
}

/** Declares the queue and its dead-letter when missing (also by tests and the bench before they publish). */
export async function assertAmqpQueues(model: ChannelModel, queue: string): Promise<void> {
  await declareWhenMissing(model, queue);
  await declareWhenMissing(model, rejectedQueueOf(queue));
}

/** Sends to a queue and waits for the broker's confirm: the message is the broker's once this returns. */
export function sendConfirmed(channel: ConfirmChannel, queue: string, content: Buffer, options: Options.Publish): Promise<void> {
  return new Promise((resolve, reject) => {
    // amqplib calls back with an Error, or a nack's reason.
    channel.sendToQueue(queue, content, options, (error: unknown) =>
      error ? reject(error instanceof Error ? error : new Error('the broker did not confirm the message')) : resolve(),
    );
  });
}

/** The waits between attempts to reach the broker again, growing to this. */
const RECONNECT_MAX_DELAY_MS = 5_000;

export async function startAmqpConsumer(config: AmqpConfig, deps: IntakeDeps): Promise<BrokerConsumer> {
  const { logger } = deps;
  const rejectedQueue = rejectedQueueOf(config.queue);
  const work = inFlight();
  /** Aborted as the consumer stops: a failed message's pause ends, and it is requeued at once. */
  const stopped = new AbortController();
  /** The channel consuming now, and its consumer; null while the broker is out of reach. */
  let current: { channel: ConfirmChannel; consumerTag: string } | null = null;

  async function handle(channel: ConfirmChannel, message: ConsumeMessage): Promise<void> {
    countConsumed('amqp', message.fields.redelivered);
    // amqplib types it `any`: the publisher's message-id, a string when set.
    const messageId = typeof message.properties.messageId === 'string' ? message.properties.messageId : undefined;
    const source = { broker: 'amqp' as const, deliveryTag: message.fields.deliveryTag, messageId };
    const verdict = await judgeMessage(deps, message.content, source);
    try {
      if (verdict.outcome === 'refused') {
        await sendConfirmed(channel, rejectedQueue, Buffer.from(verdict.deadLetter), {
          persistent: true,
          contentType: 'application/json',
          messageId,
        });
      }
      if (verdict.outcome === 'failed') {
        await sleep(RETRY_AFTER_MS, undefined, { signal: stopped.signal }).catch(() => {});
        channel.nack(message, false, true);
      } else {
        channel.ack(message);
      }
      countSettled('amqp', verdict);
    } catch (error) {
      // Its channel closed under it (the broker restarted): RabbitMQ requeues what it had not acked.
      logger.warn({ msg: 'amqp message left to come again', ...source, err: error });
      countSettled('amqp', 'failed');
    }
  }

  /** A channel that declares the queues and consumes; run on each new connection, and when a channel closes on its own. */
  async function consumeOn(model: ChannelModel): Promise<void> {
    const channel = await model.createConfirmChannel();
    channel.on('error', (error: Error) => logger.warn({ msg: 'amqp channel error', err: error }));
    channel.on('close', () => {
      if (current?.channel !== channel) return;
      current = null;
      // A channel closed by an error of its own, on a connection still open, is opened again;
      // when the connection is gone, recovery's setup does it.
      if (!stopped.signal.aborted) consumeOn(model).catch(() => {});
    });
    await assertAmqpQueues(model, config.queue);
    await channel.prefetch(config.prefetch);
    const { consumerTag } = await channel.consume(
      config.queue,
      (message) => {
        if (message === null) {
          logger.warn({ msg: 'amqp consumer cancelled by the broker (the queue was deleted?)', queue: config.queue });
          return;
        }
        // Taken while stopping: handed back at once, for another process.
        if (stopped.signal.aborted) channel.nack(message, false, true);
        else work.track(handle(channel, message));
      },
      { noAck: false },
    );
    current = { channel, consumerTag };
  }

  const connection = await amqp.connect(config.url, {
    recovery: {
      // Unreachable at start: start-up stops, naming it. Once connected, it never gives up.
      initialMaxRetries: 0,
      maxRetries: Infinity,
      maxDelay: RECONNECT_MAX_DELAY_MS,
      setup: consumeOn,
    },
  });
  connection.on('disconnect', (error: Error) => logger.warn({ msg: 'amqp disconnected', err: error }));
  connection.on('connect', () => logger.info({ msg: 'amqp connected' }));
  connection.on('error', (error: Error) => logger.warn({ msg: 'amqp connection error', err: error }));

  /** The queue's ready messages, which also proves the broker answers. */
  const readyMessages = async () => {
    if (current === null) throw new Error('not connected to RabbitMQ');
    return (await current.channel.checkQueue(config.queue)).messageCount;
  };

  return {
    broker: 'amqp',
    reachable: () => readyMessages().then(() => true),
    pending: readyMessages,
    async stop() {
      stopped.abort();
      const consuming = current;
      if (consuming) await consuming.channel.cancel(consuming.consumerTag).catch(() => {});
      await work.settled();
      await connection.close();
    },
  };
}
