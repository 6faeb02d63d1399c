import { createHash } from 'node:crypto';
import { topicsOfWrite, type ChangeType } from '../topics';
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

    // Read once the lock is held (a statement of its own, so it sees what the holder before
    // committed): the members, and the write if it was recorded before.
    const [seen] = await tx<SeenRow[]>`
      SELECT ARRAY(SELECT account_id FROM list_members WHERE list_id = ${request.listId}) AS members,
             lw.body_hash AS "bodyHash", lw.cursor, lw.at, lw.topics, lw.account_ids AS "accountIds"
      FROM (VALUES (${request.listId}, ${request.writeId})) AS asked (list_id, write_id)
      LEFT JOIN list_writes lw USING (list_id, write_id)`;
    const { members, bodyHash, cursor, at, topics, accountIds: recordedFor } = seen;
    if (bodyHash !== null) {
      if (!bodyHash.equals(hash)) return { outcome: 'write_id_reused' };
      const write = { listId: request.listId, writeId: request.writeId, cursor: Number(cursor), at: at!.toISOString(), topics: topics! };
      return { outcome: 'repeated', write, recipients: await findRecipients(tx, write, recordedFor!) };
    }

    let membersAfter = members;
    const membershipChanges = request.changes.filter((change) => change.type === 'member.joined' || change.type === 'member.left');
    for (const change of membershipChanges) {
      if (change.type === 'member.joined') {
        await tx`INSERT INTO list_members (list_id, account_id) VALUES (${request.listId}, ${change.accountId!}) ON CONFLICT DO NOTHING`;
      } else {
        await tx`DELETE FROM list_members WHERE list_id = ${request.listId} AND account_id = ${change.accountId!}`;
      }
    }
    if (membershipChanges.length > 0) {
      const rows = await tx<{ accountId: string }[]>`SELECT account_id AS "accountId" FROM list_members WHERE list_id = ${request.listId}`;
      membersAfter = rows.map((row) => row.accountId);
    }
    const accountIds = [...new Set([list.ownerAccountId, ...members, ...membersAfter])];

    const write: ListWrite = {
      listId: request.listId,
      writeId: request.writeId,
      cursor: Number(list.cursor) + 1,
      at: new Date(request.at ?? Date.now()).toISOString(),
      topics: topicsOfWrite(request.changes),
    };
    await tx`
      WITH advanced AS (UPDATE lists SET cursor = ${write.cursor}, updated_at = now() WHERE id = ${request.listId})
      INSERT INTO list_writes (list_id, write_id, body_hash, cursor, at, topics, account_ids)
      VALUES (${write.listId}, ${write.writeId}, ${hash}, ${write.cursor}, ${write.at}, ${write.topics}, ${accountIds})`;
    return { outcome: 'recorded', write, recipients: await findRecipients(tx, write, accountIds) };
  });
}

interface SeenRow {
  members: string[];
  /** The rest is null unless the writeId was recorded before. */
  bodyHash: Buffer | null;
  cursor: string | null;
  at: Date | null;
  topics: Topic[] | null;
  accountIds: string[] | null;
}

/**
 * The recipients of a write: every active webhook of the accounts that may receive it
 * whose listIds allow the list, with the topics of the write it subscribes to.
 */
async function findRecipients(sql: Db, write: ListWrite, accountIds: string[]): Promise<Recipient[]> {
  const rows = await sql<{ id: string; events: Topic[] }[]>`
    SELECT id, events FROM webhooks
    WHERE account_id = ANY(${accountIds})
      AND status = 'active'
      AND events && ${write.topics}
      AND (cardinality(list_ids) = 0 OR ${write.listId} = ANY(list_ids))
    ORDER BY id`;
  return rows.map((row) => ({
    webhookId: row.id,
    topics: TOPICS.filter((topic) => write.topics.includes(topic) && row.events.includes(topic)),
  }));
}
