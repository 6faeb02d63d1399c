// `npm start`: everything on embedded defaults. Starts the Temporal dev server and an
// embedded PostgreSQL unless TEMPORAL_ADDRESS and DATABASE_URL point elsewhere, then the
// worker and the API. SIGINT or SIGTERM (Ctrl-C, or a process manager stopping npm: the
// start scripts exec node, so the signal npm passes on reaches it) stops every part it started.
// `npm run start:api` / `npm run start:worker` (main.js api|worker) run one part alone,
// against a PostgreSQL and a Temporal server that are already there. Tracing, when asked for,
// starts first: the service (and with it Node's HTTP server) loads only once its instrumentation is in place.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { ConfigError, loadConfig, parseSecretKeys, type Config } from './config';
import { newSecretKeys, type SecretKey } from './secret-keys';
import { newInternalToken } from './secrets';
import { startEmbeddedPostgres } from './db/embedded';
import { createLogger, type Logger } from './logger';
import { findTemporalCli, PrerequisiteError, startDevServer } from './temporal/dev-server';
import { installTemporalRuntime } from './temporal/runtime';
import { startTracing } from './tracing/setup';

const DEV_SERVER_PORT = 7233;
const DEV_SERVER_UI_PORT = 8233;
const EMBEDDED_POSTGRES_PORT = 5433;

async function assertPortFree(port: number, what: string, howToAvoid: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = net
      .createServer()
      .once('error', () => reject(new PrerequisiteError(`Port ${port} (${what}) is in use: stop what uses it or ${howToAvoid}`)));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

/**
 * The embedded defaults come from dev dependencies, which a production install (npm ci
 * --omit=dev, as the Dockerfile's) leaves out; each is avoided by setting its variable.
 */
const EMBEDDED_DEFAULTS = [
  { what: 'a Temporal dev server', packageName: '@temporalio/testing', variable: 'TEMPORAL_ADDRESS', configured: 'temporalAddress' },
  { what: 'an embedded PostgreSQL', packageName: 'embedded-postgres', variable: 'DATABASE_URL', configured: 'databaseUrl' },
] as const;

function isInstalled(packageName: string): boolean {
  try {
    require.resolve(packageName);
    return true;
  } catch {
    return false;
  }
}

/** Refuses at once, before starting anything, when an embedded default needed is not installed: names what to set. */
function assertEmbeddedDefaultsInstalled(config: Config): void {
  const missing = EMBEDDED_DEFAULTS.filter((entry) => !config[entry.configured] && !isInstalled(entry.packageName));
  if (missing.length === 0) return;
  const list = (key: 'what' | 'packageName' | 'variable') => missing.map((entry) => entry[key]).join(' and ');
  throw new PrerequisiteError(
    `set ${list('variable')}: without ${missing.length > 1 ? 'them' : 'it'} the service starts ${list('what')}, ` +
      `from dev dependencies that this install lacks (${list('packageName')})`,
  );
}

/** INTERNAL_API_TOKEN, or the one generated at first start and kept under the data directory. */
async function internalApiToken(config: Config): Promise<{ token: string; generated: boolean }> {
  if (config.internalApiToken) return { token: config.internalApiToken, generated: false };
  const file = path.join(config.dataDir, 'internal-api-token');
  const kept = await readFile(file, 'utf8').catch(() => null);
  if (kept) return { token: kept.trim(), generated: false };
  const token = newInternalToken();
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return { token, generated: true };
}

/** The id of the key generated when SECRET_KEYS is unset: the day it was made, so that a key added later has another. */
const generatedKeyId = () => `generated-${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;

/**
 * SECRET_KEYS, or the one key generated at first start and kept under the data directory, in
 * SECRET_KEYS's own form: an operator who moves to SECRET_KEYS copies the file's line into it.
 */
async function secretKeys(config: Config): Promise<{ keys: SecretKey[]; generatedIn: string | null }> {
  if (config.secretKeys) return { keys: config.secretKeys, generatedIn: null };
  const file = path.join(config.dataDir, 'secret-keys');
  const kept = await readFile(file, 'utf8').catch(() => null);
  if (kept) return { keys: parseSecretKeys(kept.trim(), file), generatedIn: null };
  const generated = newSecretKeys(generatedKeyId());
  await writeFile(file, `${generated}\n`, { mode: 0o600, flag: 'wx' });
  return { keys: parseSecretKeys(generated, file), generatedIn: file };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const part = process.argv[2];
  if (part !== undefined) return startOnePart(part, config, logger);
  assertEmbeddedDefaultsInstalled(config);
  const tracing = await startTracing(config.tracing);
  const { startService } = await import('./service.js');
  const sdkMetricsUrl = await installTemporalRuntime();
  // Only the embedded defaults keep files; a container with everything configured needs no data directory.
  if (!config.databaseUrl || !config.temporalAddress || !config.internalApiToken || !config.secretKeys) {
    await mkdir(config.dataDir, { recursive: true });
  }
  // Each part started adds its stop in front: Ctrl-C stops them in reverse order, also mid-start.
  const stops: (() => Promise<void>)[] = [() => tracing.shutdown()];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping...`);
    for (const stop of stops) await stop().catch((error) => console.error(error));
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await assertPortFree(config.port, 'the API', 'set PORT');
  if (!config.databaseUrl) await assertPortFree(EMBEDDED_POSTGRES_PORT, 'embedded PostgreSQL', 'set DATABASE_URL');
  if (!config.temporalAddress) {
    await assertPortFree(DEV_SERVER_PORT, 'Temporal dev server', 'set TEMPORAL_ADDRESS');
    await assertPortFree(DEV_SERVER_UI_PORT, 'Temporal Web UI', 'set TEMPORAL_ADDRESS');
  }

  const started = performance.now();
  let temporalAddress = config.temporalAddress;
  if (!temporalAddress) {
    const cliPath = await findTemporalCli();
    const devServer = await startDevServer({
      cliPath,
      namespace: config.temporalNamespace,
      port: DEV_SERVER_PORT,
      uiPort: DEV_SERVER_UI_PORT,
      dbFilename: path.resolve(config.dataDir, 'temporal.sqlite'),
    });
    stops.unshift(() => devServer.teardown());
    temporalAddress = devServer.address;
  }

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const database = await startEmbeddedPostgres(config.dataDir, EMBEDDED_POSTGRES_PORT);
    stops.unshift(() => database.stop());
    databaseUrl = database.url;
  }

  const internal = await internalApiToken(config);
  const keys = await secretKeys(config);
  const service = await startService({
    config,
    databaseUrl,
    temporalAddress,
    internalApiToken: internal.token,
    secretKeys: keys.keys,
    logger,
    sdkMetricsUrl,
    tracing,
  });
  stops.unshift(() => service.stop());

  const { nats, amqp } = config.brokers;
  const lines = [
    `API:         ${service.url.replace('127.0.0.1', 'localhost')} (ready in ${Math.round(performance.now() - started)} ms)`,
    `Temporal:    ${temporalAddress}, namespace ${config.temporalNamespace}`,
    config.temporalAddress ? null : `Temporal UI: http://localhost:${DEV_SERVER_UI_PORT}`,
    `PostgreSQL:  ${config.databaseUrl ? 'DATABASE_URL' : `embedded, data in ${path.resolve(config.dataDir, 'postgres')}`}`,
    // What upstreams publish to; never the URLs, which may hold credentials.
    nats
      ? `NATS:        list writes on ${nats.subject} (stream ${nats.stream}, consumer ${nats.consumer}); refused: ${nats.subject}.rejected`
      : null,
    amqp ? `RabbitMQ:    list writes in the queue ${amqp.queue}; refused: ${amqp.queue}.rejected` : null,
    internal.generated
      ? `Internal API token (shown once; kept in ${path.join(config.dataDir, 'internal-api-token')}): ${internal.token}`
      : null,
    keys.generatedIn
      ? `Signing secrets are sealed under a key generated now, kept in ${keys.generatedIn}: back it up with the database`
      : null,
  ];
  console.log(lines.filter(Boolean).join('\n'));
}

/** One part alone: nothing embedded, so every backing service must be configured. */
async function startOnePart(part: string, config: Config, logger: Logger): Promise<void> {
  if (part !== 'api' && part !== 'worker') throw new ConfigError(`unknown part "${part}": expected api or worker`);
  const { databaseUrl, temporalAddress, internalApiToken, secretKeys } = config;
  if (!databaseUrl || !temporalAddress) throw new ConfigError(`the ${part} alone needs DATABASE_URL and TEMPORAL_ADDRESS`);
  if (part === 'api' && !internalApiToken) throw new ConfigError('the api alone needs INTERNAL_API_TOKEN');
  if (!secretKeys) throw new ConfigError(`the ${part} alone needs SECRET_KEYS`);
  const tracing = await startTracing(config.tracing);
  const { startPart } = await import('./service.js');
  const sdkMetricsUrl = await installTemporalRuntime();
  const running = await startPart(part, {
    config,
    databaseUrl,
    temporalAddress,
    internalApiToken: internalApiToken ?? '',
    secretKeys,
    logger,
    sdkMetricsUrl,
    tracing,
  });
  console.log(`${part === 'api' ? 'API' : 'Worker (/healthz, /metrics)'}: http://localhost:${config.port}, Temporal ${temporalAddress}`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(
      signal,
      () =>
        void running
          .stop()
          .then(() => tracing.shutdown())
          .then(() => process.exit(0)),
    );
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof PrerequisiteError) {
    console.error(`Cannot start: ${error.message}`);
  } else {
    console.error('Cannot start:', error);
  }
  process.exit(1);
});
