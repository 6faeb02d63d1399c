import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities';
import { version } from '../package.json';
import { createApp } from './api/app';
import type { Config } from './config';
import { migrate } from './db/migrate';
import { createSql, type Sql } from './db/sql';
import { createHttpSender, type HttpSenderOptions } from './delivery/sender';
import { checkWebhookUrl, createAddressPolicy, systemResolver } from './delivery/url-policy';
import type { Logger } from './logger';
import { createWorkflows } from './temporal/client';
import { createWorker } from './temporal/worker';
import { TASK_QUEUE } from './types';

export const USER_AGENT = `svc-webhooks/${version}`;

export interface ServiceOptions {
  config: Config;
  databaseUrl: string;
  temporalAddress: string;
  internalApiToken: string;
  logger: Logger;
  /** Tests give each suite its own. */
  taskQueue?: string;
  /** Tests trust their own CA here and may inject a resolver. */
  sender?: Pick<HttpSenderOptions, 'ca' | 'resolve'>;
}

export interface Service {
  /** Base URL of the API, e.g. http://127.0.0.1:3000 */
  url: string;
  sql: Sql;
  client: Client;
  stop(): Promise<void>;
}

/** Connects to PostgreSQL and Temporal, applies migrations, and runs the worker and the API. */
export async function startService(options: ServiceOptions): Promise<Service> {
  const { config, logger } = options;
  const taskQueue = options.taskQueue ?? TASK_QUEUE;
  const sql = createSql(options.databaseUrl);
  await migrate(sql);

  const policy = createAddressPolicy(config.allowedCidrs);
  const resolve = options.sender?.resolve ?? systemResolver;
  const http = createHttpSender({ timeoutMs: config.deliveryTimeoutMs, policy, resolve, ca: options.sender?.ca, userAgent: USER_AGENT });

  const workerConnection = await NativeConnection.connect({ address: options.temporalAddress });
  const worker = await createWorker({
    connection: workerConnection,
    namespace: config.temporalNamespace,
    taskQueue,
    activities: createActivities({ sql, http }),
  });
  const workerRun = worker.run();

  const clientConnection = await Connection.connect({ address: options.temporalAddress });
  const client = new Client({ connection: clientConnection, namespace: config.temporalNamespace });
  const app = createApp({
    sql,
    workflows: createWorkflows(client, taskQueue, config.deliveryTimeoutMs),
    logger,
    internalApiToken: options.internalApiToken,
    checkUrl: (raw) => checkWebhookUrl(raw, policy, resolve),
    deliveryTimeoutMs: config.deliveryTimeoutMs,
  });
  const server = await new Promise<Server>((ready, fail) => {
    const listening = app.listen(config.port, () => ready(listening)).on('error', fail);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  return {
    url: `http://127.0.0.1:${port}`,
    sql,
    client,
    async stop() {
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      worker.shutdown();
      await workerRun;
      await Promise.all([http.close(), clientConnection.close(), workerConnection.close()]);
      await sql.end({ timeout: 5 });
    },
  };
}
