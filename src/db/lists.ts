import type { Db, Sql } from './sql';

export interface List {
  id: string;
  ownerAccountId: string;
  memberAccountIds: string[];
  cursor: number;
}

/**
 * Creates or replaces a list's owner and members. Replacing keeps the cursor: it counts
 * writes, and membership set here is not a write (nothing is delivered).
 */
export async function putList(
  sql: Sql,
  list: { id: string; ownerAccountId: string; memberAccountIds: string[] },
): Promise<{ list: List; created: boolean }> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ cursor: string; created: boolean }[]>`
      INSERT INTO lists (id, owner_account_id) VALUES (${list.id}, ${list.ownerAccountId})
      ON CONFLICT (id) DO UPDATE SET owner_account_id = EXCLUDED.owner_account_id, updated_at = now()
      RETURNING cursor, (xmax = 0) AS created`;
    await tx`DELETE FROM list_members WHERE list_id = ${list.id}`;
    if (list.memberAccountIds.length > 0) {
      await tx`INSERT INTO list_members ${tx(list.memberAccountIds.map((accountId) => ({ list_id: list.id, account_id: accountId })))}`;
    }
    return {
      list: { ...list, cursor: Number(row.cursor) },
      created: row.created,
    };
  });
}

export async function deleteList(sql: Db, listId: string): Promise<boolean> {
  const deleted = await sql`DELETE FROM lists WHERE id = ${listId}`;
  return deleted.count > 0;
}

/** The ids among `listIds` that are unknown or not owned by the account. */
/** Whether the account owns the list or is one of its members. */
export async function isListOfAccount(sql: Db, accountId: string, listId: string): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM lists WHERE id = ${listId} AND owner_account_id = ${accountId})
        OR EXISTS (SELECT 1 FROM list_members WHERE list_id = ${listId} AND account_id = ${accountId}) AS found`;
  return row.found;
}

export async function findListIdsNotOwned(sql: Db, accountId: string, listIds: string[]): Promise<string[]> {
  if (listIds.length === 0) return [];
  const owned = await sql<{ id: string }[]>`
    SELECT id FROM lists WHERE id = ANY(${listIds}) AND owner_account_id = ${accountId}`;
  const ownedIds = new Set(owned.map((row) => row.id));
  return listIds.filter((id) => !ownedIds.has(id));
}
