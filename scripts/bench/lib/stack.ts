// Starting and stopping what the benchmark measures: the Temporal dev server (the product's
// own startDevServer, so its flags are the product's), a fresh PostgreSQL database, and the
// service as separate processes (`main.js api`, `main.js worker`) or as one (`main.js`).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import postgres, { type Sql } from 'postgres';
import { readStat, readCmdline, processTable } from './proc';

/** Things to stop, newest first; run by stopAll (also on Ctrl-C and on failure). */
const stops: { name: string; stop: () => Promise<void> }[] = [];
/** Pids of processes we started, killed outright if the harness exits before stopping them. */
export const ownPids = new Set<number>();

/** @returns runs the stop once and unregisters it */
export function onStop(name: string, stop: () => void | Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  // Once, whoever asks first: the scenario that started it, or stopAll on Ctrl-C.
  const once = (): Promise<void> => {
    const index = stops.indexOf(entry);
    if (index >= 0) stops.splice(index, 1);
    running ??= (async () => {
      await stop();
    })();
    return running;
  };
  const entry = { name, stop: once };
  stops.unshift(entry);
  return once;
}

export async function stopAll(): Promise<void> {
  for (let entry = stops.shift(); entry; entry = stops.shift()) {
    try {
      await withTimeout(entry.stop(), 20_000, `stopping ${entry.name}`);
    } catch (error) {
      console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

process.on('exit', () => {
  for (const pid of ownPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no end within ${ms} ms`)), ms);
    }),
  ]);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after graceMs. */
export async function terminate(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  if (child.pid) ownPids.delete(child.pid);
}

/** A Node process of ours with its output in a log file. */
export function spawnNode({
  name,
  args,
  env,
  logFile,
  cwd,
  nice = 0,
}: {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  logFile: string;
  cwd: string;
  /** Lowers the process's OS priority by this much (`nice -n`, which then becomes node: the same pid). */
  nice?: number;
}) {
  const fd = fs.openSync(logFile, 'a');
  const [command, commandArgs] = nice ? ['nice', ['-n', String(nice), process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(command, commandArgs, { cwd, env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  if (!child.pid) throw new Error(`could not start ${name}`);
  ownPids.add(child.pid);
  const pid = child.pid;
  child.once('exit', () => ownPids.delete(pid));
  const stop = onStop(name, () => terminate(child));
  return { child, pid, stop, logFile };
}

/** Waits until check() returns a truthy value; fails with the log's tail if `child` exits first. */
export async function waitUntil<T>(
  check: () => Promise<T | undefined | null | false>,
  { what, timeoutMs, child, logFile }: { what: string; timeoutMs: number; child?: ChildProcess; logFile?: string },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`${what}: the process exited (${child.exitCode ?? child.signalCode})${logFile ? `\n${tail(logFile)}` : ''}`);
    }
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${logFile ? `\n${tail(logFile)}` : ''}`);
    await sleep(100);
  }
}

export function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

export async function httpOk(url: string): Promise<boolean> {
  const response = await fetch(url);
  return response.ok;
}

// ---------------------------------------------------------------------------------------
// PostgreSQL

export interface DatabaseServer {
  serverUrl: string;
  admin: Sql;
  embedded: boolean;
  dataDir: string | null;
}

/**
 * The server databases are made on: BENCH_DATABASE_URL's, else an embedded PostgreSQL
 * started here (the product's own startEmbeddedPostgres).
 */
export async function openDatabaseServer(runDir: string): Promise<DatabaseServer> {
  const explicit = process.env.BENCH_DATABASE_URL;
  if (explicit) {
    const admin = postgres(explicit, { max: 1, onnotice: () => {}, connect_timeout: 3 });
    await admin`SELECT 1`;
    return { serverUrl: explicit, admin, embedded: false, dataDir: null };
  }
  const { startEmbeddedPostgres } = await import('../../../src/db/embedded.js');
  // In memory, like the dev server's SQLite without fsync: durable against a process's death,
  // not the machine's. This machine's disk stalls commits now and then (the probe shows how
  // much), and those stalls would be the figures instead of the service.
  const base = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/webhooks-bench-pg-') : runDir;
  onStop('embedded PostgreSQL data', () => fs.rmSync(base, { recursive: true, force: true }));
  const dataDir = path.join(base, 'pg');
  fs.mkdirSync(dataDir, { recursive: true });
  fs.chmodSync(base, 0o755);
  fs.chmodSync(dataDir, 0o777); // PostgreSQL runs as user postgres when we are root
  const database = await startEmbeddedPostgres(dataDir, await freePort());
  onStop('embedded PostgreSQL', () => database.stop());
  const admin = postgres(database.url, { max: 1, onnotice: () => {} });
  return { serverUrl: database.url, admin, embedded: true, dataDir };
}

/** A fresh database `webhooks_bench_<random>`, dropped by the returned drop(). */
export async function createDatabase(server: DatabaseServer) {
  const name = `webhooks_bench_${randomBytes(4).toString('hex')}`;
  await server.admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(server.serverUrl);
  url.pathname = `/${name}`;
  const drop = onStop(`database ${name}`, async () => {
    await server.admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  return { name, url: url.href, drop };
}

/**
 * The PostgreSQL processes that work for database `dbName`: the postmaster, its background
 * processes, and the client backends connected to that database except `excludePids`
 * (the harness's own connections). Refreshed every second; the getter is synchronous.
 */
export async function postgresPids(admin: Sql, dbName: string, excludePids: number[]) {
  const [{ pid }] = await admin<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const postmaster = readStat(pid)?.ppid ?? 0;
  let pids = [postmaster];
  let stopped = false;
  const refresh = async () => {
    const rows = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE (datname = ${dbName} OR backend_type <> 'client backend') AND pid <> ALL(${[...excludePids, pid]})`;
    pids = [postmaster, ...rows.map((r) => r.pid)];
  };
  await refresh();
  const loop = async () => {
    while (!stopped) {
      await sleep(1000);
      if (!stopped) await refresh().catch(() => {});
    }
  };
  void loop();
  return {
    get: () => pids,
    stop: () => {
      stopped = true;
    },
    postmaster,
  };
}

// ---------------------------------------------------------------------------------------
// Temporal dev server

export interface TemporalServer {
  address: string;
  pid: number;
  cmdline: string[];
  cliPath: string | null;
  stop: () => Promise<void>;
}

/**
 * The product's dev server (src/temporal/dev-server.ts: its search attributes and its
 * SQLite and dynamic-config flags), on free ports, its SQLite file under runDir.
 */
export async function startTemporal(runDir: string): Promise<TemporalServer> {
  const { findTemporalCli, startDevServer } = await import('../../../src/temporal/dev-server.js');
  const cliPath = await findTemporalCli();
  const before = new Set(processTable().keys());
  const server = await startDevServer({ cliPath, namespace: 'default', dbFilename: path.join(runDir, 'temporal.sqlite') });
  // The CLI is a child of this process (the SDK's core spawns it): find it by its command line.
  const table = processTable();
  let pid = 0;
  for (const stat of table.values()) {
    if (before.has(stat.pid)) continue;
    const cmd = readCmdline(stat.pid);
    if (cmd[0] === cliPath || (cmd.includes('start-dev') && cmd.includes('server'))) pid = stat.pid;
  }
  if (pid) ownPids.add(pid);
  const stop = onStop('Temporal dev server', async () => {
    await withTimeout(server.teardown(), 15_000, 'dev server teardown').catch((e: unknown) =>
      console.error(`bench: ${e instanceof Error ? e.message : String(e)}`),
    );
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    if (pid) ownPids.delete(pid);
  });
  return { address: server.address, pid, cmdline: pid ? readCmdline(pid) : [], cliPath, stop };
}

/**
 * The Temporal server of a scenario: the one at BENCH_TEMPORAL_ADDRESS when set (its CPU
 * measured when BENCH_TEMPORAL_PID names its process), otherwise a fresh dev server.
 */
export function useTemporal(runDir: string): Promise<TemporalServer> {
  const address = process.env.BENCH_TEMPORAL_ADDRESS;
  if (!address) return startTemporal(runDir);
  const pid = Number(process.env.BENCH_TEMPORAL_PID ?? 0);
  return Promise.resolve({
    address,
    pid,
    cmdline: pid ? readCmdline(pid) : [`(an existing server at ${address})`],
    cliPath: null,
    stop: () => Promise.resolve(),
  });
}
