import { createHash } from 'node:crypto';
import type { ChangeType } from '../delivery/topics';
import { topicsOfWrite } from '../delivery/topics';
import { TOPICS, type ListWrite, type Recipient, type Topic } from '../types';
import type { Db, Sql } from './sql';

export interface Change {
  type: ChangeType;
  itemId?: string;
  accountId?: string;
}

export interface WriteRequest {
  listId: string;
  writeId: string;
  /** As the upstream sent it: part of what makes a repeat identical. */
  at?: string;
  changes: Change[];
}

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
 * recipients. A repeat of the same body returns the first answer; the same writeId with
 * another body is refused. The list row is locked, so racing repeats and writes to one
 * list are serialised.
 */
export async function recordListWrite(sql: Sql, request: WriteRequest): Promise<RecordWriteResult> {
  const hash = bodyHash(request);
  return sql.begin(async (tx) => {
    const [list] = await tx<{ cursor: string; ownerAccountId: string }[]>`
      SELECT cursor, owner_account_id AS "ownerAccountId" FROM lists WHERE id = ${request.listId} FOR UPDATE`;
    if (!list) return { outcome: 'list_not_found' };

    const [previous] = await tx<{ bodyHash: Buffer; cursor: string; at: Date; topics: Topic[] }[]>`
      SELECT body_hash AS "bodyHash", cursor, at, topics FROM list_writes
      WHERE list_id = ${request.listId} AND write_id = ${request.writeId}`;
    if (previous) {
      if (!previous.bodyHash.equals(hash)) return { outcome: 'write_id_reused' };
      const write = { listId: request.listId, writeId: request.writeId, cursor: Number(previous.cursor), at: previous.at.toISOString(), topics: previous.topics };
      return { outcome: 'repeated', write, recipients: await findRecipients(tx, write) };
    }

    const membersBefore = await listMembers(tx, request.listId);
    for (const change of request.changes) {
      if (change.type === 'member.joined') {
        await tx`INSERT INTO list_members (list_id, account_id) VALUES (${request.listId}, ${change.accountId!}) ON CONFLICT DO NOTHING`;
      } else if (change.type === 'member.left') {
        await tx`DELETE FROM list_members WHERE list_id = ${request.listId} AND account_id = ${change.accountId!}`;
      }
    }
    const membersAfter = await listMembers(tx, request.listId);
    const accountIds = [...new Set([list.ownerAccountId, ...membersBefore, ...membersAfter])];

    const write: ListWrite = {
      listId: request.listId,
      writeId: request.writeId,
      cursor: Number(list.cursor) + 1,
      at: new Date(request.at ?? Date.now()).toISOString(),
      topics: topicsOfWrite(request.changes),
    };
    await tx`UPDATE lists SET cursor = ${write.cursor}, updated_at = now() WHERE id = ${request.listId}`;
    await tx`
      INSERT INTO list_writes (list_id, write_id, body_hash, cursor, at, topics, account_ids)
      VALUES (${write.listId}, ${write.writeId}, ${hash}, ${write.cursor}, ${write.at}, ${write.topics}, ${accountIds})`;
    return { outcome: 'recorded', write, recipients: await findRecipients(tx, write) };
  });
}

async function listMembers(sql: Db, listId: string): Promise<string[]> {
  const rows = await sql<{ accountId: string }[]>`SELECT account_id AS "accountId" FROM list_members WHERE list_id = ${listId}`;
  return rows.map((row) => row.accountId);
}

/**
 * The recipients of a recorded write: every active webhook of an account that may receive
 * it whose listIds allow the list, with the topics of the write it subscribes to.
 */
async function findRecipients(sql: Db, write: { listId: string; writeId: string }): Promise<Recipient[]> {
  const rows = await sql<{ id: string; events: Topic[]; topics: Topic[] }[]>`
    SELECT w.id, w.events, lw.topics
    FROM list_writes lw
    JOIN webhooks w ON w.account_id = ANY(lw.account_ids)
    WHERE lw.list_id = ${write.listId} AND lw.write_id = ${write.writeId}
      AND w.status = 'active'
      AND w.events && lw.topics
      AND (cardinality(w.list_ids) = 0 OR lw.list_id = ANY(w.list_ids))
    ORDER BY w.id`;
  return rows.map((row) => ({
    webhookId: row.id,
    topics: TOPICS.filter((topic) => row.topics.includes(topic) && row.events.includes(topic)),
  }));
}
