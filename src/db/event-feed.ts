// The event feed of a webhook (GET /v3/webhooks/{id}/events): the rows record_list_write writes
// with each write (migration 026), read oldest first by position, and pruned by the retention job.
import { createHash } from 'node:crypto';
import type { FeedItem } from '../objects';
import type { Topic } from '../topics';
import { DELIVERY_LOG_KEPT, DELIVERY_LOG_PRUNE_EVERY } from './deliveries';
import type { Db } from './sql';

/** The channel record_list_write notifies on commit: the webhooks with new items, comma-separated, or '' for any. */
export const FEED_CHANNEL = 'feed_items';

/**
 * Items kept past RETENTION_DAYS, per webhook: at least as many as its delivery log may hold
 * (pruned to DELIVERY_LOG_KEPT once every DELIVERY_LOG_PRUNE_EVERY attempts), so that no feed
 * item goes while the log may still show its delivery.
 */
export const FEED_KEPT = DELIVERY_LOG_KEPT + DELIVERY_LOG_PRUNE_EVERY;

/** Where an item stands in the feed: its transaction's id and its sequence number, both as decimal text (64-bit). */
export interface FeedPoint {
  xid: string;
  seq: string;
}

// ---- positions ----
// A position is 40 hex digits: the xid and seq of its item (16 each, so that positions of one
// webhook compare as text as they do as points), then 8 of the webhook's tag, which tells a
// position of another webhook.

const POSITION = /^([0-9a-f]{16})([0-9a-f]{16})([0-9a-f]{8})$/;

const tagOf = (webhookId: string) => createHash('sha256').update(`feed:${webhookId}`).digest('hex').slice(0, 8);
const hex16 = (decimal: string) => BigInt(decimal).toString(16).padStart(16, '0');

export function encodePosition(webhookId: string, point: FeedPoint): string {
  return `${hex16(point.xid)}${hex16(point.seq)}${tagOf(webhookId)}`;
}

/** The point a position of this webhook names; `malformed`, or `other_webhook` for one of another webhook. */
export function decodePosition(webhookId: string, position: string): FeedPoint | 'malformed' | 'other_webhook' {
  const match = POSITION.exec(position);
  if (!match) return 'malformed';
  if (match[3] !== tagOf(webhookId)) return 'other_webhook';
  return { xid: BigInt(`0x${match[1]}`).toString(), seq: BigInt(`0x${match[2]}`).toString() };
}

// ---- reading ----

interface FeedRow {
  xid: string;
  seq: string;
  deliveryId: string;
  event: Topic;
  listId: string;
  cursor: string;
  at: Date;
  /** Recorded by a transaction older than every one still running: no row recorded later comes before it. */
  settled: boolean;
}

/** A page of a webhook's feed: the items, and whether items after them are recorded but not yet settled. */
export interface FeedRead {
  items: FeedItem[];
  unsettled: boolean;
}

/**
 * At most `limit` of the webhook's items after `after` (from its oldest without), oldest first.
 * Only settled rows are returned: a row whose transaction is as young as one still running
 * could be overtaken by a row of that one, committed later with a smaller point; such rows
 * end the page, and `unsettled` says there were some (they settle within a transaction's time).
 */
export async function readEventFeed(sql: Db, webhookId: string, after: FeedPoint | null, limit: number): Promise<FeedRead> {
  const rows = await sql<FeedRow[]>`
    SELECT xid::text, seq::text, delivery_id AS "deliveryId", event, list_id AS "listId", cursor::text, at,
           xid < pg_snapshot_xmin(pg_current_snapshot()) AS settled
    FROM feed_items
    WHERE webhook_id = ${webhookId}
      ${after ? sql`AND (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)` : sql``}
    ORDER BY xid, seq
    LIMIT ${limit}`;
  const firstUnsettled = rows.findIndex((row) => !row.settled);
  const settled = firstUnsettled === -1 ? rows : rows.slice(0, firstUnsettled);
  return {
    items: settled.map((row) => ({
      position: encodePosition(webhookId, row),
      deliveryId: row.deliveryId,
      event: row.event,
      listId: row.listId,
      cursor: Number(row.cursor),
      at: row.at.toISOString(),
    })),
    unsettled: firstUnsettled !== -1,
  };
}

/** The point of the webhook's oldest item kept, or null when none is. */
export async function oldestFeedPoint(sql: Db, webhookId: string): Promise<FeedPoint | null> {
  const [row] = await sql<FeedPoint[]>`
    SELECT xid::text, seq::text FROM feed_items WHERE webhook_id = ${webhookId} ORDER BY xid, seq LIMIT 1`;
  return row ?? null;
}

/** Whether point `a` comes before point `b`. */
export const pointBefore = (a: FeedPoint, b: FeedPoint) =>
  BigInt(a.xid) < BigInt(b.xid) || (a.xid === b.xid && BigInt(a.seq) < BigInt(b.seq));

// ---- pruning ----

/**
 * Deletes the items recorded more than `retentionDays` ago, but for each webhook's newest
 * FEED_KEPT (a deleted webhook keeps none), `batch` rows a statement. Webhook by webhook, in a
 * skip scan of the primary key: a webhook whose oldest item is within the window costs one
 * probe; one with older items, one statement per batch, each reading the webhook's oldest
 * `batch` items and its FEED_KEPT-th newest, and stopping at the first item it keeps.
 */
export async function pruneEventFeed(sql: Db, retentionDays: number, batch: number): Promise<number> {
  let total = 0;
  let webhookId = '';
  for (;;) {
    const [next] = await sql<{ webhookId: string; expired: boolean }[]>`
      SELECT webhook_id AS "webhookId", recorded_at < now() - make_interval(days => ${retentionDays}) AS expired
      FROM feed_items WHERE webhook_id > ${webhookId} ORDER BY webhook_id, xid, seq LIMIT 1`;
    if (!next) return total;
    webhookId = next.webhookId;
    if (!next.expired) continue;
    for (;;) {
      const { count } = await sql`
        WITH head AS (
          SELECT xid, seq, recorded_at FROM feed_items WHERE webhook_id = ${webhookId} ORDER BY xid, seq LIMIT ${batch}
        ), kept AS (
          SELECT xid, seq FROM feed_items WHERE webhook_id = ${webhookId} ORDER BY xid DESC, seq DESC OFFSET ${FEED_KEPT - 1} LIMIT 1
        )
        DELETE FROM feed_items f USING head h
        WHERE f.webhook_id = ${webhookId} AND f.xid = h.xid AND f.seq = h.seq
          AND h.recorded_at < now() - make_interval(days => ${retentionDays})
          AND ((h.xid, h.seq) < (SELECT xid, seq FROM kept) OR NOT EXISTS (SELECT 1 FROM webhooks WHERE id = ${webhookId}))`;
      total += count;
      if (count < batch) break;
    }
  }
}
