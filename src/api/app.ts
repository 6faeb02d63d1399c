import Router from '@koa/router';
import Koa from 'koa';
import { dashboardRoutes } from '../dashboard/routes';
import type { Sql } from '../db/sql';
import type { Logger } from '../logger';
import type { SecretBox } from '../secret-keys';
import type { Workflows } from '../temporal/client';
import type { BrokerIntake } from '../intake/brokers';
import { BROKER_LABELS } from '../intake/messages';
import { metricsText, registry } from '../metrics';
import { apiErrors } from './errors';
import { INTERNAL_BODY_LIMIT_BYTES, PUBLIC_BODY_LIMIT_BYTES } from '../limits';
import { buildOpenApiDocument } from './openapi';
import { createFeedWaits, type FeedWaits } from './event-feed';
import type { AccountAccess } from './account-access';
import { ROUTER_OPTIONS, authenticateInternal, errorEnvelope, jsonBody, requestLog, type ApiState } from './middleware';
import { requireRouteScopes } from './route-scopes';
import { accountRoutes } from './routes/account';
import { accountTokenRoutes } from './routes/account-tokens';
import { accountUsageRoutes } from './routes/account-usage';
import { internalRoutes } from './routes/internal';
import { recoveryRoutes } from './routes/recoveries';
import { relaySessionRoutes } from './routes/relay-sessions';
import { webhookRoutes } from './routes/webhooks';

export interface AppDependencies {
  sql: Sql;
  /** Seals the secrets the API makes or is given, and opens a new webhook's for its one answer. */
  secrets: SecretBox;
  workflows: Workflows;
  logger: Logger;
  internalApiToken: string;
  checkUrl: (raw: string) => Promise<URL>;
  deliveryTimeoutMs: number;
  /** Where the Temporal SDK's Prometheus exporter answers, if it runs; appended to /metrics. */
  sdkMetricsUrl?: string;
  /** The public API's tokens, rate limits and meter (started and stopped by the caller). */
  access: AccountAccess;
  /** Proxies in front of the API whose X-Forwarded-For is believed (TRUST_PROXY_HOPS); 0: none. */
  trustProxyHops?: number;
  /** Where the dashboard links a trace id (TRACE_URL_TEMPLATE); absent: it shows the id as text. */
  traceUrlTemplate?: string;
  /** The long polls of the event feed, which the caller stops; absent: the app's own, on `sql`. */
  feedWaits?: FeedWaits;
  /** The broker consumers of this process (src/intake/brokers.ts), whose reach /readyz reports; absent: none configured. */
  brokers?: Pick<BrokerIntake, 'unreachable'>;
}

/** The routers of the three route groups, in the order the app tries them. */
export function createRouters(deps: AppDependencies): Router<ApiState>[] {
  // Routes that need no token.
  const open = probeRoutes(deps);
  const openApiDocument = buildOpenApiDocument();
  open.get('/v3/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  open.get('/readyz', async (ctx) => {
    try {
      await Promise.all([deps.sql`SELECT 1`, deps.workflows.checkHealth()]);
    } catch {
      throw apiErrors.unavailable();
    }
    const unreachable = (await deps.brokers?.unreachable()) ?? [];
    if (unreachable.length > 0) throw apiErrors.brokersUnreachable(unreachable.map((broker) => BROKER_LABELS[broker]).join(', '));
    ctx.body = { status: 'ready' };
  });

  // Auth comes first, then the token's scopes, before a route reads its body (only routes that take one do).
  const publicApi = new Router<ApiState>({ ...ROUTER_OPTIONS, prefix: '/v3' });
  publicApi.use(deps.access.authenticate, requireRouteScopes);
  const publicBody = jsonBody(PUBLIC_BODY_LIMIT_BYTES);
  for (const routes of [
    webhookRoutes({ ...deps, feedWaits: deps.feedWaits ?? createFeedWaits(deps.sql), body: publicBody }),
    accountRoutes({ ...deps, body: publicBody }),
    accountTokenRoutes({ ...deps, body: publicBody }),
    accountUsageRoutes(deps),
    recoveryRoutes({ ...deps, body: publicBody }),
    relaySessionRoutes({ ...deps, body: publicBody }),
  ]) {
    publicApi.use(routes.routes(), routes.allowedMethods());
  }

  const internalApi = new Router<ApiState>({ ...ROUTER_OPTIONS, prefix: '/internal/v3' });
  internalApi.use(authenticateInternal(deps.internalApiToken));
  const internal = internalRoutes({ ...deps, body: jsonBody(INTERNAL_BODY_LIMIT_BYTES) });
  internalApi.use(internal.routes(), internal.allowedMethods());

  return [open, publicApi, internalApi];
}

/** What every process answers: liveness and its metrics. */
function probeRoutes(deps: Pick<AppDependencies, 'sdkMetricsUrl'>): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await metricsText(deps.sdkMetricsUrl);
  });
  return router;
}

function appWith(logger: Logger, routers: Router<ApiState>[], trustProxyHops = 0): Koa<ApiState> {
  const app = new Koa<ApiState>();
  // ctx.ip: the socket's peer, or, behind that many trusted proxies, the address the outermost saw.
  app.proxy = trustProxyHops > 0;
  app.maxIpsCount = trustProxyHops;
  // Errors are answered by errorEnvelope and logged there; Koa's own printer would repeat them.
  app.silent = true;
  app.use(requestLog(logger));
  app.use(errorEnvelope(logger));
  for (const router of routers) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}

/** The API process: both APIs, the probes, and the dashboard page (which calls the public API). */
export function createApp(deps: AppDependencies): Koa<ApiState> {
  const dashboard = dashboardRoutes({ traceUrlTemplate: deps.traceUrlTemplate ?? null });
  return appWith(deps.logger, [...createRouters(deps), dashboard], deps.trustProxyHops);
}

/** A worker running alone answers /healthz and /metrics only. */
export function createWorkerApp(deps: Pick<AppDependencies, 'logger' | 'sdkMetricsUrl'>): Koa<ApiState> {
  return appWith(deps.logger, [probeRoutes(deps)]);
}
