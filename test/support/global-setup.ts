// Starts, once per test run, the real backing services every integration suite shares:
// the Temporal CLI dev server (or TEMPORAL_ADDRESS) and a fresh PostgreSQL database on
// DATABASE_URL's server (or an embedded PostgreSQL).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/db/embedded';
import { createSql } from '../../src/db/sql';
import { findTemporalCli, startDevServer } from '../../src/temporal/dev-server';
import { freePort } from './ports';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    /** The dev server's Web UI; empty when TEMPORAL_ADDRESS points at a server of its own. */
    temporalUiUrl: string;
    databaseUrl: string;
  }
}

async function startTemporal(): Promise<{ address: string; uiUrl: string; stop(): Promise<void> }> {
  if (process.env.TEMPORAL_ADDRESS) return { address: process.env.TEMPORAL_ADDRESS, uiUrl: '', stop: async () => {} };
  let cliPath: string;
  try {
    cliPath = await findTemporalCli();
  } catch (error) {
    throw new Error(`The integration tests need the Temporal CLI dev server: ${(error as Error).message}`, { cause: error });
  }
  const uiPort = await freePort();
  const server = await startDevServer({ cliPath, namespace: 'default', uiPort });
  return { address: server.address, uiUrl: `http://127.0.0.1:${uiPort}`, stop: () => server.teardown() };
}

/** A database of its own for this run, on DATABASE_URL's server or an embedded one. */
export async function startDatabase(): Promise<{ url: string; stop(): Promise<void> }> {
  let serverUrl = process.env.DATABASE_URL;
  let stopServer = async () => {};
  if (!serverUrl) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'webhooks-test-'));
    await chmod(dataDir, 0o755); // PostgreSQL runs as user postgres when we are root
    const embedded = await startEmbeddedPostgres(dataDir, await freePort());
    serverUrl = embedded.url;
    stopServer = async () => {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  const name = `webhooks_test_${randomBytes(4).toString('hex')}`;
  const admin = createSql(serverUrl, { max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async stop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      await stopServer();
    },
  };
}

/** The dashboard's bundle, which the API serves from dist/dashboard: built as `npm run build` builds it. */
async function buildDashboard(): Promise<void> {
  await promisify(execFile)('npm', ['run', '--silent', 'build:dashboard']);
}

export default async function setup(project: TestProject) {
  await buildDashboard();
  const [temporal, database] = await Promise.allSettled([startTemporal(), startDatabase()]);
  if (temporal.status === 'rejected' || database.status === 'rejected') {
    // Stop whichever did start, so that no server outlives the run.
    for (const started of [temporal, database]) if (started.status === 'fulfilled') await started.value.stop();
    throw temporal.status === 'rejected' ? temporal.reason : (database as PromiseRejectedResult).reason;
  }
  project.provide('temporalAddress', temporal.value.address);
  project.provide('temporalUiUrl', temporal.value.uiUrl);
  project.provide('databaseUrl', database.value.url);
  return async () => {
    await Promise.all([temporal.value.stop(), database.value.stop()]);
  };
}
