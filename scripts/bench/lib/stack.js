// @ts-check
// Starting and stopping what the benchmark measures: the Temporal dev server (the product's
// own startDevServer, so its flags are the product's), a fresh PostgreSQL database, and the
// service as separate processes (`main.js api`, `main.js worker`) or as one (`main.js`).
'use strict';

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { readStat, readCmdline, processTable } = require('./proc');

/** Things to stop, newest first; run by stopAll (also on Ctrl-C and on failure). */
/** @type {{ name: string, stop: () => Promise<void> }[]} */
const stops = [];
/** Pids of processes we started, killed outright if the harness exits before stopping them. */
/** @type {Set<number>} */
const ownPids = new Set();

/** @param {string} name @param {() => Promise<void>} stop @returns {() => Promise<void>} runs the stop once and unregisters it */
function onStop(name, stop) {
  /** @type {Promise<void> | undefined} */
  let running;
  // Once, whoever asks first: the scenario that started it, or stopAll on Ctrl-C.
  const once = () => {
    const index = stops.indexOf(entry);
    if (index >= 0) stops.splice(index, 1);
    running ??= stop();
    return running;
  };
  const entry = { name, stop: once };
  stops.unshift(entry);
  return once;
}

async function stopAll() {
  while (stops.length > 0) {
    const entry = /** @type {{ name: string, stop: () => Promise<void> }} */ (stops.shift());
    try {
      await withTimeout(entry.stop(), 20_000, `stopping ${entry.name}`);
    } catch (error) {
      console.error(`bench: ${error instanceof Error ? error.message : error}`);
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

/** @template T @param {Promise<T>} promise @param {number} ms @param {string} what @returns {Promise<T>} */
function withTimeout(promise, ms, what) {
  /** @type {NodeJS.Timeout} */
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no end within ${ms} ms`)), ms);
    }),
  ]);
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (probe.address());
      probe.close(() => resolve(port));
    });
  });
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after graceMs. @param {import('node:child_process').ChildProcess} child @param {number} graceMs */
async function terminate(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  if (child.pid) ownPids.delete(child.pid);
}

/**
 * A Node process of ours with its output in a log file.
 * @param {{ name: string, args: string[], env: Record<string, string | undefined>, logFile: string, cwd: string }} options
 */
function spawnNode({ name, args, env, logFile, cwd }) {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  if (!child.pid) throw new Error(`could not start ${name}`);
  ownPids.add(child.pid);
  child.once('exit', () => ownPids.delete(/** @type {number} */ (child.pid)));
  const stop = onStop(name, () => terminate(child));
  return { child, pid: child.pid, stop, logFile };
}

/**
 * Waits until check() returns a truthy value; fails with the log's tail if `child` exits first.
 * @template T @param {() => Promise<T | undefined | null | false>} check @param {{ what: string, timeoutMs: number, child?: import('node:child_process').ChildProcess, logFile?: string }} options
 * @returns {Promise<T>}
 */
async function waitUntil(check, { what, timeoutMs, child, logFile }) {
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

/** @param {string} file */
function tail(file, lines = 20) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** @param {string} url */
async function httpOk(url) {
  const response = await fetch(url);
  return response.ok;
}

// ---------------------------------------------------------------------------------------
// PostgreSQL

/**
 * The server databases are made on: DATABASE_URL's, else 127.0.0.1:5432 (user postgres),
 * else an embedded PostgreSQL started here (the product's own startEmbeddedPostgres).
 * @param {string} dist @param {string} runDir
 */
async function openDatabaseServer(dist, runDir) {
  const postgres = require('postgres');
  const explicit = process.env.BENCH_DATABASE_URL;
  if (explicit) {
    const admin = postgres(explicit, { max: 1, onnotice: () => {}, connect_timeout: 3 });
    await admin`SELECT 1`;
    return { serverUrl: explicit, admin, embedded: false, dataDir: null };
  }
  const { startEmbeddedPostgres } = require(`${dist}/src/db/embedded.js`);
  // In memory, like the dev server's SQLite without fsync: durable against a process's death,
  // not the machine's. This machine's disk stalls commits now and then (the probe shows how
  // much), and those stalls would be the figures instead of the service.
  const base = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/webhooks-bench-pg-') : runDir;
  onStop('embedded PostgreSQL data', async () => fs.rmSync(base, { recursive: true, force: true }));
  const dataDir = path.join(base, 'pg');
  fs.mkdirSync(dataDir, { recursive: true });
  fs.chmodSync(base, 0o755);
  fs.chmodSync(dataDir, 0o777); // PostgreSQL runs as user postgres when we are root
  const database = await startEmbeddedPostgres(dataDir, await freePort());
  onStop('embedded PostgreSQL', () => database.stop());
  const admin = postgres(database.url, { max: 1, onnotice: () => {} });
  return { serverUrl: database.url, admin, embedded: true, dataDir };
}

/**
 * A fresh database `webhooks_bench_<random>`, dropped by the returned drop().
 * @param {{ serverUrl: string, admin: any }} server
 */
async function createDatabase(server) {
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
 * @param {any} admin @param {string} dbName @param {number[]} excludePids
 */
async function postgresPids(admin, dbName, excludePids) {
  const [{ pid }] = await admin`SELECT pg_backend_pid() AS pid`;
  const postmaster = readStat(pid)?.ppid ?? 0;
  let pids = [postmaster];
  let stopped = false;
  const refresh = async () => {
    const rows = await admin`
      SELECT pid FROM pg_stat_activity
      WHERE (datname = ${dbName} OR backend_type <> 'client backend') AND pid <> ALL(${[...excludePids, pid]})`;
    pids = [postmaster, ...rows.map((/** @type {any} */ r) => r.pid)];
  };
  await refresh();
  const loop = async () => {
    while (!stopped) {
      await sleep(1000);
      if (!stopped) await refresh().catch(() => {});
    }
  };
  void loop();
  return { get: () => pids, stop: () => { stopped = true; }, postmaster };
}

// ---------------------------------------------------------------------------------------
// Temporal dev server

/**
 * The product's dev server (src/temporal/dev-server.ts from dist: its search attributes and
 * its SQLite and dynamic-config flags), on free ports, its SQLite file under runDir.
 * @param {string} dist @param {string} runDir
 */
async function startTemporal(dist, runDir) {
  const { findTemporalCli, startDevServer } = require(`${dist}/src/temporal/dev-server.js`);
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
    await withTimeout(server.teardown(), 15_000, 'dev server teardown').catch((e) => console.error(`bench: ${e.message}`));
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    if (pid) ownPids.delete(pid);
  });
  return { address: /** @type {string} */ (server.address), pid, cmdline: pid ? readCmdline(pid) : [], cliPath, stop };
}

/**
 * The Temporal server of a scenario: the one at BENCH_TEMPORAL_ADDRESS when set (its CPU
 * measured when BENCH_TEMPORAL_PID names its process), otherwise a fresh dev server.
 * @param {string} dist @param {string} runDir
 */
async function useTemporal(dist, runDir) {
  const address = process.env.BENCH_TEMPORAL_ADDRESS;
  if (!address) return startTemporal(dist, runDir);
  const pid = Number(process.env.BENCH_TEMPORAL_PID ?? 0);
  return { address, pid, cmdline: pid ? readCmdline(pid) : [`(an existing server at ${address})`], cliPath: null, stop: async () => {} };
}

module.exports = {
  useTemporal,
  onStop,
  stopAll,
  sleep,
  freePort,
  spawnNode,
  terminate,
  waitUntil,
  httpOk,
  tail,
  withTimeout,
  openDatabaseServer,
  createDatabase,
  postgresPids,
  startTemporal,
  ownPids,
};
