import { newId } from '../ids';
import type { Account, AuditActor } from '../objects';
import { recordAudit } from './audit-log';
import type { Db, Sql } from './sql';
import { insertToken } from './tokens';

/** The name of the token an account is made with. */
export const INITIAL_TOKEN_NAME = 'initial';

/** A new account and its first token (shown this once). */
export async function createAccount(
  sql: Sql,
  name: string,
  notificationEmail: string | null = null,
): Promise<{ id: string; token: string }> {
  const id = newId('acc');
  const { token } = await sql.begin(async (tx) => {
    await tx`INSERT INTO accounts (id, name, notification_email) VALUES (${id}, ${name}, ${notificationEmail})`;
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

interface AccountRow {
  id: string;
  name: string;
  notification_email: string | null;
  created_at: Date;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  notificationEmail: row.notification_email,
  createdAt: row.created_at.toISOString(),
});

/** The account, or null once it is gone. */
export async function findAccount(sql: Db, accountId: string): Promise<Account | null> {
  const [row] = await sql<AccountRow[]>`SELECT id, name, notification_email, created_at FROM accounts WHERE id = ${accountId}`;
  return row ? toAccount(row) : null;
}

/**
 * Sets where the account's notices are mailed (null: nowhere), recorded as account.updated; the
 * account after it, or null once it is gone.
 */
export function setNotificationEmail(
  sql: Sql,
  accountId: string,
  notificationEmail: string | null,
  actor: AuditActor,
): Promise<Account | null> {
  return sql.begin(async (tx) => {
    const [row] = await tx<AccountRow[]>`
      UPDATE accounts SET notification_email = ${notificationEmail} WHERE id = ${accountId}
      RETURNING id, name, notification_email, created_at`;
    if (!row) return null;
    await recordAudit(tx, {
      accountId,
      action: 'account.updated',
      target: { type: 'account', id: accountId },
      actor,
      details: { notificationEmail },
    });
    return toAccount(row);
  });
}
