import { newId } from '../ids';
import type { Db, Sql } from './sql';
import { insertToken } from './tokens';

/** The name of the token an account is made with. */
export const INITIAL_TOKEN_NAME = 'initial';

/** A new account and its first token (shown this once). */
export async function createAccount(sql: Sql, name: string): Promise<{ id: string; token: string }> {
  const id = newId('acc');
  const { token } = await sql.begin(async (tx) => {
    await tx`INSERT INTO accounts (id, name) VALUES (${id}, ${name})`;
    return insertToken(tx, id, { name: INITIAL_TOKEN_NAME });
  });
  return { id, token };
}

/** The ids among `accountIds` that name no account. */
export async function findUnknownAccountIds(sql: Db, accountIds: string[]): Promise<string[]> {
  if (accountIds.length === 0) return [];
  const known = await sql<{ id: string }[]>`SELECT id FROM accounts WHERE id = ANY(${accountIds})`;
  const knownIds = new Set(known.map((row) => row.id));
  return accountIds.filter((id) => !knownIds.has(id));
}
