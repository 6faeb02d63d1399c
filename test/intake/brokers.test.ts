// List writes published to the machine's NATS JetStream and RabbitMQ (DESIGN.md §18), consumed
// by the service as its route takes them: delivered once, refusals kept in the dead-letter
// with the route's own error, failures of ours left to come again. The service reaches each
// broker through a proxy of the test's, which the test cuts to take the broker out of its reach.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrokersConfig } from '../../src/config';
import { listWriteWorkflowId } from '../../src/contract/workflows';
import { verifySignature } from '../../src/delivery/signing';
import { startBrokerIntake } from '../../src/intake/brokers';
import { BROKER_LABELS, type BrokerName } from '../../src/intake/messages';
import { createLogger } from '../../src/logger';
import { AMQP_URL, brokerConfigs, brokerNames, hostAndPort, NATS_URL, testBroker, throughPort, type TestBroker } from '../support/brokers';
import { sample } from '../support/metrics';
import type { Receiver } from '../support/receiver';
import { startTestStack, workflowsWithTemporalDown, type TestStack } from '../support/stack';
import { startResettingServer } from '../support/dead-server';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

const BROKERS: BrokerName[] = ['nats', 'amqp'];
const names = brokerNames();
let stack: TestStack;
let receiver: Receiver;
const proxies = {} as Record<BrokerName, TcpProxy>;
const upstreams = {} as Record<BrokerName, TestBroker>;

beforeAll(async () => {
  [proxies.nats, proxies.amqp] = await Promise.all([
    startTcpProxy(hostAndPort(NATS_URL, 4222)),
    startTcpProxy(hostAndPort(AMQP_URL, 5672)),
  ]);
  stack = await startTestStack({
    NATS_URL: throughPort(NATS_URL, proxies.nats.port),
    AMQP_URL: throughPort(AMQP_URL, proxies.amqp.port),
    ...names,
  });
  receiver = await stack.startReceiver();
  [upstreams.nats, upstreams.amqp] = await Promise.all(BROKERS.map((broker) => testBroker(broker, brokerConfigs(names))));
});

afterAll(async () => {
  await stack?.stop();
  await Promise.allSettled(BROKERS.map((broker) => upstreams[broker]?.close()));
  await Promise.allSettled(BROKERS.map((broker) => proxies[broker]?.close()));
});

const metrics = async () => (await stack.request<string>('GET', '/metrics')).body;
const counted = async (name: string, labels: Record<string, string>) => sample(await metrics(), name, labels);
/** Waits until the counter has reached `value`. */
const counterReaches = (name: string, labels: Record<string, string>, value: number) =>
  waitFor(async () => ((await counted(name, labels)) >= value ? true : undefined), {
    what: `${name} ${JSON.stringify(labels)} at ${value}`,
  });

/** The pending count's sample of this broker; undefined when /metrics has none. */
const pendingOf = (text: string, broker: BrokerName) => {
  const match = new RegExp(`^broker_consumer_pending\\{broker="${broker}"\\} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
};
const eventsAt = (path: string) => receiver.requests.filter((request) => request.path === path && request.headers['svc-event'] !== 'ping');
const cursorsAt = (path: string) => eventsAt(path).map((request) => JSON.parse(request.rawBody.toString('utf8')).cursor as number);
/** Waits until the write's workflow has started (its message consumed) and ended. */
const settled = (listId: string, writeId: string) =>
  waitFor(
    () =>
      stack.service.client.workflow
        .getHandle(listWriteWorkflowId(listId, writeId))
        .result()
        .then(() => true),
    { timeoutMs: 60_000, what: `the write ${writeId} delivered` },
  );
const writesOf = async (listId: string) =>
  (
    await stack.service.sql<{ writeId: string }[]>`SELECT write_id AS "writeId" FROM list_writes WHERE list_id = ${listId} ORDER BY cursor`
  ).map((row) => row.writeId);

describe('a broker that does not answer at start', () => {
  it.each(BROKERS)('%s: stops start-up with one line naming its variable, never its URL', async (broker) => {
    const down = await startResettingServer();
    try {
      const configs = brokerConfigs(brokerNames(), {
        nats: `nats://user:hunter2@127.0.0.1:${down.port}`,
        amqp: `amqp://user:hunter2@127.0.0.1:${down.port}`,
      });
      const only: BrokersConfig = broker === 'nats' ? { nats: configs.nats, amqp: undefined } : { nats: undefined, amqp: configs.amqp };
      const starting = startBrokerIntake(only, {
        sql: stack.service.sql,
        workflows: stack.workflowsOn(stack.service.client),
        logger: createLogger('silent'),
      });
      await expect(starting).rejects.toThrow(
        new RegExp(`^${broker === 'nats' ? 'NATS_URL' : 'AMQP_URL'}: cannot consume list writes from the broker \\((?!.*hunter2)`),
      );
    } finally {
      await down.close();
    }
  });
});

describe.each(BROKERS)('list writes from %s', (broker) => {
  const label = { broker };
  const publish = (body: unknown, id?: string) => upstreams[broker].publish(body, id);
  const setUp = async (name: string) => {
    const path = `/${broker}/${name}`;
    return { path, ...(await stack.setUpListWebhook(receiver.urlFor(path), { events: ['list.changed', 'item.added'] })) };
  };

  it("delivers a write published with the route's body and listId, signed, to the list's webhooks, and acks it", async () => {
    const { path, listId, webhookId } = await setUp('delivered');
    const [acked, consumed] = await Promise.all([
      counted('broker_messages_acked_total', label),
      counted('broker_messages_consumed_total', label),
    ]);
    await publish({ listId, writeId: 'w1', at: '2026-11-29T10:00:00Z', changes: [{ type: 'item.added', itemId: 'milk' }] }, `${listId}:w1`);
    await counterReaches('broker_messages_acked_total', label, acked + 1);
    await settled(listId, 'w1');

    const deliveries = eventsAt(path);
    expect(deliveries.map((request) => request.headers['svc-event']).sort()).toEqual(['item.added', 'list.changed']);
    const secret = await stack.secretOf(webhookId);
    for (const delivery of deliveries) {
      expect(JSON.parse(delivery.rawBody.toString('utf8'))).toEqual({
        event: delivery.headers['svc-event'],
        listId,
        cursor: 1,
        at: '2026-11-29T10:00:00.000Z',
      });
      expect(verifySignature(delivery.rawBody, delivery.headers['svc-signature'] as string, secret)).toBe(true);
    }
    expect(await counted('broker_messages_consumed_total', label)).toBe(consumed + 1);
    // Consumed as the route takes it: the same log line, naming the broker instead of a request.
    const logged = stack.logs.map((line) => JSON.parse(line)).find((line) => line.msg === 'list write' && line.listId === listId);
    expect(logged).toMatchObject({ broker, writeId: 'w1', cursor: 1, recipients: 1, repeated: false });
    // Nothing waits for the consumer once all is acked.
    await waitFor(async () => (pendingOf(await metrics(), broker) === 0 ? true : undefined), { what: 'the pending count at 0' });
  });

  it('records and delivers nothing a second time when the same write comes again (a republish, a redelivery)', async () => {
    const { path, listId } = await setUp('again');
    const body = { listId, writeId: 'once', changes: [{ type: 'list.updated' }] };
    const [acked, repeated] = await Promise.all([
      counted('broker_messages_acked_total', label),
      counted('list_writes_accepted_total', { repeated: 'true' }),
    ]);
    await publish(body);
    await counterReaches('broker_messages_acked_total', label, acked + 1);
    // Published again past the broker's own dedupe (no id, as a republish after its window).
    await publish(body);
    await publish(body);
    await counterReaches('broker_messages_acked_total', label, acked + 3);
    expect(await counted('list_writes_accepted_total', { repeated: 'true' })).toBeGreaterThanOrEqual(repeated + 2);
    // A later write is delivered after them: by then any second delivery of the first would have been made.
    await publish({ listId, writeId: 'next', changes: [{ type: 'list.updated' }] });
    await settled(listId, 'next');
    await settled(listId, 'once');
    expect(await writesOf(listId)).toEqual(['once', 'next']);
    expect(cursorsAt(path).sort((a, b) => a - b)).toEqual([1, 2]);
  });

  it("keeps what the route would refuse in the dead-letter, with the route's own error beside it, and acks it", async () => {
    const { listId } = await setUp('refused');
    const acked = await counted('broker_messages_acked_total', label);
    await publish({ listId, writeId: 'first', changes: [{ type: 'list.updated' }] });
    await counterReaches('broker_messages_acked_total', label, acked + 1);
    const unknownList = `missing-${randomBytes(4).toString('hex')}`;
    const toUnknownList = { listId: unknownList, writeId: 'w', changes: [{ type: 'list.updated' }] };
    const idReused = { listId, writeId: 'first', changes: [{ type: 'item.added' }] };
    const noChanges = { listId, writeId: 'bad', changes: [] };
    const noListId = { writeId: 'no-list', changes: [{ type: 'list.updated' }] };
    const notJson = '{"listId": "unterminated';
    const refused = [toUnknownList, idReused, noChanges, noListId, notJson];
    const rejectedBefore = (await upstreams[broker].rejected()).length;
    for (const body of refused) await publish(body);
    await counterReaches('broker_messages_acked_total', label, acked + 1 + refused.length);

    const kept = (await upstreams[broker].rejected()).slice(rejectedBefore) as { message: unknown; error: { code: string } }[];
    expect(kept.map((entry) => entry.message).sort(byJson)).toEqual([...refused].sort(byJson));
    const keptFor = (body: unknown) => kept.find((entry) => JSON.stringify(entry.message) === JSON.stringify(body))!.error;
    // The route answers the same bodies with the same envelopes.
    for (const { listId: to, ...body } of [toUnknownList, idReused, noChanges]) {
      const answer = await stack.request('POST', `/internal/v3/lists/${to}/writes`, { token: stack.internalApiToken, body });
      expect(keptFor({ listId: to, ...body })).toEqual(answer.body.error);
    }
    expect(keptFor(toUnknownList).code).toBe('LIST_NOT_FOUND');
    expect(keptFor(idReused).code).toBe('WRITE_ID_REUSED');
    expect(keptFor(noChanges).code).toBe('VALIDATION_FAILED');
    expect(keptFor(noListId)).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: '/listId', message: 'is required' }] });
    expect(keptFor(notJson).code).toBe('MALFORMED_JSON');
    expect(await counted('broker_messages_rejected_total', { broker, code: 'LIST_NOT_FOUND' })).toBeGreaterThanOrEqual(1);
    expect(await writesOf(listId)).toEqual(['first']);
  });

  it('leaves a message unacked on a failure of ours (Temporal down); it comes again and is delivered once', async () => {
    // A consumer of its own, on names of its own, whose Temporal is out of reach.
    const own = brokerConfigs(brokerNames('failing'));
    const upstream = await testBroker(broker, own);
    const temporalDown = await workflowsWithTemporalDown(stack);
    const logger = createLogger('silent');
    const only: BrokersConfig = broker === 'nats' ? { nats: own.nats, amqp: undefined } : { nats: undefined, amqp: own.amqp };
    let failing = await startBrokerIntake(only, { sql: stack.service.sql, workflows: temporalDown.workflows, logger });
    try {
      const { path, listId } = await setUp('retried');
      const [failed, redelivered] = await Promise.all([
        counted('broker_messages_failed_total', label),
        counted('broker_messages_redelivered_total', label),
      ]);
      await upstream.publish({ listId, writeId: 'during-outage', changes: [{ type: 'list.updated' }] });
      await counterReaches('broker_messages_failed_total', label, failed + 1);
      // Recorded before its workflow failed to start: the redelivery finishes it.
      expect(await writesOf(listId)).toEqual(['during-outage']);
      await failing!.stop();
      failing = await startBrokerIntake(only, { sql: stack.service.sql, workflows: stack.workflowsOn(stack.service.client), logger });

      await settled(listId, 'during-outage');
      expect(await counted('broker_messages_redelivered_total', label)).toBeGreaterThanOrEqual(redelivered + 1);
      expect(cursorsAt(path)).toEqual([1]);
      expect(await writesOf(listId)).toEqual(['during-outage']);
    } finally {
      await failing!.stop();
      await temporalDown.close();
      await upstream.close();
    }
  });

  it('says on /readyz when the broker is out of reach, and consumes what was published meanwhile once it is back', async () => {
    const { path, listId } = await setUp('outage');
    expect((await stack.request('GET', '/readyz')).status).toBe(200);
    await proxies[broker].cut();
    try {
      const unready = await waitFor(
        async () => {
          const answer = await stack.request('GET', '/readyz');
          return answer.status === 503 ? answer : undefined;
        },
        { what: '/readyz to answer 503' },
      );
      expect(unready.body.error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining(BROKER_LABELS[broker]) });
      await publish({ listId, writeId: 'while-away', changes: [{ type: 'list.updated' }] });
    } finally {
      await proxies[broker].restore();
    }
    await waitFor(async () => ((await stack.request('GET', '/readyz')).status === 200 ? true : undefined), {
      timeoutMs: 60_000,
      what: '/readyz to answer 200 again',
    });
    await settled(listId, 'while-away');
    expect(cursorsAt(path)).toEqual([1]);
  });
});

const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
