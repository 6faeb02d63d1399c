// The public API's rate limits, shared by every API process through PostgreSQL: one per
// account, and one per client address for requests without a valid token. Counted by
// rate-limiter-flexible's PostgreSQL store in the unlogged table `rate_limits`: one
// statement per request, on the connection it is given, none once a key is over its limit
// (this process then refuses it from memory until its window ends, and says so synchronously
// for the front door, front-door.ts).
import ipaddr from 'ipaddr.js';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sql } from '../db/sql';
import type { RateLimit, RateLimits } from '../limits';

/** What one request drew from its bucket: the `RateLimit-*` headers, and whether it may go on. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the bucket is full again. */
  resetSeconds: number;
}

export interface RateLimiter {
  account(accountId: string): Promise<RateLimitDecision>;
  address(clientAddress: string): Promise<RateLimitDecision>;
  /** Without a statement: the refusal of an account this process holds as over its limit (until its window ends), or null. */
  accountBlocked(accountId: string): RateLimitDecision | null;
  /** Without a statement: the refusal of a client address this process holds as over its limit, or null. */
  addressBlocked(clientAddress: string): RateLimitDecision | null;
}

/**
 * rate-limiter-flexible's PostgreSQL store talks to a node-postgres pool; this gives it the
 * one call it makes, `query({ text, values })`, on a postgres.js connection.
 */
function storeClient(sql: Sql) {
  return {
    async query({ text, values = [] }: { text: string; values?: (string | number | null)[] }) {
      // Prepared: the library sends the same few statements on every request.
      const rows = await sql.unsafe(text, values, { prepare: true });
      return { rows, rowCount: rows.length };
    },
  };
}

/**
 * The library's window: `burst` requests, counted from the first, in `burst / perSecond`
 * seconds. The same burst and long-run rate as a bucket that refills a token at a time, in
 * one statement per request (see docs/api.md).
 */
function storeLimiter(sql: Sql, keyPrefix: string, { perSecond, burst }: RateLimit): RateLimiterPostgres {
  return new RateLimiterPostgres({
    storeClient: storeClient(sql),
    storeType: 'pool',
    tableName: 'rate_limits',
    tableCreated: true, // by migration 013, unlogged
    keyPrefix,
    points: burst,
    duration: burst / perSecond,
    // Once a key has spent its window, this process refuses it without asking PostgreSQL.
    inMemoryBlockOnConsumed: burst,
  });
}

async function draw(limiter: RateLimiterPostgres, key: string): Promise<RateLimitDecision> {
  let allowed = true;
  let result: RateLimiterRes;
  try {
    result = await limiter.consume(key);
  } catch (refused) {
    if (!(refused instanceof RateLimiterRes)) throw refused;
    allowed = false;
    result = refused;
  }
  return decision(limiter, allowed, result);
}

function decision(
  limiter: RateLimiterPostgres,
  allowed: boolean,
  result: Pick<RateLimiterRes, 'remainingPoints' | 'msBeforeNext'>,
): RateLimitDecision {
  return {
    allowed,
    limit: limiter.points,
    remaining: result.remainingPoints,
    // A refused request is told to wait at least a second: Retry-After: 0 would invite a retry at once.
    resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil(result.msBeforeNext / 1000)),
  };
}

/** The library's own in-memory block, which consume() reads first; public, though its types omit it. */
type InMemoryBlocks = { getInMemoryBlockMsBeforeExpire(rlKey: string): number };

/** What consume() would refuse now without asking PostgreSQL (it answers RateLimiterRes(0, ms)): the same refusal, synchronously. */
function blocked(limiter: RateLimiterPostgres, key: string): RateLimitDecision | null {
  const ms = (limiter as unknown as InMemoryBlocks).getInMemoryBlockMsBeforeExpire(limiter.getKey(key));
  return ms > 0 ? decision(limiter, false, { remainingPoints: 0, msBeforeNext: ms }) : null;
}

export function createRateLimiter(sql: Sql, limits: RateLimits): RateLimiter {
  const accounts = storeLimiter(sql, 'account', limits.account);
  const addresses = storeLimiter(sql, 'address', limits.address);
  return {
    account: (accountId) => draw(accounts, accountId),
    address: (clientAddress) => draw(addresses, addressKey(clientAddress)),
    accountBlocked: (accountId) => blocked(accounts, accountId),
    addressBlocked: (clientAddress) => blocked(addresses, addressKey(clientAddress)),
  };
}

/**
 * The key of a client address: an IPv4 address as it is (also when it comes IPv4-mapped), an
 * IPv6 address by its /64, which one client usually holds whole.
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${network.join(':')}::/64`;
}

/** The headers every limited answer carries. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}
