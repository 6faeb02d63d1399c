// Signing secrets as PostgreSQL keeps them: sealed (src/secret-keys.ts), in `secret_key_id` and
// `secret_sealed` of `webhooks` and of `registrations` (a registration in flight), never in
// clear; and receivers' credentials beside them, in `credentials_key_id` and `credentials_sealed`
// (src/delivery/receiver-credentials.ts). Here: the sealing of the secrets a release before
// stored in clear (migration 022), the keys in use, and the re-sealing of both under the first
// key, a batch at a time.
import type { TransactionSql } from 'postgres';
import { credentialsSealedFor } from '../delivery/receiver-credentials';
import type { SealedSecret, SecretBox } from '../secret-keys';
import type { Db, Sql } from './sql';

/** A sealed secret's two columns, as a row holds them. */
export interface SealedColumns {
  secret_key_id: string;
  secret_sealed: Buffer;
}

export const sealedSecretOf = (row: SealedColumns): SealedSecret => ({ keyId: row.secret_key_id, sealed: row.secret_sealed });

/** The two columns of a registration, null once it is decided. */
export type SealedColumnsOrNull = { [K in keyof SealedColumns]: SealedColumns[K] | null };

export const sealedSecretOrNull = (row: SealedColumnsOrNull): SealedSecret | null =>
  row.secret_key_id === null || row.secret_sealed === null ? null : { keyId: row.secret_key_id, sealed: row.secret_sealed };

/** A sealed value's two columns, and what it is sealed for (the associated data) given its webhook's id. */
interface SealedPair {
  keyId: string;
  sealed: string;
  sealedFor: (webhookId: string) => string;
}

const SIGNING_SECRET: SealedPair = { keyId: 'secret_key_id', sealed: 'secret_sealed', sealedFor: (webhookId) => webhookId };
const CREDENTIALS: SealedPair = { keyId: 'credentials_key_id', sealed: 'credentials_sealed', sealedFor: credentialsSealedFor };

/** The tables that hold sealed signing secrets, and the column of each that holds the webhook id they are sealed for. */
const HOLDERS = [
  { table: 'webhooks', webhookId: 'id' },
  { table: 'registrations', webhookId: 'webhook_id' },
] as const;

/** Every sealed value: signing secrets, and receivers' credentials (migration 025), in both tables. */
const SEALED = HOLDERS.flatMap((holder) => [SIGNING_SECRET, CREDENTIALS].map((pair) => ({ ...holder, ...pair })));

/** A receiver's sealed credentials (migration 025) as a row holds them: both null for a webhook without any. */
export interface SealedCredentialsColumns {
  credentials_key_id: string | null;
  credentials_sealed: Buffer | null;
}

export const sealedCredentialsOf = (row: SealedCredentialsColumns): SealedSecret | null =>
  row.credentials_key_id === null || row.credentials_sealed === null
    ? null
    : { keyId: row.credentials_key_id, sealed: row.credentials_sealed };

/**
 * Migration 022's step that SQL cannot take: seals every secret stored in clear under the first
 * key and removes the clear column, in the migration's transaction. Changing the clear column's
 * type (to null) rewrites each table into a new file that holds each row once, without it; the
 * old file, with every earlier version of every row, is removed as the transaction commits
 * (the planner's samples of them go after it: migrate.ts). What PostgreSQL wrote before the
 * upgrade (its WAL, and backups) still holds them (docs/upgrades.md).
 */
export async function sealClearSecrets(tx: TransactionSql, secrets: SecretBox): Promise<void> {
  // Nothing may store a clear secret between the read and the rewrite (a process of the release before).
  await tx`LOCK TABLE webhooks, registrations IN ACCESS EXCLUSIVE MODE`;
  for (const { table, webhookId } of HOLDERS) {
    const clear = await tx<{ id: string; webhookId: string; secret: string }[]>`
      SELECT id, ${tx(webhookId)} AS "webhookId", secret FROM ${tx(table)} WHERE secret IS NOT NULL`;
    await tx`ALTER TABLE ${tx(table)} ALTER COLUMN secret DROP NOT NULL, ALTER COLUMN secret TYPE bytea USING NULL`;
    for (let first = 0; first < clear.length; first += 1000) {
      const sealed = clear.slice(first, first + 1000).map((row) => {
        const { keyId, sealed } = secrets.seal(row.secret, row.webhookId);
        return { id: row.id, key_id: keyId, sealed: sealed.toString('base64') };
      });
      await tx`
        UPDATE ${tx(table)} t SET secret_key_id = s.key_id, secret_sealed = decode(s.sealed, 'base64')
        FROM jsonb_to_recordset(${tx.json(sealed)}) AS s(id text, key_id text, sealed text)
        WHERE t.id = s.id`;
    }
    await tx`ALTER TABLE ${tx(table)} DROP COLUMN secret`;
  }
  await tx`ALTER TABLE webhooks ALTER COLUMN secret_key_id SET NOT NULL, ALTER COLUMN secret_sealed SET NOT NULL`;
}

/** The ids of the keys that stored secrets and credentials are sealed under. */
export async function keyIdsInUse(sql: Db): Promise<string[]> {
  const rows = await sql<{ keyId: string }[]>`
    SELECT secret_key_id AS "keyId" FROM webhooks
    UNION
    SELECT secret_key_id FROM registrations WHERE secret_key_id IS NOT NULL
    UNION
    SELECT credentials_key_id FROM webhooks WHERE credentials_key_id IS NOT NULL
    UNION
    SELECT credentials_key_id FROM registrations WHERE credentials_key_id IS NOT NULL
    ORDER BY 1`;
  return rows.map((row) => row.keyId);
}

/** How many stored secrets and credentials are sealed under another key than `keyId`. */
export async function countSealedUnderOtherKeys(sql: Db, keyId: string): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`
    SELECT (SELECT count(*) FROM webhooks WHERE secret_key_id <> ${keyId})
         + (SELECT count(*) FROM registrations WHERE secret_key_id <> ${keyId})
         + (SELECT count(*) FROM webhooks WHERE credentials_key_id <> ${keyId})
         + (SELECT count(*) FROM registrations WHERE credentials_key_id <> ${keyId}) AS count`;
  return Number(count);
}

/**
 * Re-seals up to `limit` secrets and credentials sealed under other keys than the box's first,
 * in one transaction: each is opened under its own key and sealed under the first. A row is
 * written only if it still holds what was read, so that a secret rotated meanwhile (sealed under
 * the first key already) is never overwritten with the one it replaced. Deliveries go on
 * meanwhile: each opens whichever key its row names. Returns how many were re-sealed and how
 * many remain under other keys.
 */
export async function resealSecrets(sql: Sql, secrets: SecretBox, limit: number): Promise<{ resealed: number; remaining: number }> {
  return sql.begin(async (tx) => {
    let resealed = 0;
    for (const { table, webhookId, keyId, sealed, sealedFor } of SEALED) {
      if (resealed >= limit) break;
      const rows = await tx<{ id: string; webhookId: string; keyId: string; sealed: Buffer }[]>`
        SELECT id, ${tx(webhookId)} AS "webhookId", ${tx(keyId)} AS "keyId", ${tx(sealed)} AS sealed FROM ${tx(table)}
        WHERE ${tx(keyId)} <> ${secrets.keyId} ORDER BY id LIMIT ${limit - resealed}`;
      if (rows.length === 0) continue;
      const changes = rows.map((row) => {
        const aad = sealedFor(row.webhookId);
        const resealedValue = secrets.seal(secrets.open({ keyId: row.keyId, sealed: row.sealed }, aad), aad);
        return {
          id: row.id,
          old_key_id: row.keyId,
          old_sealed: row.sealed.toString('base64'),
          key_id: resealedValue.keyId,
          sealed: resealedValue.sealed.toString('base64'),
        };
      });
      const written = await tx`
        UPDATE ${tx(table)} t SET ${tx(keyId)} = c.key_id, ${tx(sealed)} = decode(c.sealed, 'base64')
        FROM jsonb_to_recordset(${tx.json(changes)}) AS c(id text, old_key_id text, old_sealed text, key_id text, sealed text)
        WHERE t.id = c.id AND t.${tx(keyId)} = c.old_key_id AND t.${tx(sealed)} = decode(c.old_sealed, 'base64')`;
      resealed += written.count;
    }
    return { resealed, remaining: await countSealedUnderOtherKeys(tx, secrets.keyId) };
  });
}
