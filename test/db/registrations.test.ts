import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import { beginRegistration, claimRegistrationPing, markRegistrationUnreachable } from '../../src/db/registrations';
import { newId } from '../../src/ids';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { useMigratedDatabase } from '../support/database';

const database = useMigratedDatabase();

async function newRegistration() {
  const account = await createAccount(database.sql, 'registrations test');
  const registrationId = newId('reg');
  await beginRegistration(database.sql, fixedSecretBox(), {
    registrationId,
    accountId: account.id,
    url: `https://receiver.test/${registrationId}`,
  });
  return registrationId;
}

describe('claimRegistrationPing', () => {
  it('claims the ping once, with the secret to sign it, sealed for its webhook: a second run finds the claim taken', async () => {
    const registrationId = await newRegistration();
    const first = await claimRegistrationPing(database.sql, registrationId);
    expect(first).toEqual({
      webhookId: expect.stringMatching(/^wh_/),
      secret: { keyId: 'fixed-test-key', sealed: expect.any(Buffer) },
      credentials: null,
      claimed: true,
    });
    expect(fixedSecretBox().open(first!.secret!, first!.webhookId)).toMatch(/^whsec_/);
    expect(await claimRegistrationPing(database.sql, registrationId)).toEqual({ ...first, claimed: false });
    expect(await claimRegistrationPing(database.sql, await newRegistration())).toMatchObject({ claimed: true });
  });

  it('claims nothing once the registration is decided, and answers null for an unknown one', async () => {
    const registrationId = await newRegistration();
    await markRegistrationUnreachable(database.sql, registrationId);
    expect(await claimRegistrationPing(database.sql, registrationId)).toEqual({
      webhookId: expect.any(String),
      secret: null,
      credentials: null,
      claimed: false,
    });
    expect(await claimRegistrationPing(database.sql, newId('reg'))).toBeNull();
  });
});
