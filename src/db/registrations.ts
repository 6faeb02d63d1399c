// A registration in flight: the webhook's id and secret kept before its ping, then the
// webhook stored (or the registration marked unreachable) once the ping is answered.
import { newId } from '../ids';
import type { SealedSecret, SecretBox } from '../secret-keys';
import { newSigningSecret } from '../secrets';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../limits';
import type { RegistrationInput, RegistrationResult } from '../contract/payloads';
import { recordAudit } from './audit-log';
import { findListIdsNotOwned } from './lists';
import { sealedSecretOrNull, type SealedColumnsOrNull } from './sealed-secrets';
import type { Db, Sql } from './sql';
import { countWebhooks, findWebhook, findWebhookByUrl, toWebhook, webhookColumns, type WebhookRow } from './webhooks';

/**
 * Records a registration in flight with the id and secret the webhook will have: the
 * existing ones on re-registration (the sealed secret copied as it is), new ones otherwise.
 * Idempotent per registration id.
 */
export async function beginRegistration(
  sql: Db,
  secrets: SecretBox,
  input: Pick<RegistrationInput, 'registrationId' | 'accountId' | 'url'>,
): Promise<{ webhookId: string }> {
  const newWebhookId = newId('wh');
  const newSecret = secrets.seal(newSigningSecret(), newWebhookId);
  const [row] = await sql<{ webhookId: string }[]>`
    WITH existing AS (
      SELECT id, secret_key_id, secret_sealed FROM webhooks WHERE account_id = ${input.accountId} AND url = ${input.url}
    ), inserted AS (
      INSERT INTO registrations (id, account_id, webhook_id, secret_key_id, secret_sealed)
      SELECT ${input.registrationId}, ${input.accountId},
             COALESCE((SELECT id FROM existing), ${newWebhookId}),
             COALESCE((SELECT secret_key_id FROM existing), ${newSecret.keyId}),
             COALESCE((SELECT secret_sealed FROM existing), ${newSecret.sealed})
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
 * with (sealed for `webhookId`). `secret` is null once the registration is decided; `claimed`
 * is false when an earlier run of the ping took the claim.
 */
export async function claimRegistrationPing(
  sql: Db,
  registrationId: string,
): Promise<{ webhookId: string; secret: SealedSecret | null; claimed: boolean } | null> {
  const [row] = await sql<(SealedColumnsOrNull & { webhookId: string; claimed: boolean })[]>`
    WITH claim AS (
      UPDATE registrations SET ping_claimed_at = now()
      WHERE id = ${registrationId} AND secret_sealed IS NOT NULL AND ping_claimed_at IS NULL
      RETURNING id
    )
    SELECT webhook_id AS "webhookId", secret_key_id, secret_sealed, EXISTS (SELECT 1 FROM claim) AS claimed
    FROM registrations WHERE id = ${registrationId}`;
  return row ? { webhookId: row.webhookId, secret: sealedSecretOrNull(row), claimed: row.claimed } : null;
}

/** Ends a registration that will store nothing (its ping failed): forget its secret. */
export async function markRegistrationUnreachable(sql: Db, registrationId: string): Promise<void> {
  await sql`UPDATE registrations SET secret_key_id = NULL, secret_sealed = NULL, outcome = 'unreachable' WHERE id = ${registrationId}`;
}

/**
 * Stores the registered webhook: creates it, or updates the one with the same URL while
 * keeping its id, secret, status and failure count; the audit log records which. The account
 * row is locked so that concurrent registrations see each other: never two webhooks with one
 * URL, nor a sixth. The webhook limit and list ownership are checked again here, under that lock.
 */
export async function storeRegisteredWebhook(sql: Sql, input: RegistrationInput): Promise<RegistrationResult> {
  return sql.begin(async (tx) => {
    const [registration] = await tx<(SealedColumnsOrNull & { webhookId: string; outcome: string | null })[]>`
      SELECT webhook_id AS "webhookId", secret_key_id, secret_sealed, outcome FROM registrations
      WHERE id = ${input.registrationId} FOR UPDATE`;
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
    const [row] = existing
      ? await tx<WebhookRow[]>`
          UPDATE webhooks SET events = ${input.events}, list_ids = ${input.listIds}, updated_at = now()
          WHERE id = ${existing.id}
          RETURNING ${webhookColumns(tx)}`
      : await tx<WebhookRow[]>`
          INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events, list_ids)
          VALUES (${registration.webhookId}, ${input.accountId}, ${input.url}, ${registration.secret_key_id}, ${registration.secret_sealed},
                  ${input.events}, ${input.listIds})
          RETURNING ${webhookColumns(tx)}`;
    const outcome = existing ? 'updated' : 'created';
    await tx`
      UPDATE registrations SET secret_key_id = NULL, secret_sealed = NULL, outcome = ${outcome}, webhook_id = ${row.id}
      WHERE id = ${input.registrationId}`;
    const set = { events: input.events, listIds: input.listIds };
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
