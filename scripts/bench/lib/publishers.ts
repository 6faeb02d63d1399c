// An upstream's publisher to a broker, as the generator uses it for the broker scenarios
// (scenarios/brokers.ts): each write published and confirmed by the broker, its dedupe id
// `<listId>:<writeId>` as docs/operating.md says.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { rejectedQueueOf, sendConfirmed } from '../../../src/intake/amqp';
import { connectionOptions, rejectedOf } from '../../../src/intake/nats';

/** Where the generator sends writes: published to a broker the service consumes from (absent: the route). */
export type WriteDoor = { broker: 'nats'; url: string; stream: string; subject: string } | { broker: 'amqp'; url: string; queue: string };

export interface Publisher {
  /** Resolves once the broker holds the message (the stream's ack, the queue's confirm). */
  publish(body: string, id: string): Promise<void>;
  close(): Promise<void>;
}

export async function openPublisher(door: WriteDoor): Promise<Publisher> {
  if (door.broker === 'nats') {
    const connection = await natsConnect({ ...connectionOptions(door.url), name: 'bench-upstream' });
    const js = jetstream(connection);
    return {
      async publish(body, id) {
        await js.publish(door.subject, body, { msgID: id });
      },
      close: () => connection.close(),
    };
  }
  const connection = await amqp.connect(door.url);
  const channel = await connection.createConfirmChannel();
  return {
    publish: (body, id) =>
      sendConfirmed(channel, door.queue, Buffer.from(body), { persistent: true, contentType: 'application/json', messageId: id }),
    close: () => connection.close(),
  };
}

/** Deletes what a scenario's service made on the broker: the stream and its dead-letter, or the queues. */
export async function removeBrokerNames(door: WriteDoor): Promise<void> {
  if (door.broker === 'nats') {
    const connection = await natsConnect(connectionOptions(door.url));
    const jsm = await jetstreamManager(connection);
    await Promise.allSettled([jsm.streams.delete(door.stream), jsm.streams.delete(rejectedOf(door).stream)]);
    await connection.close();
    return;
  }
  const connection = await amqp.connect(door.url);
  const channel = await connection.createChannel();
  await channel.deleteQueue(door.queue).catch(() => {});
  await channel.deleteQueue(rejectedQueueOf(door.queue)).catch(() => {});
  await connection.close().catch(() => {});
}
