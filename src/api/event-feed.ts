// Pages of a webhook's event feed (GET /v3/webhooks/{id}/events), and the long poll of `wait`.
// A waiting request costs no statement while nothing happens: one LISTEN per process, on the sql
// instance's listening connection, hears every commit that records feed items
// (record_list_write notifies FEED_CHANNEL with the webhooks that have new ones), and wakes the
// requests waiting on those webhooks, which then read again. Every API process listens, so a
// write recorded through one wakes the requests waiting on any.
import type { ServerResponse } from 'node:http';
import { FEED_CHANNEL, readEventFeed, type FeedPoint } from '../db/event-feed';
import type { Sql } from '../db/sql';
import { metrics } from '../metrics';
import type { FeedPage } from '../objects';

/**
 * How soon a waiting request reads again when items are recorded but not yet settled (a
 * transaction older than theirs still runs, see readEventFeed), doubling up to the most: their
 * commit notified already, and what holds them back may notify nothing.
 */
const UNSETTLED_FIRST_MS = 20;
const UNSETTLED_MOST_MS = 1000;

export interface FeedWaits {
  /**
   * Watches the webhook's feed from now on, once this process listens: start the watch before
   * reading, so that an item recorded between the read and the wait wakes it.
   */
  watch(webhookId: string): Promise<FeedWatch>;
  /** Ends every watch: the process is stopping, and waiting requests answer what they have. */
  stop(): void;
}

export interface FeedWatch {
  /**
   * Resolves true once the webhook may have new items since the watch began or since the last
   * call, or once `ms` have passed; false once the watch or every watch has ended.
   */
  changed(ms: number): Promise<boolean>;
  end(): void;
}

interface Watcher {
  /** An item may have been recorded. */
  wake(): void;
  end(): void;
}

export function createFeedWaits(sql: Sql): FeedWaits {
  const watchers = new Map<string, Set<Watcher>>();
  let listening: Promise<unknown> | undefined;
  let stopped = false;

  const wakeAll = () => watchers.forEach((set) => set.forEach((watcher) => watcher.wake()));
  const heard = (payload: string) => {
    if (payload === '') wakeAll();
    else for (const webhookId of payload.split(',')) watchers.get(webhookId)?.forEach((watcher) => watcher.wake());
  };
  // From the first watch on. Each time the listening connection is (re)established, every
  // watch reads again: a notification may have come while it was not.
  const listen = () =>
    (listening ??= sql.listen(FEED_CHANNEL, heard, wakeAll).catch((error: unknown) => {
      listening = undefined;
      throw error;
    }));

  return {
    async watch(webhookId) {
      let woken = false;
      let ended = stopped;
      let settle: ((live: boolean) => void) | undefined;
      const watcher: Watcher = {
        wake() {
          woken = true;
          settle?.(true);
        },
        end() {
          ended = true;
          watchers.get(webhookId)?.delete(watcher);
          if (watchers.get(webhookId)?.size === 0) watchers.delete(webhookId);
          settle?.(false);
        },
      };
      const set = watchers.get(webhookId) ?? new Set<Watcher>();
      watchers.set(webhookId, set.add(watcher));
      try {
        await listen();
      } catch (error) {
        watcher.end();
        throw error;
      }
      return {
        async changed(ms) {
          if (!ended && !woken) {
            let timer: NodeJS.Timeout | undefined;
            await new Promise<boolean>((resolve) => {
              settle = resolve;
              timer = setTimeout(() => resolve(true), ms);
            });
            clearTimeout(timer);
            settle = undefined;
          }
          woken = false;
          return !ended;
        },
        end: () => watcher.end(),
      };
    },
    stop() {
      stopped = true;
      watchers.forEach((set) => set.forEach((watcher) => watcher.end()));
    },
  };
}

/** Which page of a webhook's feed: after `after` (its position as given, and its point), up to `limit` items, waiting up to `waitMs` for one. */
export interface FeedRequest {
  webhookId: string;
  after: { position: string; point: FeedPoint } | null;
  limit: number;
  waitMs: number;
}

/**
 * A page of the feed. With `waitMs` and nothing after the position, holds the answer until an
 * item is recorded (a notification names the webhook), the time is up, the client has gone
 * (`response` closed), or the process stops; then answers what there is.
 */
export async function feedPage(sql: Sql, waits: FeedWaits, request: FeedRequest, response: ServerResponse): Promise<FeedPage> {
  const { webhookId, after, limit, waitMs } = request;
  const deadline = Date.now() + waitMs;
  const watch = waitMs > 0 ? await waits.watch(webhookId) : null;
  const gone = () => watch?.end();
  response.once('close', gone);
  try {
    let unsettledWait = UNSETTLED_FIRST_MS;
    for (;;) {
      const { items, unsettled } = await readEventFeed(sql, webhookId, after?.point ?? null, limit);
      const left = deadline - Date.now();
      if (items.length > 0 || watch === null || left <= 0) return { data: items, next: items.at(-1)?.position ?? after?.position ?? null };
      metrics.feedWaiting.inc();
      const live = await watch.changed(unsettled ? Math.min(unsettledWait, left) : left).finally(() => metrics.feedWaiting.dec());
      if (!live) return { data: [], next: after?.position ?? null };
      if (unsettled) unsettledWait = Math.min(unsettledWait * 2, UNSETTLED_MOST_MS);
    }
  } finally {
    response.off('close', gone);
    watch?.end();
  }
}
