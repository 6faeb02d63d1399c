// API tokens over HTTP (/v3/account/tokens): the initial token listed, a new one shown
// once, revocation refused at once (also for a token this process has cached), expiry,
// lastUsedAt, and the limit of 10. Their scopes: test/api/scopes.test.ts.
import { describe, expect, it } from 'vitest';
import { idPattern } from '../../src/ids';
import { SCOPES } from '../../src/scopes';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();

const TOKEN_FIELDS = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'scopes'];

describe('GET /v3/account/tokens', () => {
  it('lists the token made with the account as initial, with its prefix and when it was last used, never the token', async () => {
    const account = await suite.stack.createAccount();
    const before = Date.now();
    const listed = await suite.stack.request('GET', '/v3/account/tokens', { token: account.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    const [initial] = listed.body.data;
    expect(Object.keys(initial).sort()).toEqual(TOKEN_FIELDS);
    expect(initial).toMatchObject({ name: 'initial', prefix: account.token.slice(0, 8), expiresAt: null, scopes: [...SCOPES] });
    expect(initial.id).toMatch(new RegExp(idPattern('tkn')));
    // The listing request itself used the token.
    expect(Date.parse(initial.lastUsedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(JSON.stringify(listed.body)).not.toContain(account.token);
  });

  it('moves lastUsedAt at most once a minute', async () => {
    const account = await suite.stack.createAccount();
    const first = (await suite.stack.request('GET', '/v3/account/tokens', { token: account.token })).body.data[0].lastUsedAt;
    await suite.stack.request('GET', '/v3/webhooks', { token: account.token });
    const second = (await suite.stack.request('GET', '/v3/account/tokens', { token: account.token })).body.data[0].lastUsedAt;
    expect(first).not.toBeNull();
    expect(second).toBe(first);
  });
});

describe('POST /v3/account/tokens', () => {
  it('answers 201 with the token, shown this once, which the API then accepts; the list shows it without the token', async () => {
    const account = await suite.stack.createAccount();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await suite.stack.request('POST', '/v3/account/tokens', { token: account.token, body: { name: 'CI', expiresAt } });
    expect(created.status).toBe(201);
    // Without scopes asked for, those of the token that makes it: all six.
    expect(created.body).toMatchObject({
      name: 'CI',
      expiresAt,
      lastUsedAt: null,
      prefix: created.body.token.slice(0, 8),
      scopes: [...SCOPES],
    });
    expect(created.body.token).toMatch(/^tok_[A-Za-z0-9_-]{43}$/);
    expect(created.body.token).not.toBe(account.token);

    expect((await suite.stack.request('GET', '/v3/webhooks', { token: created.body.token })).status).toBe(200);
    const listed = await suite.stack.request('GET', '/v3/account/tokens', { token: created.body.token });
    expect(listed.body.data.map((token: { name: string }) => token.name)).toEqual(['initial', 'CI']);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
  });

  it('answers 400 VALIDATION_FAILED for a missing or over-long name, an expiry in the past or not a time', async () => {
    const { token } = await suite.stack.createAccount();
    for (const [body, path] of [
      [{}, '/name'],
      [{ name: '' }, '/name'],
      [{ name: 'n'.repeat(101) }, '/name'],
      [{ name: 'past', expiresAt: new Date(Date.now() - 1000).toISOString() }, '/expiresAt'],
      [{ name: 'not a date', expiresAt: '2030-13-45T99:99:99Z' }, '/expiresAt'],
      [{ name: 'not a time', expiresAt: 'tomorrow' }, '/expiresAt'],
    ] as const) {
      const refused = await suite.stack.request('POST', '/v3/account/tokens', { token, body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path }] });
    }
    expect((await suite.stack.request('GET', '/v3/account/tokens', { token })).body.data).toHaveLength(1);
  });

  it('answers 409 TOKEN_LIMIT_EXCEEDED for an 11th token, and makes one again once a token is revoked', async () => {
    const { token } = await suite.stack.createAccount();
    const made: string[] = [];
    for (let i = 2; i <= 10; i++) {
      const created = await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: `token ${i}` } });
      expect(created.status).toBe(201);
      made.push(created.body.id);
    }
    const eleventh = await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: 'eleventh' } });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body.error.code).toBe('TOKEN_LIMIT_EXCEEDED');
    expect((await suite.stack.request('DELETE', `/v3/account/tokens/${made[0]}`, { token })).status).toBe(204);
    expect((await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: 'tenth again' } })).status).toBe(201);
  });

  it('makes a token that is refused from its expiresAt on', async () => {
    const { token } = await suite.stack.createAccount();
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const shortLived = (await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: 'short', expiresAt } })).body.token;
    expect((await suite.stack.request('GET', '/v3/webhooks', { token: shortLived })).status).toBe(200);
    const refused = await waitFor(
      async () => {
        const response = await suite.stack.request('GET', '/v3/webhooks', { token: shortLived });
        return response.status === 200 ? undefined : response;
      },
      { what: 'the token to expire' },
    );
    expect(refused.status).toBe(401);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    expect((await suite.stack.request('GET', '/v3/webhooks', { token })).status).toBe(200);
  });
});

describe('DELETE /v3/account/tokens/{tokenId}', () => {
  it('revokes a token: refused at once, though this process had it cached; the other tokens keep working', async () => {
    const { token } = await suite.stack.createAccount();
    const second = (await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: 'second' } })).body;
    // Used, so that this process keeps it.
    expect((await suite.stack.request('GET', '/v3/webhooks', { token: second.token })).status).toBe(200);
    expect((await suite.stack.request('GET', '/v3/webhooks', { token: second.token })).status).toBe(200);

    const revoked = await suite.stack.request('DELETE', `/v3/account/tokens/${second.id}`, { token });
    expect(revoked.status).toBe(204);
    expect(revoked.body).toBeUndefined();
    const refused = await suite.stack.request('GET', '/v3/webhooks', { token: second.token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    expect((await suite.stack.request('GET', '/v3/account/tokens', { token })).body.data.map((t: { id: string }) => t.id)).not.toContain(
      second.id,
    );
  });

  it('revokes the token the request is made with', async () => {
    const { token } = await suite.stack.createAccount();
    const other = (await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: 'other' } })).body;
    const [initial] = (await suite.stack.request('GET', '/v3/account/tokens', { token })).body.data;
    expect((await suite.stack.request('DELETE', `/v3/account/tokens/${initial.id}`, { token })).status).toBe(204);
    expect((await suite.stack.request('GET', '/v3/webhooks', { token })).status).toBe(401);
    expect((await suite.stack.request('GET', '/v3/webhooks', { token: other.token })).status).toBe(200);
  });

  it("answers 404 TOKEN_NOT_FOUND for an unknown id, one already revoked, another account's, or no id at all", async () => {
    const [mine, theirs] = [await suite.stack.createAccount(), await suite.stack.createAccount()];
    const [theirToken] = (await suite.stack.request('GET', '/v3/account/tokens', { token: theirs.token })).body.data;
    const gone = (await suite.stack.request('POST', '/v3/account/tokens', { token: mine.token, body: { name: 'gone' } })).body;
    expect((await suite.stack.request('DELETE', `/v3/account/tokens/${gone.id}`, { token: mine.token })).status).toBe(204);
    for (const id of [`tkn_${'0'.repeat(24)}`, gone.id, theirToken.id, 'nope', '%00']) {
      const response = await suite.stack.request('DELETE', `/v3/account/tokens/${id}`, { token: mine.token });
      expect(response.status, id).toBe(404);
      expect(response.body.error.code).toBe('TOKEN_NOT_FOUND');
    }
    expect((await suite.stack.request('GET', '/v3/webhooks', { token: theirs.token })).status).toBe(200);
  });
});
