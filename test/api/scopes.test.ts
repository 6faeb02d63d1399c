// Scopes over HTTP. Every route of the OpenAPI document the service serves, walked with six
// tokens of one account, each holding exactly one scope (and one holding exactly the scopes of
// each route that needs more than one): 403 INSUFFICIENT_SCOPE naming the scope exactly when
// the token lacks one its route needs, by the route table of src/scopes.ts, which must be the
// table docs/api.md writes; otherwise an answer from past the check (200, or a 400 or 404 for
// the walk's bodies and ids, which name nothing and change nothing). Then what a token may
// grant, and who holds all six. (Tokens made before scopes: test/db/tokens.test.ts, migration 021.)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_SCOPES, SCOPES, lackingScope, type Scope } from '../../src/scopes';
import { OpenApi } from '../support/openapi';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

/** Ids of the right form that name nothing, by path parameter. */
const UNKNOWN_IDS: Record<string, string> = {
  id: `wh_${'0'.repeat(24)}`,
  deliveryId: `dlv_${'0'.repeat(24)}`,
  recoveryId: `rcv_${'0'.repeat(24)}`,
  tokenId: `tkn_${'0'.repeat(24)}`,
};
/** A body no request schema takes: a route that reads one answers 400, having done nothing. */
const WALK_BODY = { scopesWalk: true };

/** The scopes table of docs/api.md ("## Scopes"), as route → scopes: each row's scopes, then its routes, in backticks. */
function documentedTable(): Record<string, string[]> {
  const text = readFileSync(path.resolve(__dirname, '../../docs/api.md'), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith('Scopes\n'));
  if (!section) throw new Error('docs/api.md has no section "## Scopes"');
  const table: Record<string, string[]> = {};
  for (const line of section.split('\n').filter((row) => /^\| *[`n]/.test(row))) {
    const [scopesCell, routesCell] = line.split('|').slice(1, 3);
    const scopes = [...scopesCell.matchAll(/`([a-z]+:[a-z]+)`/g)].map((match) => match[1]);
    for (const [, route] of routesCell.matchAll(/`((?:GET|POST|PATCH|PUT|DELETE) \/v3\/[^`]*)`/g)) table[route] = scopes;
  }
  return table;
}

describe('the route table', () => {
  it('is the table docs/api.md writes, route for route', () => {
    const documented = documentedTable();
    const fromCode = Object.fromEntries(Object.entries(ROUTE_SCOPES).map(([route, scopes]) => [route, [...scopes].sort()]));
    expect(Object.fromEntries(Object.entries(documented).map(([route, scopes]) => [route, [...scopes].sort()]))).toEqual(fromCode);
  });
});

describe('every route of the document, with single-scope tokens', () => {
  let openApi: OpenApi;
  /** The walk's tokens: one per scope, and one per set of scopes a route needs together. */
  const tokens: { token: string; scopes: Scope[] }[] = [];

  beforeAll(async () => {
    openApi = new OpenApi((await suite.stack.request('GET', '/v3/openapi.json')).body);
    const account = await suite.stack.createAccount();
    const together = Object.values(ROUTE_SCOPES).filter((scopes) => scopes.length > 1);
    for (const scopes of [...SCOPES.map((scope) => [scope]), ...together]) {
      const made = await suite.stack.request('POST', '/v3/account/tokens', {
        token: account.token,
        body: { name: scopes.join(' '), scopes },
      });
      expect(made.status).toBe(201);
      expect(made.body.scopes).toEqual(scopes);
      tokens.push({ token: made.body.token, scopes: [...scopes] });
    }
  });

  it('answers 403 INSUFFICIENT_SCOPE with requiredScope exactly when the token lacks a scope its route needs, and never 403 otherwise', async () => {
    const publicOperations = openApi.operations.filter(({ operation }) => openApi.securitySchemes(operation).includes('accountToken'));
    expect(publicOperations.map(({ method, template }) => `${method.toUpperCase()} ${template}`).sort()).toEqual(
      Object.keys(ROUTE_SCOPES).sort(),
    );
    for (const { method, template, operation } of publicOperations) {
      const route = `${method.toUpperCase()} ${template}` as keyof typeof ROUTE_SCOPES;
      const required = ROUTE_SCOPES[route];
      expect(operation['x-required-scopes'], route).toEqual(required);
      const urlPath = template.replace(/\{([^}]+)\}/g, (_, name: string) => UNKNOWN_IDS[name]);
      const seen = { refused: 0, passed: 0 };
      for (const { token, scopes } of tokens) {
        const response = await suite.stack.request(method.toUpperCase(), urlPath, {
          token,
          body: operation.requestBody ? WALK_BODY : undefined,
        });
        const where = `${route} with ${scopes.join('+')}: ${response.status} ${JSON.stringify(response.body)}`;
        const lacking = lackingScope(scopes, required);
        if (lacking) {
          expect(response.status, where).toBe(403);
          expect(response.body.error, where).toEqual({ code: 'INSUFFICIENT_SCOPE', message: expect.any(String), requiredScope: lacking });
          seen.refused++;
        } else {
          expect([200, 400, 404], where).toContain(response.status);
          seen.passed++;
        }
      }
      // Some token of the walk holds what the route needs, and, when it needs a scope, some does not.
      expect(seen.passed, route).toBeGreaterThan(0);
      expect(seen.refused > 0, route).toBe(required.length > 0);
    }
  });

  it('checks the scope before anything is read: a malformed body of a token without the scope is 403, not 400', async () => {
    const [webhooksRead] = tokens;
    const response = await suite.stack.request('POST', '/v3/webhooks', {
      token: webhooksRead.token,
      rawBody: '{"url": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(403);
    expect(response.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'webhooks:write' });
  });
});

describe('what a token may grant', () => {
  it("makes a token of the scopes asked for, of the creator's own by default, and never one with a scope the creator lacks", async () => {
    const account = await suite.stack.createAccount();
    const make = (token: string, body: Record<string, unknown>) => suite.stack.request('POST', '/v3/account/tokens', { token, body });
    const narrow = await make(account.token, { name: 'narrow', scopes: ['account:admin', 'deliveries:read'] });
    expect(narrow.status).toBe(201);
    // Stored and shown in the order of the six, whatever the order asked.
    expect(narrow.body.scopes).toEqual(['deliveries:read', 'account:admin']);

    const broader = await make(narrow.body.token, { name: 'broader', scopes: ['deliveries:read', 'webhooks:write', 'account:admin'] });
    expect(broader.status).toBe(403);
    expect(broader.body.error).toEqual({ code: 'INSUFFICIENT_SCOPE', message: expect.any(String), requiredScope: 'webhooks:write' });

    const byDefault = await make(narrow.body.token, { name: 'by default' });
    expect(byDefault).toMatchObject({ status: 201, body: { scopes: ['deliveries:read', 'account:admin'] } });
    const narrower = await make(narrow.body.token, { name: 'narrower', scopes: ['deliveries:read'] });
    expect(narrower).toMatchObject({ status: 201, body: { scopes: ['deliveries:read'] } });
    // Without account:admin, no token at all.
    const none = await make(narrower.body.token, { name: 'none', scopes: ['deliveries:read'] });
    expect(none.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'account:admin' });

    const listed = await suite.stack.request('GET', '/v3/account/tokens', { token: account.token });
    expect(listed.body.data.map((token: { name: string; scopes: string[] }) => [token.name, token.scopes])).toEqual([
      ['initial', [...SCOPES]],
      ['narrow', ['deliveries:read', 'account:admin']],
      ['by default', ['deliveries:read', 'account:admin']],
      ['narrower', ['deliveries:read']],
    ]);
  });

  it('answers 400 VALIDATION_FAILED for no scope, a scope twice, or one that is none of the six, making nothing', async () => {
    const { token } = await suite.stack.createAccount();
    for (const scopes of [[], ['webhooks:read', 'webhooks:read'], ['webhooks:delete'], 'webhooks:read']) {
      const refused = await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: 'bad', scopes } });
      expect(refused.status, JSON.stringify(scopes)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: expect.stringMatching(/^\/scopes/) }] });
    }
    expect((await suite.stack.request('GET', '/v3/account/tokens', { token })).body.data).toHaveLength(1);
  });
});

describe('who holds all six', () => {
  it("the account's initial token, which GET /v3/account/token shows as the token making the request", async () => {
    const account = await suite.stack.createAccount();
    const own = await suite.stack.request('GET', '/v3/account/token', { token: account.token });
    expect(own).toMatchObject({ status: 200, body: { name: 'initial', prefix: account.token.slice(0, 8), scopes: [...SCOPES] } });
    const [listed] = (await suite.stack.request('GET', '/v3/account/tokens', { token: account.token })).body.data;
    expect(own.body).toEqual(listed);
  });

  it('while any token, whatever it holds, reads its own row from GET /v3/account/token', async () => {
    const account = await suite.stack.createAccount();
    const made = await suite.stack.request('POST', '/v3/account/tokens', {
      token: account.token,
      body: { name: 'log reader', scopes: ['deliveries:read'] },
    });
    const own = await suite.stack.request('GET', '/v3/account/token', { token: made.body.token });
    expect(own).toMatchObject({ status: 200, body: { id: made.body.id, name: 'log reader', scopes: ['deliveries:read'] } });
    expect(JSON.stringify(own.body)).not.toContain(made.body.token);
  });
});
