// A registration in flight: the webhook's id, secret and credentials kept before its ping, then
// the webhook stored (or the registration marked unreachable) once the ping is answered.
import { newId } from '../ids';
import type { SealedSecret, SecretBox } from '../secret-keys';
import { newSigningSecret } from '../secrets';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../limits';
import type { RegistrationInput, RegistrationResult } from '../contract/payloads';
import {
  applyChange,
  auditedCredentials,
  isChange,
  openCredentials,
  storedCredentials,
  type CredentialsChange,
  type StoredCredentials,
} from '../delivery/receiver-credentials';
import { recordAudit } from './audit-log';
import { findListIdsNotOwned } from './lists';
import {
  sealedCredentialsOf,
  sealedSecretOf,
  sealedSecretOrNull,
  type SealedColumns,
  type SealedColumnsOrNull,
  type SealedCredentialsColumns,
} from './sealed-secrets';
import type { Db, Sql } from './sql';
import {
  countWebhooks,
  credentialColumns,
  findWebhook,
  findWebhookByUrl,
  jsonOrNull,
  toWebhook,
  webhookColumns,
  type WebhookRow,
} from './webhooks';

/** A webhook as a registration of its URL reads it before its ping. */
type ExistingRow = SealedColumns & SealedCredentialsColumns & Pick<WebhookRow, 'id' | 'auth' | 'client_certificate'>;

/**
 * Records a registration in flight with the id, secret and credentials the webhook will have:
 * the existing ones on re-registration (sealed values copied as they are), new ones otherwise;
 * credentials the request sets (`change`) replace the existing webhook's, sealed for it.
 * Idempotent per registration id.
 */
export async function beginRegistration(
  sql: Db,
  secrets: SecretBox,
  input: Pick<RegistrationInput, 'registrationId' | 'accountId' | 'url'>,
  change: CredentialsChange = {},
): Promise<{ webhookId: string }> {
  const [existing] = await sql<ExistingRow[]>`
    SELECT id, secret_key_id, secret_sealed, auth, client_certificate, credentials_key_id, credentials_sealed
    FROM webhooks WHERE account_id = ${input.accountId} AND url = ${input.url}`;
  const webhookId = existing?.id ?? newId('wh');
  const secret = existing ? sealedSecretOf(existing) : secrets.seal(newSigningSecret(), webhookId);
  const kept = existing && sealedCredentialsOf(existing);
  const set = isChange(change);
  const credentials: StoredCredentials = set
    ? storedCredentials(secrets, applyChange(openCredentials(secrets, kept ?? null, webhookId), change), webhookId)
    : { auth: existing?.auth ?? null, clientCertificate: existing?.client_certificate ?? null, sealed: kept ?? null };
  const [row] = await sql<{ webhookId: string }[]>`
    WITH inserted AS (
      INSERT INTO registrations (id, account_id, webhook_id, secret_key_id, secret_sealed,
                                 credentials_set, auth, client_certificate, credentials_key_id, credentials_sealed)
      VALUES (${input.registrationId}, ${input.accountId}, ${webhookId}, ${secret.keyId}, ${secret.sealed},
              ${set}, ${jsonOrNull(sql, credentials.auth)}, ${jsonOrNull(sql, credentials.clientCertificate)},
              ${credentials.sealed?.keyId ?? null}, ${credentials.sealed?.sealed ?? null})
      ON CONFLICT (id) DO NOTHING
      RETURNING webhook_id
    )
    SELECT webhook_id AS "webhookId" FROM inserted
    UNION ALL
    SELECT webhook_id FROM registrations WHERE id = ${input.registrationId}`;
  return row;
}

/**
 * Claims the registration's one ping, in the statement that reads the secret it is signed
 * with (sealed for `webhookId`) and the credentials it presents. `secret` is null once the
 * registration is decided; `claimed` is false when an earlier run of the ping took the claim.
 */
export async function claimRegistrationPing(
  sql: Db,
  registrationId: string,
): Promise<{ webhookId: string; secret: SealedSecret | null; credentials: SealedSecret | null; claimed: boolean } | null> {
  const [row] = await sql<(SealedColumnsOrNull & SealedCredentialsColumns & { webhookId: string; claimed: boolean })[]>`
    WITH claim AS (
      UPDATE registrations SET ping_claimed_at = now()
      WHERE id = ${registrationId} AND secret_sealed IS NOT NULL AND ping_claimed_at IS NULL
      RETURNING id
    )
    SELECT webhook_id AS "webhookId", secret_key_id, secret_sealed, credentials_key_id, credentials_sealed,
           EXISTS (SELECT 1 FROM claim) AS claimed
    FROM registrations WHERE id = ${registrationId}`;
  return row
    ? { webhookId: row.webhookId, secret: sealedSecretOrNull(row), credentials: sealedCredentialsOf(row), claimed: row.claimed }
    : null;
}

/** What a decided registration no longer keeps: its secret and credentials. */
const forgotten = (sql: Db) => sql`secret_key_id = NULL, secret_sealed = NULL, auth = NULL, client_certificate = NULL,
  credentials_key_id = NULL, credentials_sealed = NULL`;

/** Ends a registration that will store nothing (its ping failed): forget its secret and credentials. */
export async function markRegistrationUnreachable(sql: Db, registrationId: string): Promise<void> {
  await sql`UPDATE registrations SET ${forgotten(sql)}, outcome = 'unreachable' WHERE id = ${registrationId}`;
}

/**
 * Stores the registered webhook: creates it, or updates the one with the same URL while
 * keeping its id, secret, status and failure count; the audit log records which. The account
 * row is locked so that concurrent registrations see each other: never two webhooks with one
 * URL, nor a sixth. The webhook limit and list ownership are checked again here, under that lock.
 */
export async function storeRegisteredWebhook(sql: Sql, input: RegistrationInput): Promise<RegistrationResult> {
  return sql.begin(async (tx) => {
    const [registration] = await tx<
      (SealedColumnsOrNull &
        SealedCredentialsColumns &
        Pick<WebhookRow, 'auth' | 'client_certificate'> & { webhookId: string; outcome: string | null; credentialsSet: boolean })[]
    >`
      SELECT webhook_id AS "webhookId", secret_key_id, secret_sealed, outcome, credentials_set AS "credentialsSet",
             auth, client_certificate, credentials_key_id, credentials_sealed
      FROM registrations WHERE id = ${input.registrationId} FOR UPDATE`;
    if (!registration) throw new Error(`registration ${input.registrationId} was never begun`);
    if (registration.outcome === 'created' || registration.outcome === 'updated') {
      // A retry of an attempt that committed: answer as that attempt did.
      const webhook = await findWebhook(tx, input.accountId, registration.webhookId);
      if (webhook) return { outcome: registration.outcome, webhook };
    }
    await tx`SELECT 1 FROM accounts WHERE id = ${input.accountId} FOR UPDATE`;

    const invalidListIds = await findListIdsNotOwned(tx, input.accountId, input.listIds);
    if (invalidListIds.length > 0) return { outcome: 'invalid_list_ids', invalidListIds };

    const existing = await findWebhookByUrl(tx, input.accountId, input.url);
    if (!existing && (await countWebhooks(tx, input.accountId)) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      return { outcome: 'limit_exceeded' };
    }
    const credentials: StoredCredentials = {
      auth: registration.auth,
      clientCertificate: registration.client_certificate,
      sealed: sealedCredentialsOf(registration),
    };
    // Credentials are sealed for the webhook the registration began with: one made meanwhile by
    // another registration of the URL keeps its own.
    const setsCredentials = registration.credentialsSet && (!existing || existing.id === registration.webhookId);
    const [row] = existing
      ? await tx<WebhookRow[]>`
          UPDATE webhooks SET events = ${input.events}, list_ids = ${input.listIds},
                              ${setsCredentials ? tx`${credentialColumns(tx, credentials)},` : tx``}
                              updated_at = now()
          WHERE id = ${existing.id}
          RETURNING ${webhookColumns(tx)}`
      : await tx<WebhookRow[]>`
          INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events, list_ids,
                                auth, client_certificate, credentials_key_id, credentials_sealed)
          VALUES (${registration.webhookId}, ${input.accountId}, ${input.url}, ${registration.secret_key_id}, ${registration.secret_sealed},
                  ${input.events}, ${input.listIds}, ${jsonOrNull(tx, credentials.auth)}, ${jsonOrNull(tx, credentials.clientCertificate)},
                  ${registration.credentials_key_id}, ${registration.credentials_sealed})
          RETURNING ${webhookColumns(tx)}`;
    const outcome = existing ? 'updated' : 'created';
    await tx`
      UPDATE registrations SET ${forgotten(tx)}, outcome = ${outcome}, webhook_id = ${row.id}
      WHERE id = ${input.registrationId}`;
    const set = {
      events: input.events,
      listIds: input.listIds,
      ...(registration.credentialsSet && auditedCredentials(credentials, { auth: true, clientCertificate: true })),
    };
    await recordAudit(tx, {
      accountId: input.accountId,
      action: `webhook.${outcome}`,
      target: { type: 'webhook', id: row.id },
      actor: input.actor ?? null,
      details: existing ? set : { url: input.url, ...set },
    });
    return { outcome, webhook: toWebhook(row) };
  });
}
