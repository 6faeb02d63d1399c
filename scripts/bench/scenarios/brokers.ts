// `split-nats-fanout10` and `split-amqp-fanout10`: the service in its split layout consuming
// list writes from a broker (the machine's NATS JetStream or RabbitMQ; BENCH_NATS_URL,
// BENCH_AMQP_URL), the generator publishing each write there instead of calling the route, at
// fan-out 10, to be read beside `split-fanout10` of the same run (report/brokers.ts). A write
// counts as accepted once the broker holds it; its end-to-end latency runs from when it was due
// to its receipt, through the broker. The broker's processes are sampled as the group `broker`
// and counted with the service's.
import { randomBytes } from 'node:crypto';
import { type Sql } from 'postgres';
import { type Writes } from '../lib/ledger';
import { descendants, processTable, readCmdline } from '../lib/proc';
import { removeBrokerNames, type WriteDoor } from '../lib/publishers';
import { type Context, type Environment, type FanoutScenario, type Target } from '../lib/types';
import { startService } from './service';

type Broker = WriteDoor['broker'];

const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const AMQP_URL = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export const scenarios: FanoutScenario[] = (['nats', 'amqp'] as const).map((broker) => ({
  id: `split-${broker}-fanout10`,
  kind: 'fanout',
  mode: 'split',
  fanout: 10,
  door: broker,
  title: `service (API + worker processes), fan-out 10, writes published to ${broker === 'nats' ? 'NATS JetStream' : 'RabbitMQ'}`,
  start: (ctx, environment) => startConsuming(broker, ctx, environment),
}));

/** The scenario's own stream, subject and consumer, or queue, and the service's settings naming them. */
function doorOf(broker: Broker, tag: string): { door: WriteDoor; settings: Record<string, string> } {
  if (broker === 'nats') {
    const door = { broker, url: NATS_URL, stream: `BENCH_${tag}`, subject: `bench-${tag}.list-writes` };
    return { door, settings: { NATS_URL: door.url, NATS_STREAM: door.stream, NATS_SUBJECT: door.subject, NATS_CONSUMER: `bench-${tag}` } };
  }
  const door = { broker, url: AMQP_URL, queue: `bench-${tag}.list-writes` };
  return { door, settings: { AMQP_URL: door.url, AMQP_QUEUE: door.queue } };
}

/** The broker's processes on this machine: nats-server, or RabbitMQ's Erlang VM and its children; none for a broker elsewhere. */
function brokerPids(broker: Broker): number[] {
  const table = processTable();
  const isBroker = (pid: number, comm: string) =>
    broker === 'nats' ? comm === 'nats-server' : comm.startsWith('beam') && readCmdline(pid).includes('rabbit');
  return [...table.values()].filter((stat) => isBroker(stat.pid, stat.comm)).flatMap((stat) => descendants(stat.pid, table));
}

/** Each write's cursor as the service recorded it, null for one it did not. */
async function recordedCursors(sql: Sql, writes: Writes): Promise<(number | null)[]> {
  const rows = await sql<{ list_id: string; write_id: string; cursor: string }[]>`
    SELECT list_id, write_id, cursor FROM list_writes WHERE write_id = ANY(${writes.writeId})`;
  const cursorOf = new Map(rows.map((row) => [`${row.list_id}|${row.write_id}`, Number(row.cursor)]));
  return writes.writeId.map((writeId, i) => cursorOf.get(`${writes.list[i]}|${writeId}`) ?? null);
}

async function startConsuming(broker: Broker, ctx: Context, environment: Environment): Promise<Target> {
  const { door, settings } = doorOf(broker, randomBytes(4).toString('hex'));
  const service = await startService('split', ctx, environment, settings);
  let pids = brokerPids(broker);
  const refresh = setInterval(() => (pids = brokerPids(broker)), 2000);
  ctx.sampler.addGroup('broker', () => pids);
  return {
    ...service,
    door,
    groups: [...service.groups, 'broker'],
    serviceGroups: [...service.serviceGroups, 'broker'],
    cursorsOf: (writes) => recordedCursors(service.sql, writes),
    async stop() {
      clearInterval(refresh);
      ctx.sampler.removeGroup('broker');
      await service.stop();
      await removeBrokerNames(door);
    },
  };
}
