#!/usr/bin/env node
// `node dist/scripts/bench/bookkeeping.js`: what a delivery's bookkeeping in PostgreSQL costs
// (its claim before the POST and its log row after), each call its own statement against the
// batches of createDeliveryBatcher, with nothing else running: no Temporal, no HTTP. The full
// bench cannot resolve a change this size on two cores; this measures it alone. See
// docs/performance.md.
//
//   BENCH_DATABASE_URL=postgres://…  the server to use (default: an embedded one, as npm run bench)
//   BENCH_WRITES=400                 writes per round (10 deliveries each)
//   BENCH_WRITE_EVERY_MS=25          one write every this many ms (25: 400 deliveries/s, about
//                                    the service's knee on two cores)
//   BENCH_ROUNDS=3                   rounds of each way, alternating
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../../src/db/accounts';
import { claimDeliveries, recordDeliveries } from '../../src/db/deliveries';
import { createDeliveryBatcher, type DeliveryBatcher } from '../../activities/delivery-bookkeeping';
import { migrate } from '../../src/db/migrate';
import { createSql } from '../../src/db/sql';
import { newId } from '../../src/ids';
import { fixedSecretBox } from '../lib/fixed-secret-keys';
import { attemptRecord, insertWebhook } from '../lib/webhook-rows';
import { log } from './lib/config';
import { readStat, clockTicks } from './lib/proc';
import * as stack from './lib/stack';

const WRITES = Number(process.env.BENCH_WRITES ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FANOUT = 10;
const WRITE_EVERY_MS = Number(process.env.BENCH_WRITE_EVERY_MS ?? 25);
/** Stands in for the POST between a delivery's claim and its log row. */
const POST_MS = 1;

/** One delivery's bookkeeping: the claim, the POST's time, the log row. */
async function deliver(ledger: DeliveryBatcher, webhookId: string): Promise<void> {
  const deliveryId = newId('dlv');
  await ledger.claim({ webhookId, deliveryId });
  await stack.sleep(POST_MS);
  await ledger.record(attemptRecord(webhookId, { id: deliveryId }));
}

async function main(): Promise<void> {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-bookkeeping-'));
  stack.onStop('run directory', () => fs.rmSync(runDir, { recursive: true, force: true }));
  const server = await stack.openDatabaseServer(runDir);
  stack.onStop('database admin connection', () => server.admin.end({ timeout: 5 }));
  const database = await stack.createDatabase(server);
  const sql = createSql(database.url);
  stack.onStop('pool', () => sql.end({ timeout: 5 }));
  await migrate(sql, { secrets: fixedSecretBox() });

  const account = await createAccount(sql, 'bookkeeping bench');
  const webhookIds: string[] = [];
  for (let i = 0; i < FANOUT; i++) webhookIds.push(await insertWebhook(sql, account.id));
  // Every connection of the pool open before measuring: their backends are what PostgreSQL spends.
  await Promise.all(Array.from({ length: 10 }, () => sql`SELECT pg_sleep(0.05)`));
  const backends = (await server.admin<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = ${database.name}`).map(
    (row) => row.pid,
  );
  const backendTicks = () => backends.reduce((sum, pid) => sum + (readStat(pid)?.ticks ?? 0), 0);

  const ways: Record<string, DeliveryBatcher> = {
    'a statement per call': {
      claim: async (claim) => (await claimDeliveries(sql, [claim]))[0],
      record: async (delivery) => (await recordDeliveries(sql, [delivery]))[0],
    },
    'batched (createDeliveryBatcher)': createDeliveryBatcher(sql),
  };

  async function round(ledger: DeliveryBatcher, writes: number) {
    const cpu = process.cpuUsage();
    const ticks = backendTicks();
    const started = Date.now();
    const deliveries: Promise<unknown>[] = [];
    for (let write = 1; write <= writes; write++) {
      for (const webhookId of webhookIds) deliveries.push(deliver(ledger, webhookId));
      await stack.sleep(WRITE_EVERY_MS);
    }
    await Promise.all(deliveries);
    const used = process.cpuUsage(cpu);
    const count = writes * FANOUT;
    return {
      nodeMs: (used.user + used.system) / 1000 / count,
      postgresMs: ((backendTicks() - ticks) * 1000) / clockTicks / count,
      seconds: (Date.now() - started) / 1000,
    };
  }

  for (const ledger of Object.values(ways)) await round(ledger, WRITES / 4); // warm-up
  const results: Record<string, { nodeMs: number; postgresMs: number; seconds: number }[]> = {};
  for (let i = 0; i < ROUNDS; i++) {
    for (const [name, ledger] of Object.entries(ways)) {
      const result = await round(ledger, WRITES);
      (results[name] ??= []).push(result);
      log(`${name}: Node ${result.nodeMs.toFixed(3)}, PostgreSQL ${result.postgresMs.toFixed(3)} CPU-ms per delivery; ${result.seconds} s`);
    }
  }
  const figures = (runs: { nodeMs: number; postgresMs: number }[], pick: (run: { nodeMs: number; postgresMs: number }) => number) =>
    runs.map((run) => pick(run).toFixed(3)).join(', ');
  console.log(
    `\n${WRITES} writes of ${FANOUT} deliveries per round, a write every ${WRITE_EVERY_MS} ms; CPU-ms per delivery, each round:\n`,
  );
  console.log('| | Node | PostgreSQL | both, median |');
  console.log('|---|---|---|---|');
  for (const [name, runs] of Object.entries(results)) {
    const both = runs.map((run) => run.nodeMs + run.postgresMs).sort((a, b) => a - b);
    const median = both[Math.floor(both.length / 2)].toFixed(3);
    console.log(`| ${name} | ${figures(runs, (run) => run.nodeMs)} | ${figures(runs, (run) => run.postgresMs)} | ${median} |`);
  }
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => stack.stopAll());
