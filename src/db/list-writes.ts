import { createHash } from 'node:crypto';
import { topicsOfWrite, type Topic } from '../topics';
import type { ListWrite, Recipient } from '../contract/payloads';
import type { ListWriteBody } from '../objects';
import { inDatabaseSpan } from '../tracing/spans';
import type { Sql } from './sql';

/** A write to a list as the upstream sent it: `at` too is part of what makes a repeat identical. */
export type WriteRequest = ListWriteBody & { listId: string };

export type RecordWriteResult =
  | { outcome: 'recorded' | 'repeated'; write: ListWrite; recipients: Recipient[] }
  | { outcome: 'write_id_reused' }
  | { outcome: 'list_not_found' };

/** The write as the upstream sent it, canonically: same body, same hash. */
function bodyHash(request: WriteRequest): Buffer {
  const canonical = JSON.stringify({
    at: request.at ?? null,
    changes: request.changes.map((c) => [c.type, c.itemId ?? null, c.accountId ?? null]),
  });
  return createHash('sha256').update(canonical).digest();
}

/**
 * Records a write once: assigns the list's next cursor, applies membership changes and
 * notes which accounts may receive it (owner, members before and after), then finds its
 * recipients and records their deliveries in the event feed, each with its delivery id
 * (migration 026). A repeat of the same body returns the first answer; the same writeId with
 * another body is refused. The list row is locked, so racing repeats and writes to one list
 * are serialised; the lock is taken and released in one round trip, by the
 * record_list_write function (migration 009), so that it is not held across this process's
 * event loop.
 */
export async function recordListWrite(sql: Sql, request: WriteRequest): Promise<RecordWriteResult> {
  const membershipChanges = request.changes.filter((change) => change.type === 'member.joined' || change.type === 'member.left');
  const [row] = await inDatabaseSpan(
    'record_list_write',
    () => sql<RecordedRow[]>`
    SELECT outcome, write_cursor AS "cursor", write_at AS "at", write_topics AS "topics", recipients
    FROM record_list_write(
      ${request.listId}, ${request.writeId}, ${bodyHash(request)},
      ${new Date(request.at ?? Date.now()).toISOString()}, ${topicsOfWrite(request.changes)},
      ${membershipChanges.map((change) => change.type)}, ${membershipChanges.map((change) => change.accountId!)})`,
  );
  if (row.outcome === 'list_not_found' || row.outcome === 'write_id_reused') return { outcome: row.outcome };
  const write: ListWrite = {
    listId: request.listId,
    writeId: request.writeId,
    cursor: Number(row.cursor),
    at: row.at!.toISOString(),
    topics: row.topics!,
  };
  return { outcome: row.outcome, write, recipients: row.recipients! };
}

interface RecordedRow {
  outcome: 'recorded' | 'repeated' | 'write_id_reused' | 'list_not_found';
  /** The rest is null unless the write was recorded, now or before. */
  cursor: string | null;
  at: Date | null;
  topics: Topic[] | null;
  /** Ordered by webhook id; without deliveryIds for a write recorded before the event feed (migration 026). */
  recipients: Recipient[] | null;
}
