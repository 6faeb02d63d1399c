import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const internal = () => ({ token: stack.internalApiToken });

describe('internal API', () => {
  it('creates an account and shows its token once, storing only a hash of it', async () => {
    const response = await stack.request('POST', '/internal/v3/accounts', { ...internal(), body: { name: 'Shop' } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^acc_[0-9a-f]{24}$/),
      token: expect.stringMatching(/^tok_[A-Za-z0-9_-]{43}$/),
    });

    const stored = await stack.service.sql<{ token_hash: Buffer }[]>`
      SELECT token_hash FROM account_tokens WHERE account_id = ${response.body.id}`;
    expect(stored).toHaveLength(1);
    expect(stored[0].token_hash.equals(createHash('sha256').update(response.body.token).digest())).toBe(true);
    const dump = JSON.stringify(await stack.service.sql`SELECT * FROM accounts a JOIN account_tokens t ON t.account_id = a.id`);
    expect(dump).not.toContain(response.body.token);
  });

  it('accepts only the internal token, and the internal token is no account token', async () => {
    const account = await stack.createAccount();
    const withAccountToken = await stack.request('POST', '/internal/v3/accounts', { token: account.token, body: { name: 'x' } });
    expect(withAccountToken.status).toBe(401);
    expect(withAccountToken.body.error.code).toBe('UNAUTHORIZED');
    const withoutToken = await stack.request('PUT', '/internal/v3/lists/l1', { body: { ownerAccountId: account.id } });
    expect(withoutToken.status).toBe(401);
    const internalOnPublic = await stack.request('POST', '/v3/webhooks', { ...internal(), body: { url: 'https://example.com/' } });
    expect(internalOnPublic.status).toBe(401);
  });

  it('validates account bodies', async () => {
    const response = await stack.request('POST', '/internal/v3/accounts', { ...internal(), body: { name: '' } });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual({
      code: 'VALIDATION_FAILED',
      message: expect.any(String),
      details: [{ path: '/name', message: expect.any(String) }],
    });
  });

  it('creates a list (201), replaces it keeping the cursor (200), and deletes it (204, then 404)', async () => {
    const [owner, member, other] = [await stack.createAccount(), await stack.createAccount(), await stack.createAccount()];
    const created = await stack.putList('groceries-1', owner.id, [member.id]);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: 'groceries-1', ownerAccountId: owner.id, memberAccountIds: [member.id], cursor: 0 });

    await stack.service.sql`UPDATE lists SET cursor = 7 WHERE id = 'groceries-1'`;
    const replaced = await stack.putList('groceries-1', owner.id, [other.id]);
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ id: 'groceries-1', ownerAccountId: owner.id, memberAccountIds: [other.id], cursor: 7 });
    const members = await stack.service.sql`SELECT account_id FROM list_members WHERE list_id = 'groceries-1'`;
    expect(members.map((row) => row.account_id)).toEqual([other.id]);

    expect((await stack.request('DELETE', '/internal/v3/lists/groceries-1', internal())).status).toBe(204);
    const again = await stack.request('DELETE', '/internal/v3/lists/groceries-1', internal());
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('LIST_NOT_FOUND');
  });

  it('refuses lists naming unknown accounts, and list ids outside the allowed characters', async () => {
    const owner = await stack.createAccount();
    const unknownMember = await stack.putList('groceries-2', owner.id, ['acc_nobody']);
    expect(unknownMember.status).toBe(400);
    expect(unknownMember.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: '/memberAccountIds/0' }] });
    const unknownOwner = await stack.putList('groceries-2', 'acc_nobody');
    expect(unknownOwner.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: '/ownerAccountId' }] });
    const badId = await stack.putList('bad%20id', owner.id);
    expect(badId.status).toBe(400);
    expect(badId.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: '/params/listId' }] });
  });

  it('accepts internal bodies up to 1 MiB and refuses larger ones with 413', async () => {
    const owner = await stack.createAccount();
    const manyMembers = await stack.putList(
      'groceries-3',
      owner.id,
      Array.from({ length: 1001 }, (_, i) => `acc_${i}`),
    );
    expect(manyMembers.status).toBe(400); // over the 1000-member bound, but read: it is under 1 MiB
    const huge = await stack.request('PUT', '/internal/v3/lists/groceries-3', {
      ...internal(),
      body: { ownerAccountId: owner.id, padding: 'x'.repeat(1024 * 1024) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
