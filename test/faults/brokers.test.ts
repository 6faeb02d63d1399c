// Issue 59 §4: list writes from the machine's NATS JetStream and RabbitMQ through processes
// that die (dist/src/main.js api, twice, sharing the broker's consumer, and a worker, on the
// run's Temporal dev server and database). An API process killed with messages under way loses
// nothing and doubles nothing: what it had taken and not acked comes again to the other (NATS
// after the consumer's ack wait, RabbitMQ as the connection drops), and a write that comes again
// is recognised by its writeId. RabbitMQ restarted mid-stream (rabbitmqctl stop_app, start_app:
// the broker the machine runs, left running) loses nothing it had acked to the publisher. NATS
// restarted mid-stream (a nats-server of the test's own, on a port of its own: the machine's
// serves other suites; stopped with SIGTERM and started again on the same JetStream store) loses
// nothing it had acked either: the consumer reconnects and pulls again, and what the API acked
// while the server was down comes again after the ack wait.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BrokerName } from '../../src/intake/messages';
import { AMQP_URL, brokerConfigs, brokerNames, NATS_URL, testBroker, type TestBroker } from '../support/brokers';
import { sample } from '../support/metrics';
import { freePort } from '../support/ports';
import { ids, prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import { waitFor } from '../support/wait';
import { deliveryLedger, NO_MISMATCHES } from './support/delivery-ledger';
import { startStatementHoldingProxy } from './support/statement-holding-proxy';
import { recordScenario, type ScenarioFigures } from './support/scenarios';

let dir: string;
let processes: ServiceProcesses;
let worker: PartProcess;

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: path.resolve(__dirname, '../..') });
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-brokers-'));
  processes = await prepareServiceProcesses({ databaseUrl: inject('databaseUrl'), temporalAddress: inject('temporalAddress'), dir });
  worker = await startPart('worker', processes.env, await freePort());
}, 240_000);

afterAll(async () => {
  await worker?.stop();
  await processes?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The environment of API processes consuming from `broker` at `url` (default: the machine's) under names of the scenario's own. */
function consumerEnv(
  broker: BrokerName,
  names: ReturnType<typeof brokerNames>,
  url = broker === 'nats' ? NATS_URL : AMQP_URL,
): Record<string, string> {
  return { ...processes.env, ...names, [broker === 'nats' ? 'NATS_URL' : 'AMQP_URL']: url };
}

/** Publishes a write of `listId` for each id, waiting for the broker to hold each. */
async function publishAll(upstream: TestBroker, listId: string, writeIds: string[]): Promise<void> {
  for (const writeId of writeIds) {
    await upstream.publish({ listId, writeId, changes: [{ type: 'list.updated' }] }, `${listId}:${writeId}`);
  }
}

/**
 * Once every write's workflow has ended: each write recorded once, each planned delivery
 * received once (none lost, none twice), the delivery log one row per planned delivery.
 */
async function expectDeliveredOnce(scenario: { listId: string; path: string }, writeIds: string[], row: ScenarioFigures) {
  await processes.settle(scenario.listId, writeIds);
  const recorded = await processes.sql<{ writeId: string; cursor: string }[]>`
    SELECT write_id AS "writeId", cursor FROM list_writes WHERE list_id = ${scenario.listId}`;
  const cursors = recorded.map((write) => Number(write.cursor));
  const { lost, duplicates, failedOtherwise } = await processes.ledger(scenario, cursors);
  const log = await deliveryLedger(processes.sql, scenario.listId);
  Object.assign(row, { writesAccepted: recorded.length, writesLost: writeIds.length - recorded.length + lost.length });
  expect(recorded.map((write) => write.writeId).sort()).toEqual([...writeIds].sort());
  expect(lost).toEqual([]);
  expect(duplicates).toEqual([]);
  expect(failedOtherwise).toEqual([]);
  expect(log.mismatches).toEqual(NO_MISMATCHES);
}

const metricsOf = async (api: PartProcess) => (await fetch(`${api.url}/metrics`)).text();

const redeliveredBy = async (api: PartProcess, broker: BrokerName) =>
  sample(await metricsOf(api), 'broker_messages_redelivered_total', { broker });

/** Messages of `broker` that `api` has taken and not yet settled (acked, or left to come again). */
async function underWayIn(api: PartProcess, broker: BrokerName): Promise<number> {
  const text = await metricsOf(api);
  const settled = sample(text, 'broker_messages_acked_total', { broker }) + sample(text, 'broker_messages_failed_total', { broker });
  return sample(text, 'broker_messages_consumed_total', { broker }) - settled;
}

describe.each<BrokerName>(['nats', 'amqp'])('list writes from %s', (broker) => {
  it('kill -9 one of two API processes consuming, with messages under way: the other takes what it left; every write delivered once', async ({
    task,
    onTestFinished,
  }) => {
    const row = recordScenario(task, { scenario: `${broker}: kill -9 an API process mid-stream` });
    const names = brokerNames('faults');
    const upstream = await testBroker(broker, brokerConfigs(names));
    onTestFinished(() => upstream.close());
    const env = consumerEnv(broker, names);
    const survivor = await startPart('api', env, processes.apiPort);
    onTestFinished(() => survivor.stop());
    // The process that dies records its writes through a proxy that holds them: whatever the
    // timing, it dies with messages taken and not acked.
    const proxy = await startStatementHoldingProxy(env.DATABASE_URL, /FROM record_list_write\(/i);
    onTestFinished(() => proxy.close());
    const killed = await startPart('api', { ...env, DATABASE_URL: proxy.url }, await freePort());
    const scenario = await processes.setUp(`${broker}-api-killed`);
    const writeIds = ids('w', 1000);
    await publishAll(upstream, scenario.listId, writeIds);
    // The survivor may wait for what the other holds: NATS_MAX_ACK_PENDING bounds both together.
    await waitFor(async () => (proxy.heldStatements.length > 0 ? true : undefined), { what: 'a write held in the process to kill' });
    const held = proxy.heldStatements.length;
    await killed.kill();

    await expectDeliveredOnce(scenario, writeIds, row);
    const redelivered = await redeliveredBy(survivor, broker);
    row.outcome = `${held} writes held in the killed process; ${redelivered} messages came again to the survivor`;
    expect(redelivered).toBeGreaterThanOrEqual(held);
  }, 300_000);
});

describe('list writes from RabbitMQ through its restart', () => {
  const rabbitmqctl = (command: 'stop_app' | 'start_app') => promisify(execFile)('rabbitmqctl', [command], { timeout: 120_000 });

  it('rabbitmqctl stop_app, then start_app, with messages under way: the consumer reconnects; nothing acked is lost, nothing doubled', async ({
    task,
    onTestFinished,
  }) => {
    const row = recordScenario(task, { scenario: 'amqp: RabbitMQ restarted mid-stream' });
    const names = brokerNames('faults');
    const env = consumerEnv('amqp', names);
    // The API records its writes through a proxy that holds them until the broker is down: it
    // has messages taken and not acked when the broker stops, and records them after.
    const proxy = await startStatementHoldingProxy(env.DATABASE_URL, /FROM record_list_write\(/i);
    onTestFinished(() => proxy.close());
    const api = await startPart('api', { ...env, DATABASE_URL: proxy.url }, processes.apiPort);
    onTestFinished(() => api.stop());
    const scenario = await processes.setUp('amqp-restart');
    const [before, after] = [ids('before', 250), ids('after', 250)];
    const upstream = await testBroker('amqp', brokerConfigs(names));
    // Confirmed by the broker before it stops: persistent messages of a durable queue.
    await publishAll(upstream, scenario.listId, before);
    await waitFor(async () => (proxy.heldStatements.length > 0 ? true : undefined), { what: 'a write held in the API' });
    const held = proxy.heldStatements.length;
    try {
      await rabbitmqctl('stop_app');
      proxy.release();
    } finally {
      await rabbitmqctl('start_app');
    }
    // The publisher's connection did not outlive the broker's stop: another, as an upstream reconnects.
    await upstream.close().catch(() => {});
    const again = await testBroker('amqp', brokerConfigs(names));
    onTestFinished(() => again.close());
    await publishAll(again, scenario.listId, after);

    await expectDeliveredOnce(scenario, [...before, ...after], row);
    const redelivered = await redeliveredBy(api, 'amqp');
    row.outcome = `${held} writes held in the API as the broker stopped; ${redelivered} messages came again`;
    expect(redelivered).toBeGreaterThanOrEqual(held);
  }, 300_000);
});

/** A nats-server of the test's own, with JetStream. */
interface NatsServer {
  /** SIGTERM (the server shuts down cleanly, its store written), and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts the machine's nats-server on `port`, JetStream kept in `storeDir`, and waits until it takes connections. */
async function startNatsServer(port: number, storeDir: string): Promise<NatsServer> {
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  // Not spawned at all (no such binary): exitCode is set, and the wait below says why.
  child.on('error', (error) => (output += String(error)));
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited (${child.exitCode}): ${output.slice(-2000)}`);
      const socket = net.connect(port, '127.0.0.1');
      try {
        await once(socket, 'connect');
        return true;
      } finally {
        socket.destroy();
      }
    },
    { what: `nats-server to take connections on port ${port}` },
  );
  return {
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('list writes from NATS JetStream through its restart', () => {
  it('nats-server stopped (SIGTERM), then started again on its store, with messages under way: the consumer reconnects; nothing acked is lost, nothing doubled', async ({
    task,
    onTestFinished,
  }) => {
    const row = recordScenario(task, { scenario: 'nats: nats-server restarted mid-stream' });
    const names = brokerNames('faults');
    const port = await freePort();
    const natsUrl = `nats://127.0.0.1:${port}`;
    const configs = brokerConfigs(names, { nats: natsUrl });
    const storeDir = await mkdtemp(path.join(dir, 'nats-store-'));
    let server = await startNatsServer(port, storeDir);
    onTestFinished(() => server.stop());
    const env = consumerEnv('nats', names, natsUrl);
    // The API records its writes through a proxy that holds them until the server is down: it
    // has messages taken and not acked when the server stops, and records them after.
    const proxy = await startStatementHoldingProxy(env.DATABASE_URL, /FROM record_list_write\(/i);
    onTestFinished(() => proxy.close());
    const api = await startPart('api', { ...env, DATABASE_URL: proxy.url }, processes.apiPort);
    onTestFinished(() => api.stop());
    const scenario = await processes.setUp('nats-restart');
    const [before, after] = [ids('before', 250), ids('after', 250)];
    const upstream = await testBroker('nats', configs);
    onTestFinished(() => upstream.close());
    // Acked by JetStream before the server stops: kept in the file store of a stream on disk.
    await publishAll(upstream, scenario.listId, before);
    await waitFor(async () => (proxy.heldStatements.length > 0 ? true : undefined), { what: 'a write held in the API' });
    const held = proxy.heldStatements.length;
    await server.stop();
    proxy.release();
    // The API records what it held and acks it while the server is down: the client drops what
    // it sent meanwhile as it reconnects, so each of those messages comes again after the ack
    // wait. Started again only once the API has settled them, the server cannot take one of
    // those acks.
    await waitFor(async () => ((await underWayIn(api, 'nats')) === 0 ? true : undefined), {
      what: 'the API to settle the messages it took',
    });
    server = await startNatsServer(port, storeDir);
    // The publisher's connection reconnects in its own time: another, connected now.
    const again = await testBroker('nats', configs);
    onTestFinished(() => again.close());
    await publishAll(again, scenario.listId, after);

    await expectDeliveredOnce(scenario, [...before, ...after], row);
    const redelivered = await redeliveredBy(api, 'nats');
    row.outcome = `${held} writes held in the API as the server stopped; ${redelivered} messages came again`;
    expect(redelivered).toBeGreaterThanOrEqual(held);
  }, 300_000);
});
