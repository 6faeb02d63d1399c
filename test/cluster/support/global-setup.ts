// Starts, once per `npm run test:cluster`, the full Temporal server (scripts/temporal-server.sh:
// PostgreSQL persistence, 4 history shards, as docker-compose.yml runs it) on DATABASE_URL's
// PostgreSQL server (default 127.0.0.1:5432, user postgres), and a database of the service's own.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startDatabase } from '../../support/global-setup';
import { freePortRange } from '../../support/ports';

const run = promisify(execFile);
const SCRIPT = path.resolve(__dirname, '../../../scripts/temporal-server.sh');
/** The frontend and the three other services, each with a gRPC and a membership port, and the HTTP API. */
const SERVER_PORTS = 9;

export default async function setup(project: TestProject) {
  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const dir = await mkdtemp(path.join(tmpdir(), 'webhooks-cluster-'));
  const env = {
    ...process.env,
    PGHOST: server.hostname,
    PGPORT: server.port || '5432',
    PGUSER: decodeURIComponent(server.username) || 'postgres',
    PGPASSWORD: decodeURIComponent(server.password),
    TEMPORAL_DB_PREFIX: `temporal_cluster_${randomBytes(4).toString('hex')}`,
    TEMPORAL_PORT: String(await freePortRange(SERVER_PORTS)),
  };
  const stopServer = async () => {
    await run(SCRIPT, ['stop', dir], { env });
    await rm(dir, { recursive: true, force: true });
  };
  let temporalAddress: string;
  try {
    // Building the server the first time takes minutes.
    const { stdout } = await run(SCRIPT, ['start', dir], { env, timeout: 15 * 60_000, maxBuffer: 16 * 1024 * 1024 });
    temporalAddress = stdout.trim().split('\n').at(-1)!;
  } catch (error) {
    await stopServer().catch(() => {});
    throw error;
  }
  const database = await startDatabase();
  project.provide('temporalAddress', temporalAddress);
  project.provide('temporalUiUrl', '');
  project.provide('databaseUrl', database.url);
  return async () => {
    await database.stop();
    await stopServer();
  };
}
