// What the front door refused (front-door.ts) and the connections the cap per address closed
// (connections.ts), told without a log line each (a flood would make thousands a second): one
// summary line per interval while any came: how many, by reason, and the client addresses and
// accounts that drew the most. Never a token, nor any part of one. The metrics count each.
import type { Logger } from '../logger';
import { addressKey } from './rate-limits';

export interface Refusal<Reason extends string> {
  reason: Reason;
  /** The client's address (ctx.ip); a summary names an IPv6 client by its /64, as the rate limit keys it. */
  address: string;
  /** The account of a valid token, when the account's limit refused it. */
  accountId?: string | null;
}

export interface RefusalLog<Reason extends string> {
  count(refusal: Refusal<Reason>): void;
  /** Writes the summary of the refusals counted since the last one, if there were any. */
  flush(): void;
}

/** Between the first refusal counted and its summary. */
export const SUMMARY_INTERVAL_MS = 10_000;
/** Addresses (and accounts) told apart per summary at most, so that a flood from many addresses takes bounded memory. */
const TALLIED_MAX = 10_000;
/** The addresses (and accounts) a summary names: those refused most. */
const NAMED = 5;

/** Counts per key, of the first TALLIED_MAX keys. */
class Tally {
  readonly counts = new Map<string, number>();

  add(key: string): void {
    const count = this.counts.get(key);
    if (count !== undefined) this.counts.set(key, count + 1);
    else if (this.counts.size < TALLIED_MAX) this.counts.set(key, 1);
  }

  /** The keys counted most, most first, each as `keyOf` gives it (the counts of keys it gives alike added up). */
  top(keyOf: (key: string) => string = (key) => key): [string, number][] {
    const counts = new Map<string, number>();
    for (const [key, count] of this.counts) counts.set(keyOf(key), (counts.get(keyOf(key)) ?? 0) + count);
    return [...counts].sort((a, b) => b[1] - a[1]).slice(0, NAMED);
  }
}

/** A summary's message and level: the front door's `requests refused` (info), the cap's `connections refused` (warn). */
export interface RefusalSummary {
  msg: string;
  level: 'info' | 'warn';
}

export function createRefusalLog<Reason extends string>(
  logger: Logger,
  { msg, level }: RefusalSummary,
  intervalMs = SUMMARY_INTERVAL_MS,
): RefusalLog<Reason> {
  let since = 0;
  let reasons = new Map<Reason, number>();
  let addresses = new Tally();
  let accounts = new Tally();
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (reasons.size === 0) return;
    logger[level]({
      msg,
      since: new Date(since).toISOString(),
      refused: Object.fromEntries(reasons),
      addresses: addresses.counts.size,
      // Keyed as the summary is written, not per refusal: the addresses are few next to the refusals.
      topAddresses: addresses.top(addressKey).map(([address, refused]) => ({ address, refused })),
      topAccounts: accounts.top().map(([accountId, refused]) => ({ accountId, refused })),
    });
    reasons = new Map();
    addresses = new Tally();
    accounts = new Tally();
  };

  return {
    count({ reason, address, accountId }) {
      if (reasons.size === 0) since = Date.now();
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      addresses.add(address);
      if (accountId) accounts.add(accountId);
      // unref: a summary still due never holds the process up; stopping flushes it.
      timer ??= setTimeout(flush, intervalMs).unref();
    },
    flush,
  };
}
