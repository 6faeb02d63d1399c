// The one place the public API checks a token's scopes against the route table (ROUTE_SCOPES,
// src/scopes.ts): after the token is checked (account-access.ts) and before the route reads its
// body or anything else. It costs no statement: the scopes came with the token, from the tokens
// this process keeps (token-cache.ts), which are always their rows' (migration 021 fixes a
// token's scopes when it is made).
import type { RouterContext, RouterMiddleware } from '@koa/router';
import { lackingScope, scopesOf } from '../scopes';
import { apiErrors } from './errors';
import type { ApiState } from './middleware';

/**
 * The route the router matched, as the OpenAPI document and ROUTE_SCOPES write it:
 * "GET /v3/webhooks/{id}" (HEAD asks what GET does). Null when no route matched.
 */
export function matchedRoute(ctx: Pick<RouterContext<ApiState>, 'matched' | 'method'>): string | null {
  const layer = ctx.matched?.findLast((candidate) => candidate.methods.includes(ctx.method));
  if (!layer) return null;
  const path = String(layer.path).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  return `${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${path}`;
}

/** Refuses a token without every scope its route needs: 403 INSUFFICIENT_SCOPE, naming the first it lacks. */
export const requireRouteScopes: RouterMiddleware<ApiState> = async (ctx, next) => {
  const route = matchedRoute(ctx);
  const required = route === null ? undefined : scopesOf(route);
  // A route the table forgot is refused to every token (a 500); test/api/openapi.test.ts finds it first.
  if (!required) throw new Error(`${route ?? ctx.path} has no entry in ROUTE_SCOPES (src/scopes.ts)`);
  const lacking = lackingScope(ctx.state.scopes ?? [], required);
  if (lacking) throw apiErrors.insufficientScope(lacking);
  await next();
};
