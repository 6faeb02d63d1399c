import { hashToken, newToken } from '../secrets';
import { newId } from '../ids';
import type { Db, Sql } from './sql';

export async function createAccount(sql: Sql, name: string): Promise<{ id: string; token: string }> {
  const id = newId('acc');
  const token = newToken();
  await sql.begin(async (tx) => {
    await tx`INSERT INTO accounts (id, name) VALUES (${id}, ${name})`;
    await tx`INSERT INTO account_tokens (token_hash, account_id) VALUES (${hashToken(token)}, ${id})`;
  });
  return { id, token };
}

/** The account a token belongs to, or null. Looked up by hash: the token itself is never stored. */
export async function findAccountIdByToken(sql: Db, token: string): Promise<string | null> {
  const [row] = await sql<{ accountId: string }[]>`
    SELECT account_id AS "accountId" FROM account_tokens WHERE token_hash = ${hashToken(token)}`;
  return row?.accountId ?? null;
}

/** The ids among `accountIds` that name no account. */
export async function findUnknownAccountIds(sql: Db, accountIds: string[]): Promise<string[]> {
  if (accountIds.length === 0) return [];
  const known = await sql<{ id: string }[]>`SELECT id FROM accounts WHERE id = ANY(${accountIds})`;
  const knownIds = new Set(known.map((row) => row.id));
  return accountIds.filter((id) => !knownIds.has(id));
}
