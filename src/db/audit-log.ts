// The audit log: an entry for each change made through /v3, written by the function that makes
// the change, in its transaction (recordAudit), so that an entry exists if and only if its
// change does; the service's own changes (the automatic pause, a relay session closed past its
// grace) with no actor. Read by the API, newest first, always within one account.
import { newId } from '../ids';
import type { AuditAction, AuditActor, AuditDetails, AuditEntry, AuditTarget } from '../objects';
import type { Db, Tx } from './sql';
import { newestFirstPage, type PageQuery } from './pages';

/** A change to record: in whose account, what, about what, who made it (null: the service), and what it set. */
export interface AuditRecord {
  accountId: string;
  action: AuditAction;
  target: AuditTarget;
  actor: AuditActor | null;
  /** What the change made or set; never a secret or a token. */
  details?: AuditDetails;
}

/** Records a change, in the transaction that makes it. */
export async function recordAudit(tx: Tx, { accountId, action, target, actor, details = {} }: AuditRecord): Promise<void> {
  await tx`
    INSERT INTO audit_log (id, account_id, action, target_type, target_id, token_id, token_name, client_address, details)
    VALUES (${newId('aud')}, ${accountId}, ${action}, ${target.type}, ${target.id},
            ${actor?.tokenId ?? null}, ${actor?.tokenName ?? null}, ${actor?.clientAddress ?? null}, ${tx.json(details)})`;
}

interface AuditRow {
  id: string;
  at: Date;
  action: AuditAction;
  target_type: AuditTarget['type'];
  target_id: string;
  token_id: string | null;
  token_name: string | null;
  client_address: string | null;
  details: AuditDetails;
}

const toEntry = (row: AuditRow): AuditEntry => ({
  id: row.id,
  at: row.at.toISOString(),
  action: row.action,
  target: { type: row.target_type, id: row.target_id },
  actor: row.token_id === null ? null : { tokenId: row.token_id, tokenName: row.token_name!, clientAddress: row.client_address! },
  details: row.details,
});

/** The account's entries, newest first, of one action if given; `before` is the id of the last entry of the previous page. */
export async function listAuditLog(sql: Db, accountId: string, page: PageQuery & { action?: AuditAction }): Promise<AuditEntry[]> {
  const rows = await sql<AuditRow[]>`
    SELECT id, at, action, target_type, target_id, token_id, token_name, client_address, details
    ${newestFirstPage(sql, { table: 'audit_log', time: 'at', owner: 'account_id' }, accountId, page, { action: page.action })}`;
  return rows.map(toEntry);
}
