import Router from '@koa/router';
import Koa from 'koa';
import type { Sql } from '../db/sql';
import type { Logger } from '../logger';
import type { Workflows } from '../temporal/client';
import { apiErrors } from './errors';
import { buildOpenApiDocument } from './openapi';
import { authenticateAccount, authenticateInternal, errorEnvelope, jsonBody, requestLog, type ApiState } from './middleware';
import { internalRoutes } from './routes/internal';
import { webhookRoutes } from './routes/webhooks';

export interface AppDependencies {
  sql: Sql;
  workflows: Workflows;
  logger: Logger;
  internalApiToken: string;
  checkUrl: (raw: string) => Promise<URL>;
  deliveryTimeoutMs: number;
}

const PUBLIC_BODY_LIMIT = 64 * 1024;
const INTERNAL_BODY_LIMIT = 1024 * 1024;

/** The routers of the three route groups, in the order the app tries them. */
export function createRouters(deps: AppDependencies): Router<ApiState>[] {
  // Routes that need no token.
  const open = new Router<ApiState>();
  const openApiDocument = buildOpenApiDocument();
  open.get('/v3/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  open.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  open.get('/readyz', async (ctx) => {
    try {
      await Promise.all([deps.sql`SELECT 1`, deps.workflows.checkHealth()]);
    } catch {
      throw apiErrors.unavailable();
    }
    ctx.body = { status: 'ready' };
  });

  // Auth comes first, before a route reads its body (only routes that take one do).
  const publicApi = new Router<ApiState>({ prefix: '/v3' });
  publicApi.use(authenticateAccount(deps.sql));
  const webhooks = webhookRoutes({ ...deps, body: jsonBody(PUBLIC_BODY_LIMIT) });
  publicApi.use(webhooks.routes(), webhooks.allowedMethods());

  const internalApi = new Router<ApiState>({ prefix: '/internal/v3' });
  internalApi.use(authenticateInternal(deps.internalApiToken));
  const internal = internalRoutes({ ...deps, body: jsonBody(INTERNAL_BODY_LIMIT) });
  internalApi.use(internal.routes(), internal.allowedMethods());

  return [open, publicApi, internalApi];
}

export function createApp(deps: AppDependencies): Koa<ApiState> {
  const app = new Koa<ApiState>();
  // Errors are answered by errorEnvelope and logged there; Koa's own printer would repeat them.
  app.silent = true;
  app.use(requestLog(deps.logger));
  app.use(errorEnvelope(deps.logger));
  for (const router of createRouters(deps)) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
