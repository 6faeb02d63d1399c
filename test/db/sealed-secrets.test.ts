// Signing secrets as PostgreSQL keeps them (src/db/sealed-secrets.ts), against PostgreSQL alone,
// each test on a database of its own (it changes the key that every secret is sealed under): the
// keys in use, and the re-sealing under a new first key, batch by batch, in both tables that hold
// secrets, never overwriting a secret rotated while its batch runs.
import { describe, expect, it } from 'vitest';
import { parseSecretKeys } from '../../src/config';
import { createAccount } from '../../src/db/accounts';
import { beginRegistration, claimRegistrationPing } from '../../src/db/registrations';
import { countSealedUnderOtherKeys, keyIdsInUse, resealSecrets } from '../../src/db/sealed-secrets';
import type { Sql } from '../../src/db/sql';
import { findDeliveryTarget } from '../../src/db/deliveries';
import { findSealedSecret, updateWebhookSettings } from '../../src/db/webhooks';
import { openCredentials } from '../../src/delivery/receiver-credentials';
import { newId } from '../../src/ids';
import { createSecretBox } from '../../src/secret-keys';
import { FIXED_SECRET_KEYS, fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { insertWebhook } from '../../scripts/lib/webhook-rows';
import { withMigratedDatabase } from '../support/database';
import { waitFor } from '../support/wait';

const actor = { tokenId: 'tkn_test', tokenName: 'test', clientAddress: '127.0.0.1' };

/** The fixed key's id, and a new key put in front of it. */
const FIXED = 'fixed-test-key';
const rotated = createSecretBox(parseSecretKeys(`new-first:${Buffer.alloc(32, 3).toString('base64')},${FIXED_SECRET_KEYS}`));

/** The webhook's stored secret, opened with `box`. */
async function opened(sql: Sql, webhookId: string, box = fixedSecretBox()): Promise<string> {
  return box.open((await findSealedSecret(sql, webhookId))!, webhookId);
}

describe('resealSecrets', () => {
  it('re-seals batch by batch under the first key, in webhooks and registrations in flight, each opening to the same secret', async () => {
    await withMigratedDatabase(async (sql) => {
      const account = await createAccount(sql, 'reseal');
      const webhookIds = [];
      for (let i = 0; i < 4; i++) webhookIds.push(await insertWebhook(sql, account.id));
      const registrationId = newId('reg');
      const { webhookId: pending } = await beginRegistration(sql, fixedSecretBox(), {
        registrationId,
        accountId: account.id,
        url: `https://receiver.test/${registrationId}`,
      });
      const before = new Map(await Promise.all(webhookIds.map(async (id) => [id, await opened(sql, id)] as const)));
      const pendingSecret = fixedSecretBox().open((await claimRegistrationPing(sql, registrationId))!.secret!, pending);
      expect(await keyIdsInUse(sql)).toEqual([FIXED]);
      expect(await countSealedUnderOtherKeys(sql, 'new-first')).toBe(5);

      // Batches of 2: the four webhooks, then the registration.
      const batches = [];
      for (let done = { remaining: 5 }; done.remaining > 0;) {
        done = await resealSecrets(sql, rotated, 2);
        batches.push(done);
      }
      expect(batches).toEqual([
        { resealed: 2, remaining: 3 },
        { resealed: 2, remaining: 1 },
        { resealed: 1, remaining: 0 },
      ]);
      expect(await keyIdsInUse(sql)).toEqual(['new-first']);
      for (const [webhookId, secret] of before) {
        expect((await findSealedSecret(sql, webhookId))!.keyId).toBe('new-first');
        expect(await opened(sql, webhookId, rotated)).toBe(secret);
        await expect(opened(sql, webhookId)).rejects.toThrow(/key "new-first"/);
      }
      const claim = (await claimRegistrationPing(sql, registrationId))!;
      expect(claim.secret!.keyId).toBe('new-first');
      expect(rotated.open(claim.secret!, pending)).toBe(pendingSecret);
      // Nothing left to do: a batch more changes nothing.
      expect(await resealSecrets(sql, rotated, 2)).toEqual({ resealed: 0, remaining: 0 });
    });
  });

  it("re-seals receivers' credentials too, in webhooks and registrations in flight, each opening to the same credentials", async () => {
    await withMigratedDatabase(async (sql) => {
      const account = await createAccount(sql, 'reseal credentials');
      const [plain, withCredentials] = [await insertWebhook(sql, account.id), await insertWebhook(sql, account.id)];
      const credentials = { auth: { type: 'headers' as const, headers: { 'X-Api-Key': 'reseal-me' } }, clientCertificate: null };
      await updateWebhookSettings(sql, fixedSecretBox(), withCredentials, { credentials }, actor);
      const url = (await sql<{ url: string }[]>`SELECT url FROM webhooks WHERE id = ${withCredentials}`)[0].url;
      const registrationId = newId('reg');
      await beginRegistration(sql, fixedSecretBox(), { registrationId, accountId: account.id, url }, { auth: null });
      const stored = async () => (await findDeliveryTarget(sql, withCredentials))!.credentials;
      // Three signing secrets and the webhook's credentials: the registration, which removes them, holds none.
      expect(await countSealedUnderOtherKeys(sql, 'new-first')).toBe(4);
      expect(await resealSecrets(sql, rotated, 500)).toEqual({ resealed: 4, remaining: 0 });
      expect(await keyIdsInUse(sql)).toEqual(['new-first']);
      expect((await stored())!.keyId).toBe('new-first');
      expect(openCredentials(rotated, await stored(), withCredentials)).toEqual(credentials);
      expect((await findDeliveryTarget(sql, plain))!.credentials).toBeNull();
      expect((await claimRegistrationPing(sql, registrationId))!.credentials).toBeNull();
    });
  });

  it('never overwrites a secret rotated while its batch runs: the batch skips it, and the rotation stands', async () => {
    await withMigratedDatabase(async (sql) => {
      const account = await createAccount(sql, 'reseal during a rotation');
      const [quiet, rotating] = [await insertWebhook(sql, account.id), await insertWebhook(sql, account.id)];
      const quietSecret = await opened(sql, quiet);

      // The owner's rotation holds its row, uncommitted, while the batch reads the row as it was before.
      const rotation = await sql.reserve();
      try {
        await rotation`BEGIN`;
        // The UPDATE of replaceWebhookSecret, whose own transaction would commit at once.
        const sealed = rotated.seal('whsec_rotated-by-its-owner-while-resealing', rotating);
        await rotation`UPDATE webhooks SET secret_key_id = ${sealed.keyId}, secret_sealed = ${sealed.sealed} WHERE id = ${rotating}`;
        const batch = resealSecrets(sql, rotated, 500);
        await waitFor(
          async () => {
            const [row] = await sql<{ waiting: number }[]>`
              SELECT count(*)::int AS waiting FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%old_sealed%'`;
            return row.waiting > 0 ? true : undefined;
          },
          { what: "the batch to wait for the rotation's row" },
        );
        await rotation`COMMIT`;
        // Only the quiet webhook was re-sealed by the batch; the rotated one was sealed under the new key by its owner.
        expect(await batch).toEqual({ resealed: 1, remaining: 0 });
      } finally {
        rotation.release();
      }
      expect(await opened(sql, rotating, rotated)).toBe('whsec_rotated-by-its-owner-while-resealing');
      expect(await opened(sql, quiet, rotated)).toBe(quietSecret);
    });
  });
});
