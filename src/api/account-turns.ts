// Each account's requests that one API process works on at once. The burst an account's rate
// limit allows (200 at once by default) would otherwise take every connection of the database
// pool and queue its callbacks ahead of every other account's at each step of theirs; over the
// cap, a request waits for its account's turn, in the order its account's requests came.
import { metrics } from '../metrics';

/** Runs `work` once fewer than the cap of the account's requests are running in this process. */
export type InTurn = <T>(accountId: string, work: () => Promise<T>) => Promise<T>;

export function createAccountTurns(cap: number): InTurn {
  const accounts = new Map<string, { running: number; waiting: (() => void)[] }>();
  return async (accountId, work) => {
    let account = accounts.get(accountId);
    if (!account) accounts.set(accountId, (account = { running: 0, waiting: [] }));
    if (account.running < cap) account.running++;
    else {
      metrics.requestsWaiting.inc();
      // The request that ends hands its place over: `running` stays as it is.
      await new Promise<void>((resolve) => account.waiting.push(resolve));
      metrics.requestsWaiting.dec();
    }
    try {
      return await work();
    } finally {
      const next = account.waiting.shift();
      if (next) next();
      else if (--account.running === 0) accounts.delete(accountId);
    }
  };
}
