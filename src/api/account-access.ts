// Who may use the public API, and how much: the account's token (checked against the tokens
// this process keeps, see token-cache.ts), the rate limit of the account or, without a valid
// token, of the client's address, and the fair-use meter. A request with a known token and
// under its limit costs one PostgreSQL statement: the limiter's, sent on the connection that
// hears revocations, so that once it is answered the token's revocation, if any was committed
// before the request came, has been heard.
import ipaddr from 'ipaddr.js';
import type { Middleware } from 'koa';
import type { Sql } from '../db/sql';
import { tokenPrefix } from '../db/tokens';
import type { RateLimits } from '../limits';
import { metrics } from '../metrics';
import { apiErrors } from './errors';
import { bearerToken, type ApiContext, type ApiState } from './middleware';
import { createRateLimiter, rateLimitHeaders } from './rate-limits';
import { createTokenCache } from './token-cache';
import { createUsageMeter } from './usage-meter';

export interface AccountAccess {
  /** Public API: the Bearer token of an account, then its rate limit; sets ctx.state.accountId, tokenId, scopes and actor. */
  authenticate: Middleware<ApiState>;
  /** Writes this process's counts so far (requests, lastUsedAt), for a route that reads them. */
  flushUsage(): Promise<void>;
  /** Stops honouring a token this process has just revoked, before its notification comes back. */
  forgetToken(tokenHash: Buffer): void;
  /** Listens for revoked tokens and starts the meter's flushes. */
  start(): Promise<void>;
  /** Writes the last counts and stops listening. */
  stop(): Promise<void>;
}

/**
 * The client's address as the audit log names it: ctx.ip (the connection's peer, or behind
 * TRUST_PROXY_HOPS trusted proxies the address the outermost saw), an IPv4 client of a
 * dual-stack socket written as IPv4 (`::ffff:192.0.2.1` is 192.0.2.1).
 */
function clientAddress(ip: string): string {
  return ipaddr.isValid(ip) ? ipaddr.process(ip).toString() : ip;
}

export function createAccountAccess(sql: Sql, limits: RateLimits): AccountAccess {
  const tokens = createTokenCache(sql);
  const limiter = createRateLimiter(tokens.connection, limits);
  const meter = createUsageMeter(sql);

  /** Lets the request through to its route, or throws the 401 or 429 that refuses it. */
  const admit = async (ctx: ApiContext): Promise<void> => {
    const token = bearerToken(ctx);
    const grant = token === null ? null : await tokens.find(token);
    const now = Date.now();
    const valid = grant !== null && (grant.expiresAt === null || grant.expiresAt.getTime() > now) ? grant : null;
    const decision = valid ? await limiter.account(valid.accountId) : await limiter.address(ctx.ip);
    ctx.set(rateLimitHeaders(decision));
    if (!decision.allowed) {
      const limited = valid ? 'account' : 'address';
      metrics.rateLimited.inc({ limit: limited });
      throw apiErrors.rateLimited(decision.resetSeconds, limited);
    }
    if (!valid || tokens.revokedSince(token!)) throw apiErrors.unauthorized();
    ctx.state.accountId = valid.accountId;
    ctx.state.tokenId = valid.tokenId;
    ctx.state.scopes = valid.scopes;
    ctx.state.actor = { tokenId: valid.tokenId, tokenName: valid.tokenName, clientAddress: clientAddress(ctx.ip) };
    meter.count(valid, tokenPrefix(token!), now);
  };

  const authenticate: Middleware<ApiState> = async (ctx, next) => {
    const started = performance.now();
    try {
      await admit(ctx);
    } finally {
      // What the token and the limit cost this request, the route's own work apart.
      metrics.httpAuthDuration.observe((performance.now() - started) / 1000);
    }
    await next();
  };

  return {
    authenticate,
    flushUsage: () => meter.flush(),
    forgetToken: (tokenHash) => tokens.forget(tokenHash),
    async start() {
      await tokens.start();
      meter.start();
    },
    async stop() {
      await meter.stop();
      await tokens.stop();
    },
  };
}
