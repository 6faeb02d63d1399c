// The tokens an API process keeps (src/api/token-cache.ts) against PostgreSQL: what known()
// answers without a statement, and the bound that keeps a flood of random tokens from growing
// its memory.
import { describe, expect, it } from 'vitest';
import { createTokenCache } from '../../src/api/token-cache';
import { createAccount } from '../../src/db/accounts';
import { deleteToken, findTokenByHash } from '../../src/db/tokens';
import { hashToken, newToken } from '../../src/secrets';
import { TEST_ACTOR, useMigratedDatabase } from '../support/database';
import { waitFor } from '../support/wait';

const database = useMigratedDatabase();

describe('known()', () => {
  it('answers what find() kept: the grant, null for an unknown token, undefined for one never looked up; nothing before it listens', async () => {
    const account = await createAccount(database.sql, 'token cache');
    const unknown = newToken();
    const cache = createTokenCache(database.sql);
    try {
      expect(await cache.find(account.token)).toMatchObject({ accountId: account.id });
      expect(cache.known(account.token)).toBeUndefined();

      await cache.start();
      expect(await cache.find(account.token)).toMatchObject({ accountId: account.id });
      expect(await cache.find(unknown)).toBeNull();
      expect(cache.known(account.token)).toMatchObject({ accountId: account.id, tokenName: 'initial' });
      expect(cache.known(unknown)).toBeNull();
      expect(cache.known(newToken())).toBeUndefined();

      // A revocation is heard: the token is known as revoked.
      const grant = await findTokenByHash(database.sql, hashToken(account.token));
      await deleteToken(database.sql, account.id, grant!.tokenId, TEST_ACTOR);
      await waitFor(async () => (cache.known(account.token) === null ? true : undefined), { what: 'the revocation heard' });
    } finally {
      await cache.stop();
    }
  });
});

describe('the bound on what is kept', () => {
  it('keeps at most maxEntries tokens, the oldest going first: random tokens cannot grow it', async () => {
    const cache = createTokenCache(database.sql, { maxEntries: 3 });
    await cache.start();
    try {
      const tokens = Array.from({ length: 5 }, () => newToken());
      for (const token of tokens) expect(await cache.find(token)).toBeNull();
      expect(tokens.map((token) => cache.known(token))).toEqual([undefined, undefined, null, null, null]);
    } finally {
      await cache.stop();
    }
  });
});
