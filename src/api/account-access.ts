// Who may use the public API, and how much: the account's token (checked against the tokens
// this process keeps, see token-cache.ts), the rate limit of the account or, without a valid
// token, of the client's address, and the fair-use meter. A request with a known token and
// under its limit costs one PostgreSQL statement: the limiter's, sent on the connection that
// hears revocations, so that once it is answered the token's revocation, if any was committed
// before the request came, has been heard. A request this process can refuse from memory
// costs none: a token it holds as valid whose account is over its limit, and any other request
// (no token, a bad one, or one it does not know yet) from an address over its limit, which so
// costs no lookup of its token; the front door (front-door.ts) asks the same before Koa.
import ipaddr from 'ipaddr.js';
import type { Middleware } from 'koa';
import type { Sql } from '../db/sql';
import { tokenPrefix, type TokenGrant } from '../db/tokens';
import type { RateLimits } from '../limits';
import { metrics } from '../metrics';
import { apiErrors } from './errors';
import { bearerToken, type ApiContext, type ApiState } from './middleware';
import { createAccountTurns } from './account-turns';
import { createRateLimiter, rateLimitHeaders, type RateLimitDecision } from './rate-limits';
import { createTokenCache } from './token-cache';
import { createUsageMeter } from './usage-meter';

export interface AccountAccess {
  /** Public API: the Bearer token of an account, then its rate limit; sets ctx.state.accountId, tokenId, scopes and actor. */
  authenticate: Middleware<ApiState>;
  /**
   * Without a statement: the 429 this process answers the request from memory, or null. For a
   * token it holds as valid (and unexpired), the account's limit; otherwise the address's.
   */
  refusalFromMemory(token: string | null, clientAddress: string): MemoryRefusal | null;
  /** Writes this process's counts so far (requests, lastUsedAt), for a route that reads them. */
  flushUsage(): Promise<void>;
  /** Stops honouring a token this process has just revoked, before its notification comes back. */
  forgetToken(tokenHash: Buffer): void;
  /** Listens for revoked tokens and starts the meter's flushes. */
  start(): Promise<void>;
  /** Writes the last counts and stops listening. */
  stop(): Promise<void>;
}

/** A request refused from memory: the limit it is over, its account's for a valid token, and the limiter's answer. */
export interface MemoryRefusal {
  limit: 'account' | 'address';
  accountId: string | null;
  decision: RateLimitDecision;
}

/** The grant, if it is one that is valid now. */
const validAt = (grant: TokenGrant | null | undefined, now: number) =>
  grant && (grant.expiresAt === null || grant.expiresAt.getTime() > now) ? grant : null;

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
  const inTurn = createAccountTurns(limits.accountInFlight);

  const refusalFromMemory = (token: string | null, address: string): MemoryRefusal | null => {
    const valid = token === null ? null : validAt(tokens.known(token), Date.now());
    if (valid) {
      const decision = limiter.accountBlocked(valid.accountId);
      return decision && { limit: 'account', accountId: valid.accountId, decision };
    }
    const decision = limiter.addressBlocked(address);
    return decision && { limit: 'address', accountId: null, decision };
  };

  const refuse = (ctx: ApiContext, limited: MemoryRefusal['limit'], decision: RateLimitDecision): never => {
    ctx.set(rateLimitHeaders(decision));
    metrics.rateLimited.inc({ limit: limited });
    throw apiErrors.rateLimited(decision.resetSeconds, limited);
  };

  /** The request's grant if its token is valid now; throws the 429 this process can give from memory. */
  const identify = async (ctx: ApiContext, token: string | null): Promise<TokenGrant | null> => {
    const early = refusalFromMemory(token, ctx.ip);
    if (early) refuse(ctx, early.limit, early.decision);
    return validAt(token === null ? null : await tokens.find(token), Date.now());
  };

  /** No valid token: 429 over the address's limit, else 401. */
  const refuseUnknown = async (ctx: ApiContext): Promise<never> => {
    const decision = await limiter.address(ctx.ip);
    if (!decision.allowed) refuse(ctx, 'address', decision);
    ctx.set(rateLimitHeaders(decision));
    throw apiErrors.unauthorized();
  };

  /** A valid token: 429 over its account's limit, 401 if it was revoked meanwhile, else the request is its account's. */
  const admit = async (ctx: ApiContext, token: string, valid: TokenGrant): Promise<void> => {
    const decision = await limiter.account(valid.accountId);
    if (!decision.allowed) refuse(ctx, 'account', decision);
    ctx.set(rateLimitHeaders(decision));
    if (tokens.revokedSince(token)) throw apiErrors.unauthorized();
    ctx.state.accountId = valid.accountId;
    ctx.state.tokenId = valid.tokenId;
    ctx.state.scopes = valid.scopes;
    ctx.state.actor = { tokenId: valid.tokenId, tokenName: valid.tokenName, clientAddress: clientAddress(ctx.ip) };
    meter.count(valid, tokenPrefix(token), Date.now());
  };

  // A valid token's limiter statement and route run in its account's turn (account-turns.ts), so
  // that one account's burst holds few places in the queue of the limiter's one connection.
  const authenticate: Middleware<ApiState> = async (ctx, next) => {
    const token = bearerToken(ctx.get('Authorization'));
    const started = performance.now();
    // What the token, the limit and the wait for the account's turn cost this request, the route's own work apart.
    const observe = () => metrics.httpAuthDuration.observe((performance.now() - started) / 1000);
    let valid: TokenGrant;
    try {
      valid = (await identify(ctx, token)) ?? (await refuseUnknown(ctx));
    } catch (refusal) {
      observe();
      throw refusal;
    }
    await inTurn(valid.accountId, async () => {
      try {
        await admit(ctx, token!, valid);
      } finally {
        observe();
      }
      await next();
    });
  };

  return {
    authenticate,
    refusalFromMemory,
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
