// What an API process counts per request without writing per request: each account's
// requests per UTC day (the fair-use meter) and when each token was last used. Gathered in
// memory and written by one flush a second, in two statements however many requests came.
import type { Sql } from '../db/sql';
import { markTokensUsed, type TokenGrant, type TokenUse } from '../db/tokens';
import { addApiRequests, type RequestCount } from '../db/usage';

const FLUSH_EVERY_MS = 1000;
/** `lastUsedAt` moves at most once in this long. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface UsageMeter {
  /** Counts one request made with this token (its first characters given); `now` in ms. */
  count(grant: TokenGrant, prefix: string, now: number): void;
  /** Writes what was counted so far; resolves once it is written. */
  flush(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export function createUsageMeter(sql: Sql): UsageMeter {
  let requests = new Map<string, RequestCount>();
  let uses = new Map<string, TokenUse>();
  let flushing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  async function write(): Promise<void> {
    if (requests.size === 0 && uses.size === 0) return;
    const [counted, used] = [requests, uses];
    requests = new Map<string, RequestCount>();
    uses = new Map<string, TokenUse>();
    try {
      await addApiRequests(sql, [...counted.values()]);
      await markTokensUsed(sql, [...used.values()]);
    } catch {
      // PostgreSQL is away: keep the counts for the next flush.
      for (const [key, count] of counted) addRequests(key, count.accountId, count.day, count.requests);
      for (const [tokenId, use] of used) if (!uses.has(tokenId)) uses.set(tokenId, use);
    }
  }

  function addRequests(key: string, accountId: string, day: string, added: number): void {
    const count = requests.get(key);
    if (count) count.requests += added;
    else requests.set(key, { accountId, day, requests: added });
  }

  const meter: UsageMeter = {
    count(grant, prefix, now) {
      const day = new Date(now).toISOString().slice(0, 10);
      addRequests(`${grant.accountId} ${day}`, grant.accountId, day, 1);
      if (grant.lastUsedAt === null || now - grant.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
        grant.lastUsedAt = new Date(now);
        uses.set(grant.tokenId, { tokenId: grant.tokenId, at: grant.lastUsedAt, prefix });
      }
    },
    flush() {
      flushing = flushing.then(write);
      return flushing;
    },
    start() {
      timer = setInterval(() => void meter.flush(), FLUSH_EVERY_MS).unref();
    },
    async stop() {
      clearInterval(timer);
      await meter.flush();
    },
  };
  return meter;
}
