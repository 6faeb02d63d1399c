import { createServer, type RequestListener } from 'node:http';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities';
import { BOOKKEEPING_STATEMENT_TIMEOUT_MS } from '../activities/batched-statements';
import { version } from '../package.json';
import type Koa from 'koa';
import { createAccountAccess } from './api/account-access';
import { capConnections, httpServerOptions } from './api/connections';
import { createApp, createWorkerApp } from './api/app';
import { createFeedWaits } from './api/event-feed';
import { createFrontDoor } from './api/front-door';
import type { ApiState } from './api/middleware';
import { ConfigError, type Config } from './config';
import { migrate } from './db/migrate';
import { keyIdsInUse } from './db/sealed-secrets';
import { createSql, type Sql } from './db/sql';
import { createCredentialPresenter } from './delivery/credential-presenter';
import { createHttpSender, type HttpSenderOptions } from './delivery/sender';
import { traceSends } from './delivery/traced-sender';
import { createRelayHub, type RelayHub } from './relay/hub';
import { createRelaySender, routeRelayed } from './relay/sender';
import { checkWebhookUrl, createAddressPolicy, systemResolver } from './delivery/url-policy';
import type { Logger } from './logger';
import { metrics } from './metrics';
import { createMailer } from './notices/mailer';
import { startBrokerIntake } from './intake/brokers';
import { createWorkflows } from './temporal/client';
import { ensureRetentionSchedule } from './temporal/retention-schedule';
import { clientTracing, workerTracing } from './temporal/tracing';
import { createWorkers } from './temporal/worker';
import { TRACING_OFF, type Tracing } from './tracing/setup';
import { TASK_QUEUE } from './contract/workflows';
import type { ProbePlan } from './contract/payloads';
import { wakePausesToProbe } from './temporal/lifecycle-client';
import { startReencryptionIfDue } from './temporal/reencryption-client';
import { createSecretBox, rememberOpened, type SecretBox, type SecretKey } from './secret-keys';

export const USER_AGENT = `svc-webhooks/${version}`;

export interface ServiceOptions {
  config: Config;
  databaseUrl: string;
  temporalAddress: string;
  internalApiToken: string;
  /** SECRET_KEYS, or the key kept under the data directory: the first seals, all open. */
  secretKeys: SecretKey[];
  logger: Logger;
  /** Tests give each suite its own. */
  taskQueue?: string;
  /** Tests trust their own CA here and may inject a resolver. */
  sender?: Pick<HttpSenderOptions, 'ca' | 'resolve'>;
  /** Where the Temporal SDK's Prometheus exporter of this process answers; appended to /metrics. */
  sdkMetricsUrl?: string;
  /** OpenTelemetry, started by the caller before anything loaded Koa (src/main.ts); off when absent. */
  tracing?: Tracing;
}

export interface Service {
  /** Base URL of the API, e.g. http://127.0.0.1:3000 */
  url: string;
  sql: Sql;
  client: Client;
  stop(): Promise<void>;
}

interface Part {
  stop(): Promise<void>;
}

/** The API and the worker in one process: `npm start`, and what the tests run. */
export async function startService(options: ServiceOptions): Promise<Service> {
  const secrets = createSecretBox(options.secretKeys);
  const sql = await openDatabase(options.databaseUrl, secrets);
  // One connection for the worker and the client, so Temporal can hand a workflow the API
  // starts straight to this worker (eager workflow start) instead of queueing its first task.
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const worker = await runWorker(options, sql, connection, secrets);
  const api = await runApi(options, sql, connection, secrets, { eagerStart: true });
  return {
    ...api,
    sql,
    async stop() {
      await api.stop();
      await worker.stop();
      await connection.close();
      await sql.end({ timeout: 5 });
    },
  };
}

/**
 * One part alone (`npm run start:api`, `npm run start:worker`), to scale each on its own.
 * A worker alone answers /healthz and /metrics on PORT.
 */
export async function startPart(part: 'api' | 'worker', options: ServiceOptions): Promise<Part> {
  const secrets = createSecretBox(options.secretKeys);
  const sql = await openDatabase(options.databaseUrl, secrets);
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const parts =
    part === 'api'
      ? [await runApi(options, sql, connection, secrets)]
      : [await runWorker(options, sql, connection, secrets), await listen(requestListener(createWorkerApp(options)), options)];
  return {
    async stop() {
      for (const running of parts) await running.stop();
      await connection.close();
      await sql.end({ timeout: 5 });
    },
  };
}

/**
 * The pool, once the schema is current (secrets stored in clear by a release before are sealed
 * as it migrates) and every stored secret's key is configured: one that is not stops start-up,
 * naming the key, before anything is served.
 */
async function openDatabase(databaseUrl: string, secrets: SecretBox): Promise<Sql> {
  const sql = createSql(databaseUrl);
  try {
    await migrate(sql, { secrets });
    const missing = (await keyIdsInUse(sql)).filter((keyId) => !secrets.holds(keyId));
    if (missing.length > 0) {
      throw new ConfigError(
        `stored signing secrets are sealed under ${missing.map((keyId) => `key "${keyId}"`).join(' and ')}, which SECRET_KEYS does not hold: ` +
          `put ${missing.length > 1 ? 'them' : 'it'} back after the first key, and restart`,
      );
    }
  } catch (error) {
    await sql.end({ timeout: 5 });
    throw error;
  }
  return sql;
}

function urlPolicy(options: ServiceOptions) {
  return { policy: createAddressPolicy(options.config.allowedCidrs), resolve: options.sender?.resolve ?? systemResolver };
}

/**
 * Secrets a worker keeps opened: a few per webhook delivered to lately, so that steady
 * deliveries open none. Above the largest write's 5,005 webhooks, so that its every delivery
 * finds its secret again in the next write.
 */
const SECRETS_KEPT_OPEN = 10_000;

/**
 * Webhooks whose receiver credentials a worker keeps opened, each with its OAuth2 token and its
 * client certificate's connection pool: those delivered to lately.
 */
const CREDENTIALS_KEPT_OPEN = 1_000;

/**
 * The connections of a worker's delivery bookkeeping: its four batchers (claims, small writes'
 * rows, large writes' rows, on-demand rows; createDeliveryBatcher) each run one statement at a time.
 */
const BOOKKEEPING_CONNECTIONS = 4;

/** The Temporal worker: workflows/ and activities/ on the task queue. */
async function runWorker(options: ServiceOptions, sql: Sql, connection: NativeConnection, secrets: SecretBox): Promise<Part> {
  const { config } = options;
  const bookkeepingSql = createSql(options.databaseUrl, {
    max: BOOKKEEPING_CONNECTIONS,
    statementTimeoutMs: BOOKKEEPING_STATEMENT_TIMEOUT_MS,
  });
  const { policy, resolve } = urlPolicy(options);
  const tracing = options.tracing ?? TRACING_OFF;
  const https = createHttpSender({ timeoutMs: config.deliveryTimeoutMs, policy, resolve, ca: options.sender?.ca, userAgent: USER_AGENT });
  const sender = routeRelayed(https, createRelaySender(sql, { timeoutMs: config.deliveryTimeoutMs, userAgent: USER_AGENT }));
  // The box itself, not the remembering one: the presenter keeps what it opened, by its own sealed bytes.
  const credentials = createCredentialPresenter({
    dialer: https.dialer,
    secrets,
    userAgent: USER_AGENT,
    logger: options.logger,
    maxWebhooks: CREDENTIALS_KEPT_OPEN,
  });
  const http = tracing.on ? traceSends(sender, tracing) : sender;
  const taskQueue = options.taskQueue ?? TASK_QUEUE;
  const client = new Client({ connection, namespace: config.temporalNamespace, ...clientTracing(tracing) });
  const mailer = config.smtpUrl === undefined ? undefined : createMailer(config.smtpUrl);
  const notices = {
    mailer,
    from: config.notifyFrom,
    maxPerHour: config.notifyMaxPerHour,
    dashboardUrl: `${config.publicBaseUrl}/dashboard`,
  };
  const workers = await createWorkers({
    connection,
    namespace: config.temporalNamespace,
    taskQueue,
    activities: createActivities({
      sql,
      bookkeepingSql,
      http,
      credentials,
      secrets: rememberOpened(secrets, SECRETS_KEPT_OPEN),
      logger: options.logger,
      metrics,
      client,
      notices,
      probePlan: probePlan(config),
      outcomeSettleMs: config.outcomeSettleMs,
    }),
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    bulkDeliveries: config.bulkDeliveriesPerWorker,
    queues: config.workerTaskQueues,
    tracing: workerTracing(tracing),
  });
  await ensureRetentionSchedule(client, taskQueue, config.retentionDays);
  const reencrypting = await startReencryptionIfDue(sql, client, taskQueue, secrets.keyId);
  if (reencrypting)
    options.logger.info({ msg: 're-encrypting signing secrets under the first key', keyId: secrets.keyId, ...reencrypting });
  const running = Promise.all(workers.map((worker) => worker.run()));
  if (config.probeMaxDays > 0) {
    // In the background: after an upgrade there may be thousands, and each is one signal.
    void wakePausesToProbe(sql, client).then(
      (woken) => {
        if (woken > 0) options.logger.info({ msg: 'woke paused webhooks to probe', woken });
      },
      (error: unknown) => {
        options.logger.error({ msg: 'waking paused webhooks to probe failed', error: String(error) });
      },
    );
  }
  return {
    async stop() {
      for (const worker of workers) worker.shutdown();
      await running;
      await bookkeepingSql.end({ timeout: 5 });
      await http.close();
      await credentials.close();
      mailer?.close();
    },
  };
}

/** What a pause's probing follows; null when PROBE_MAX_DAYS is 0. */
function probePlan(config: Config): ProbePlan | null {
  if (config.probeMaxDays === 0) return null;
  return { intervalsMs: config.probeIntervalsMs, forMs: config.probeMaxDays * 86_400_000, deliveryTimeoutMs: config.deliveryTimeoutMs };
}

/** The HTTP API, a Temporal client. */
async function runApi(
  options: ServiceOptions,
  sql: Sql,
  connection: NativeConnection,
  secrets: SecretBox,
  { eagerStart = false } = {},
): Promise<Part & { url: string; client: Client }> {
  const { config } = options;
  const { policy, resolve } = urlPolicy(options);
  const client = new Client({ connection, namespace: config.temporalNamespace, ...clientTracing(options.tracing ?? TRACING_OFF) });
  const workflows = createWorkflows(client, {
    taskQueue: options.taskQueue ?? TASK_QUEUE,
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    deliveriesPerBatch: config.deliveriesPerBatch,
    recoveryRatePerSecond: config.recoveryRatePerSecond,
    eagerStart,
  });
  // The API's processes consume list writes from the brokers, through what the route calls.
  const brokers = await startBrokerIntake(config.brokers, { sql, workflows, logger: options.logger });
  const access = createAccountAccess(sql, config.rateLimits);
  await access.start();
  const feedWaits = createFeedWaits(sql);
  const app = createApp({
    sql,
    secrets,
    workflows,
    logger: options.logger,
    internalApiToken: options.internalApiToken,
    checkUrl: (raw) => checkWebhookUrl(raw, policy, resolve),
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    sdkMetricsUrl: options.sdkMetricsUrl,
    access,
    trustProxyHops: config.trustProxyHops,
    traceUrlTemplate: config.tracing.traceUrlTemplate,
    feedWaits,
    brokers,
  });
  const relays = createRelayHub(sql, {
    graceSeconds: config.relayGraceSeconds,
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    logger: options.logger,
  });
  await relays.start();
  // Requests the process can refuse from memory are answered before Koa (front-door.ts).
  const door = createFrontDoor(app, { access, logger: options.logger });
  const server = await listen(door.handle, options, { upgrade: relays.upgrade, checkContinue: door.handleContinue });
  return {
    url: server.url,
    client,
    async stop() {
      // Long polls answer what they have, rather than be cut off with their connections.
      feedWaits.stop();
      // First, while PostgreSQL and Temporal are there: the messages under way settle.
      await brokers?.stop();
      await relays.stop();
      await server.stop();
      door.stop();
      await access.stop();
    },
  };
}

/** An app's handler for a server: Koa settles its own errors, so its promise is nothing to wait for. */
function requestListener(app: Koa<ApiState>): RequestListener {
  const handle = app.callback();
  return (req, res) => void handle(req, res);
}

/**
 * Serves `handler` on the configured port, with the time-outs and the cap per client address of
 * src/api/connections.ts; HTTP upgrades (the relay's WebSockets) go to `upgrade`, or are refused without one;
 * a request that expects `100 Continue` goes to `checkContinue`, or is continued at once without one.
 */
async function listen(
  handler: RequestListener,
  { config, logger }: Pick<ServiceOptions, 'config' | 'logger'>,
  { upgrade, checkContinue }: { upgrade?: RelayHub['upgrade']; checkContinue?: RequestListener } = {},
): Promise<Part & { url: string }> {
  const server = createServer(httpServerOptions(config.httpServer), handler);
  const connections = capConnections(server, config.httpServer.maxConnectionsPerAddress, logger);
  if (upgrade) server.on('upgrade', upgrade);
  // Without it, Node answers `100 Continue` itself before the handler sees the request.
  if (checkContinue) server.on('checkContinue', checkContinue);
  await new Promise<void>((ready, fail) => {
    server.listen(config.port, ready).on('error', fail);
  });
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : config.port}`,
    async stop() {
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      connections.stop();
    },
  };
}
