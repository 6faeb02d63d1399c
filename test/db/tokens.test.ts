// The account tokens' table against PostgreSQL alone: migration 013 on a database of the
// release before it (the token each account has keeps working, named `initial`), migration 021
// likewise (every token made before it holds all six scopes, which no statement changes), the limit
// of 10 under concurrent creations, lastUsedAt's minute, the revocation notification, and
// the delivery counts the log statement adds to the fair-use meter.
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import { recordDeliveries, type DeliveryRecord } from '../../src/db/deliveries';
import { migrate } from '../../src/db/migrate';
import { createToken, deleteToken, findTokenByHash, listTokens, markTokensUsed, openRevocationChannel } from '../../src/db/tokens';
import { findUsage } from '../../src/db/usage';
import { idPattern, newId } from '../../src/ids';
import { MAX_TOKENS_PER_ACCOUNT } from '../../src/limits';
import { SCOPES } from '../../src/scopes';
import { hashToken, newToken } from '../../src/secrets';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { TEST_ACTOR, useMigratedDatabase, withSchemaBefore } from '../support/database';

const database = useMigratedDatabase({ connections: 6 });

describe('migration 013', () => {
  it("keeps each account's token working, named initial, its prefix filled at its first use", async () => {
    await withSchemaBefore('013', async (sql) => {
      const token = newToken();
      await sql`INSERT INTO accounts (id, name) VALUES ('acc_before', 'before 013')`;
      await sql`INSERT INTO account_tokens (token_hash, account_id) VALUES (${hashToken(token)}, 'acc_before')`;

      expect(await migrate(sql, { secrets: fixedSecretBox() })).toContain('013_api_tokens_and_usage');

      const grant = await findTokenByHash(sql, hashToken(token));
      expect(grant).toMatchObject({ accountId: 'acc_before', expiresAt: null, lastUsedAt: null });
      const [listed] = await listTokens(sql, 'acc_before');
      expect(listed).toEqual({
        id: grant!.tokenId,
        name: 'initial',
        prefix: null,
        createdAt: expect.any(String),
        lastUsedAt: null,
        expiresAt: null,
        scopes: [...SCOPES],
      });
      expect(listed.id).toMatch(new RegExp(idPattern('tkn')));

      const usedAt = new Date();
      await markTokensUsed(sql, [{ tokenId: listed.id, at: usedAt, prefix: token.slice(0, 8) }]);
      expect(await listTokens(sql, 'acc_before')).toEqual([{ ...listed, prefix: token.slice(0, 8), lastUsedAt: usedAt.toISOString() }]);
    });
  });
});

describe('migration 021', () => {
  it('gives every token made before it all six scopes, and a token of an earlier release made after it too', async () => {
    await withSchemaBefore('021', async (sql) => {
      // An account and its token as the release before makes them.
      const [id, token] = ['acc_before', newToken()];
      await sql`INSERT INTO accounts (id, name) VALUES (${id}, 'before 021')`;
      await sql`INSERT INTO account_tokens (token_hash, account_id, id, name) VALUES (${hashToken(token)}, ${id}, 'tkn_initial', 'initial')`;
      expect(await migrate(sql, { secrets: fixedSecretBox() })).toContain('021_token_scopes');
      expect((await findTokenByHash(sql, hashToken(token)))?.scopes).toEqual([...SCOPES]);
      // What an API process of the release before inserts during a rolling upgrade: no scopes named.
      await sql`INSERT INTO account_tokens (token_hash, account_id, id, name) VALUES (${hashToken(newToken())}, ${id}, 'tkn_old', 'old release')`;
      expect((await listTokens(sql, id)).map((token) => token.scopes)).toEqual([[...SCOPES], [...SCOPES]]);
    });
  });

  it("refuses a row's scopes that are none, or not of the six, and any change of a token's scopes", async () => {
    const { id } = await createAccount(database.sql, 'scopes fixed');
    const made = (await createToken(database.sql, id, { name: 'reader', scopes: ['deliveries:read'] }, TEST_ACTOR))!;
    expect(made.scopes).toEqual(['deliveries:read']);
    await expect(createToken(database.sql, id, { name: 'none', scopes: [] }, TEST_ACTOR)).rejects.toThrow(/account_tokens_scopes_check/);
    await expect(
      database.sql`INSERT INTO account_tokens (token_hash, account_id, id, name, scopes)
        VALUES (${hashToken(newToken())}, ${id}, 'tkn_bad', 'bad', '{webhooks:delete}')`,
    ).rejects.toThrow(/account_tokens_scopes_check/);
    await expect(database.sql`UPDATE account_tokens SET scopes = '{webhooks:read}' WHERE id = ${made.id}`).rejects.toThrow(
      /scopes are fixed/,
    );
    expect((await findTokenByHash(database.sql, hashToken(made.token)))?.scopes).toEqual(['deliveries:read']);
  });
});

describe('createToken', () => {
  it(`makes at most ${MAX_TOKENS_PER_ACCOUNT} tokens per account, also when asked for many at once`, async () => {
    const { id } = await createAccount(database.sql, 'token limit');
    const attempts = await Promise.all(
      Array.from({ length: MAX_TOKENS_PER_ACCOUNT + 5 }, (_, i) =>
        createToken(database.sql, id, { name: `t${i}`, expiresAt: null }, TEST_ACTOR),
      ),
    );
    expect(attempts.filter((created) => created !== null)).toHaveLength(MAX_TOKENS_PER_ACCOUNT - 1);
    expect(await listTokens(database.sql, id)).toHaveLength(MAX_TOKENS_PER_ACCOUNT);
  });
});

describe('markTokensUsed', () => {
  it('moves lastUsedAt at most once a minute, whichever process reports the use', async () => {
    const { id } = await createAccount(database.sql, 'last used');
    const [token] = await listTokens(database.sql, id);
    const first = new Date('2030-01-01T10:00:00.000Z');
    await markTokensUsed(database.sql, [{ tokenId: token.id, at: first, prefix: 'ignored' }]);
    await markTokensUsed(database.sql, [{ tokenId: token.id, at: new Date(first.getTime() + 59_000), prefix: 'ignored' }]);
    expect((await listTokens(database.sql, id))[0]).toMatchObject({ lastUsedAt: first.toISOString(), prefix: token.prefix });
    const minuteLater = new Date(first.getTime() + 60_000);
    await markTokensUsed(database.sql, [{ tokenId: token.id, at: minuteLater, prefix: 'ignored' }]);
    expect((await listTokens(database.sql, id))[0].lastUsedAt).toBe(minuteLater.toISOString());
  });
});

describe('openRevocationChannel', () => {
  it("hears every deleted token's hash, revoked or with its account, before it answers a statement sent after the deletion", async () => {
    const heard: string[] = [];
    let listening = false;
    const channel = openRevocationChannel(database.sql, {
      onRevoked: (hex) => heard.push(hex),
      onListening: () => (listening = true),
      onLost: () => (listening = false),
    });
    try {
      await channel.listen();
      expect(listening).toBe(true);
      const { id } = await createAccount(database.sql, 'revocations');
      const [initial] = await listTokens(database.sql, id);
      const [{ initialHash }] = await database.sql<{ initialHash: Buffer }[]>`
        SELECT token_hash AS "initialHash" FROM account_tokens WHERE id = ${initial.id}`;
      const created = (await createToken(database.sql, id, { name: 'second', expiresAt: null }, TEST_ACTOR))!;

      // Deleted by another connection; then, on the listening one, any statement: no waiting.
      const revoked = await deleteToken(database.sql, id, created.id, TEST_ACTOR);
      expect(revoked).toEqual(hashToken(created.token));
      await channel.connection`SELECT 1`;
      expect(heard).toEqual([revoked!.toString('hex')]);

      await database.sql`DELETE FROM accounts WHERE id = ${id}`;
      await channel.connection`SELECT 1`;
      expect(heard).toEqual([revoked!.toString('hex'), initialHash.toString('hex')]);
      expect(await deleteToken(database.sql, id, created.id, TEST_ACTOR)).toBeNull();
    } finally {
      await channel.stop();
    }
  });
});

describe('recordDeliveries', () => {
  it("counts each sent attempt once on its account's meter for today, delivered or failed; a skipped one or a repeated record not", async () => {
    const { id: accountId } = await createAccount(database.sql, 'metered');
    const webhookIds = [newId('wh'), newId('wh')];
    for (const webhookId of webhookIds) {
      const secret = fixedSecretBox().seal('whsec_x', webhookId);
      await database.sql`
        INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events)
        VALUES (${webhookId}, ${accountId}, ${`https://r.test/${webhookId}`}, ${secret.keyId}, ${secret.sealed}, '{list.changed}')`;
    }
    const attempt = (webhookId: string, result: DeliveryRecord['result']): DeliveryRecord => ({
      id: newId('dlv'),
      webhookId,
      kind: 'event',
      event: 'list.changed',
      listId: 'metered-list',
      cursor: 1,
      at: new Date().toISOString(),
      result,
      request: null,
      response: null,
    });
    const delivered = { delivered: true, statusCode: 200, durationMs: 3, error: null };
    const failed = { delivered: false, statusCode: 500, durationMs: 3, error: 'non_2xx' as const };
    const attempts = [attempt(webhookIds[0], delivered), attempt(webhookIds[0], failed), attempt(webhookIds[1], delivered)];
    await recordDeliveries(database.sql, [...attempts, attempt(webhookIds[1], 'skipped')]);
    await recordDeliveries(database.sql, [attempts[0]]);
    const today = (await findUsage(database.sql, accountId, 30)).at(-1)!;
    expect(today).toEqual({ date: new Date().toISOString().slice(0, 10), apiRequests: 0, deliveries: 3 });
  });
});
