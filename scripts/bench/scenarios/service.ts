// The service on a fresh dev server and database, in its two layouts: `split` (`main.js api`
// + `main.js worker`, BENCH_WORKERS of them) and `single` (`main.js`). Its fan-out scenarios
// are here; the hot webhook and registration start it too.
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { parseSecretKeys } from '../../../src/config';
import { createSecretBox, newSecretKeys } from '../../../src/secret-keys';
import { newInternalToken } from '../../../src/secrets';
import { tryCpuGroup, type CpuGroup } from '../lib/cgroups';
import { CONFIG, SERVICE_DIST, SERVICE_ROOT, log } from '../lib/config';
import { call, createAccount } from '../lib/http';
import * as stack from '../lib/stack';
import { sampleTemporal, scenarioTemporal } from '../lib/temporal';
import { serviceTracingEnvironment } from '../lib/tracing';
import {
  type Account,
  type Context,
  type Environment,
  type FanoutScenario,
  type ListLayout,
  type OutcomesPoller,
  type ServiceTarget,
  type WorkloadScenario,
} from '../lib/types';
import { type Recorded } from '../lib/ledger';

/** How much lower the OS priority of the bulk-only workers is (BENCH_BULK_WORKERS), as docs/operating.md advises. */
const BULK_WORKER_NICE = 10;

export const scenarios: FanoutScenario[] = [
  {
    id: 'split-fanout10',
    kind: 'fanout',
    mode: 'split',
    fanout: 10,
    title: 'service (API + worker processes), fan-out 10',
    start: (ctx, environment) => startService('split', ctx, environment),
  },
  {
    id: 'single-fanout10',
    kind: 'fanout',
    mode: 'single',
    fanout: 10,
    title: 'service (one process), fan-out 10',
    start: (ctx, environment) => startService('single', ctx, environment),
  },
  {
    id: 'split-fanout1',
    kind: 'fanout',
    mode: 'split',
    fanout: 1,
    title: 'service (API + worker processes), fan-out 1',
    start: (ctx, environment) => startService('split', ctx, environment),
  },
  {
    id: 'single-fanout1',
    kind: 'fanout',
    mode: 'single',
    fanout: 1,
    title: 'service (one process), fan-out 1',
    start: (ctx, environment) => startService('single', ctx, environment),
  },
];

interface ServiceProcess {
  name: string;
  pid: number;
  stop: () => Promise<void>;
  logFile: string;
}

/** A call to the service's internal API. */
type Internal = ServiceTarget['internal'];

/** A workload run on the service as `startService` starts it, its id `${mode}-${kind}`. */
export function serviceWorkload(
  kind: WorkloadScenario['kind'],
  mode: WorkloadScenario['mode'],
  title: string,
  run: WorkloadScenario['run'],
  settings: Record<string, string> = {},
): WorkloadScenario {
  return { id: `${mode}-${kind}`, kind, mode, title, start: (ctx, environment) => startService(mode, ctx, environment, settings), run };
}

/**
 * A fresh dev server and database, and the service on them: `main.js api` + `main.js worker`
 * (split) or `main.js` (single).
 */
export async function startService(
  mode: 'split' | 'single',
  ctx: Context,
  environment: Environment,
  /** Settings of the scenario's own, beside the bench's. */
  settings: Record<string, string> = {},
): Promise<ServiceTarget> {
  const scenarioDir = fs.mkdtempSync(path.join(ctx.runDir, `${mode}-`));
  const [temporal, db] = await Promise.all([scenarioTemporal(environment, scenarioDir), stack.createDatabase(ctx.database)]);
  // The harness's own connection (ledger polling): excluded from PostgreSQL's CPU.
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  const stopSql = stack.onStop('harness database connection', () => sql.end({ timeout: 5 }));
  const internalApiToken = newInternalToken();
  const secretKeys = newSecretKeys('bench');
  const apiPort = await stack.freePort();
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    INTERNAL_API_TOKEN: internalApiToken,
    SECRET_KEYS: secretKeys,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    NODE_EXTRA_CA_CERTS: ctx.caFile,
    DELIVERY_TIMEOUT_MS: String(CONFIG.deliveryTimeoutMs),
    LOG_LEVEL: CONFIG.logLevel,
    DATA_DIR: scenarioDir,
    ...serviceTracingEnvironment(ctx.traceSink),
    ...settings,
  };
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  // Where the worker's metrics (with the Temporal SDK's) answer, when the build has them.
  const workerPort = await stack.freePort();
  const metricsUrl = mode === 'split' ? `http://127.0.0.1:${workerPort}/metrics` : `${baseUrl}/metrics`;
  let processes: ServiceProcess[];
  let apiGroup: CpuGroup | null;
  try {
    processes = await startProcesses(mode, { env, scenarioDir, apiPort, workerPort, baseUrl });
    apiGroup = apiCpuGroup(processes);
  } catch (error) {
    await stopSql();
    await db.drop();
    await temporal.stop();
    throw error;
  }
  const [{ pid: harnessBackend }] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const pg = await stack.postgresPids(ctx.database.admin, db.name, [harnessBackend]);
  // Every worker process counts in the one group `worker`.
  const groupOf = (name: string) => (name.startsWith('worker') ? 'worker' : name);
  const processGroups = [...new Set(processes.map((p) => groupOf(p.name)))];
  for (const group of processGroups)
    ctx.sampler.addGroup(group, () => processes.filter((p) => groupOf(p.name) === group).map((p) => p.pid));
  const stopSamplingTemporal = sampleTemporal(ctx.sampler, temporal);
  ctx.sampler.addGroup('postgres', () => pg.get());
  const groups = [...processGroups, 'temporal', 'postgres', 'receivers', 'generator'];
  const internal: Internal = (method, route, body) => call(baseUrl, method, route, internalApiToken, body);

  return {
    kind: 'service',
    mode,
    baseUrl,
    token: internalApiToken,
    groups,
    serviceGroups: [...processGroups, 'temporal', 'postgres'],
    workerGroup: mode === 'split' ? 'worker' : 'service',
    metricsUrl,
    temporal,
    sql,
    secrets: createSecretBox(parseSecretKeys(secretKeys)),
    logFiles: processes.map((p) => ({ name: p.name, file: p.logFile })),
    apiCpuShares: apiGroup ? CONFIG.apiCpuShares : null,
    internal,
    setUpFanout: (lists: ListLayout[]) => setUpFanout(ctx, baseUrl, internal, lists),
    outcomesPoller: (webhookIds: string[]) => deliveryLogPoller(sql, webhookIds),
    async stop() {
      stopSamplingTemporal();
      pg.stop();
      for (const group of processGroups) ctx.sampler.removeGroup(group);
      ctx.sampler.removeGroup('postgres');
      for (const p of [...processes].reverse()) await p.stop();
      await apiGroup?.remove();
      await stopSql();
      await temporal.stop();
      await db.drop();
    },
  };
}

/**
 * With BENCH_API_CPU_SHARES, the API process in a cpu cgroup of its own with those shares, the
 * workers left in the bench's (1024 each, the bulk ones at their `nice`): how the compose
 * layout's processes would share the cores. Null without it, or where the machine cannot (logged).
 */
function apiCpuGroup(processes: ServiceProcess[]): CpuGroup | null {
  const shares = CONFIG.apiCpuShares;
  const api = processes.find((p) => p.name === 'api');
  if (shares === null || !api) return null;
  const { group } = tryCpuGroup('webhooks-bench-api', { shares }, `BENCH_API_CPU_SHARES=${shares}`);
  group?.add(api.pid);
  if (group) log(`the API process (pid ${api.pid}) in ${group.dir}, cpu.shares ${shares}`);
  return group;
}

/**
 * The service's processes: the workers (the first migrates the database too), then the API
 * (split); or the one process (single). Each is `main.js` on `env`, waited for until ready; on
 * a failure, those started are stopped.
 */
async function startProcesses(
  mode: 'split' | 'single',
  {
    env,
    scenarioDir,
    apiPort,
    workerPort,
    baseUrl,
  }: { env: NodeJS.ProcessEnv; scenarioDir: string; apiPort: number; workerPort: number; baseUrl: string },
): Promise<ServiceProcess[]> {
  // BENCH_SERVICE_ROOT: another checkout's build (its migrations are beside its main.js).
  const main = path.join(SERVICE_DIST, 'src/main.js');
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const processes: ServiceProcess[] = [];
  /** Starts `main.js <args>` as `name`, listening on `port`, and waits until `ready`. */
  const start = async (
    name: string,
    args: string[],
    port: number,
    what: string,
    ready: (logFile: string) => Promise<boolean>,
    { extraEnv = {}, nice = 0 }: { extraEnv?: NodeJS.ProcessEnv; nice?: number } = {},
  ) => {
    const started = stack.spawnNode({
      name,
      args: [...nodeArgs, main, ...args],
      env: { ...env, PORT: String(port), ...extraEnv },
      logFile: path.join(scenarioDir, `${name}.log`),
      cwd: SERVICE_ROOT,
      nice,
    });
    processes.push({ name, ...started });
    await stack.waitUntil(() => ready(started.logFile), { what, timeoutMs: 60_000, child: started.child, logFile: started.logFile });
  };
  const apiReady = () => stack.httpOk(`${baseUrl}/readyz`);
  try {
    if (mode === 'split') {
      const workerReady = (logFile: string) => fs.promises.readFile(logFile, 'utf8').then((text) => /^Worker/m.test(text));
      const mainOnly = CONFIG.bulkWorkers > 0 ? { extraEnv: { WORKER_TASK_QUEUES: 'main' } } : {};
      for (let n = 1; n <= CONFIG.workers; n++) {
        const name = n === 1 ? 'worker' : `worker-${n}`;
        const port = n === 1 ? workerPort : await stack.freePort();
        await start(name, ['worker'], port, `${name} start`, workerReady, mainOnly);
      }
      for (let n = 1; n <= CONFIG.bulkWorkers; n++) {
        const name = `worker-bulk-${n}`;
        await start(name, ['worker'], await stack.freePort(), `${name} start`, workerReady, {
          extraEnv: { WORKER_TASK_QUEUES: 'bulk' },
          nice: BULK_WORKER_NICE,
        });
      }
      await start('api', ['api'], apiPort, 'API ready', apiReady);
    } else {
      await start('service', [], apiPort, 'service ready', apiReady);
    }
  } catch (error) {
    for (const p of processes.reverse()) await p.stop();
    throw error;
  }
  return processes;
}

/** Real accounts, lists and webhooks through the API (each registration pings its receiver). */
async function setUpFanout(ctx: Context, baseUrl: string, internal: Internal, lists: ListLayout[]) {
  const result = [];
  for (const { listId, webhooks, events = ['list.changed'] } of lists) {
    // At most 5 webhooks per account: the list's owner takes 5, members the rest.
    const accounts: Account[] = [];
    for (let i = 0; i < Math.ceil(webhooks.length / 5); i++) accounts.push(await createAccount(internal));
    const [owner, ...members] = accounts;
    const put = await internal('PUT', `/internal/v3/lists/${listId}`, {
      ownerAccountId: owner.id,
      memberAccountIds: members.map((m) => m.id),
    });
    if (put.status !== 201 && put.status !== 200) throw new Error(`PUT list answered ${put.status}`);
    const webhookIds: string[] = [];
    for (const [i, { url, auth }] of webhooks.entries()) {
      const account = accounts[Math.floor(i / 5)];
      // `auth` undefined is left out of the body: a build without it (BENCH_SERVICE_ROOT) takes the registration.
      const registered = await call<{ id: string; secret: string }>(baseUrl, 'POST', '/v3/webhooks', account.token, {
        url,
        events,
        auth,
      });
      if (registered.status !== 201)
        throw new Error(`registering ${url} answered ${registered.status}: ${JSON.stringify(registered.body)}`);
      webhookIds.push(registered.body.id);
      await ctx.receivers('secrets', { entries: [[registered.body.id, registered.body.secret]] });
      account.webhooks = [...(account.webhooks ?? []), registered.body.id];
    }
    result.push({ listId, webhookIds, accounts });
  }
  return result;
}

/** Reads the delivery log as it grows (the service prunes it to the newest 1000 per webhook). */
function deliveryLogPoller(sql: postgres.Sql, webhookIds: string[]): OutcomesPoller {
  const seen = new Set<string>();
  let rows: Recorded[] = [];
  let watermark = new Date(0);
  // Rows from before this step belong to an earlier one.
  let startedAt = new Date(0);
  let stopped = false;
  let loggedAtStart = 0;
  let seenCount = 0;
  const logged = async () =>
    Number((await sql<{ n: string }[]>`SELECT coalesce(sum(deliveries_logged), 0) AS n FROM webhooks WHERE id = ANY(${webhookIds})`)[0].n);
  const poll = async () => {
    const fresh = await sql<
      { id: string; webhook_id: string; list_id: string; cursor: string; event: string; outcome: string; attempted_at: Date }[]
    >`
      SELECT id, webhook_id, list_id, cursor, event, outcome, attempted_at FROM deliveries
      WHERE webhook_id = ANY(${webhookIds}) AND kind = 'event'
        AND attempted_at > ${new Date(Math.max(watermark.getTime() - 2000, startedAt.getTime()))}`;
    for (const row of fresh) {
      if (row.attempted_at > watermark) watermark = row.attempted_at;
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      seenCount++;
      rows.push({
        webhook: row.webhook_id,
        list: row.list_id,
        cursor: Number(row.cursor),
        event: row.event,
        delivered: row.outcome === 'delivered',
      });
    }
  };
  const ready = (async () => {
    loggedAtStart = await logged();
    const [{ now }] = await sql<{ now: Date }[]>`SELECT now() AS now`;
    watermark = now;
    startedAt = now;
  })();
  const loop = (async () => {
    await ready;
    while (!stopped) {
      await poll().catch((e: Error) => log(`delivery log poll failed: ${e.message}`));
      await stack.sleep(500);
    }
  })();
  return {
    ready,
    async count() {
      await poll();
      return seenCount;
    },
    async take() {
      await poll();
      const taken = rows;
      rows = [];
      return taken;
    },
    async prunedUnseen() {
      return Math.max(0, (await logged()) - loggedAtStart - seenCount);
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
