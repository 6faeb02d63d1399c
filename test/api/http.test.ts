import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '../../src/db/sql';
import { startTestStack, type TestStack } from '../support/stack';
import { startResettingServer } from '../support/dead-server';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

describe('HTTP foundations', () => {
  it('answers /healthz and /readyz without a token', async () => {
    expect(await stack.request('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await stack.request('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('answers an unknown route with 404 NOT_FOUND and a wrong method with 405 and Allow', async () => {
    const unknown = await stack.request('GET', '/v3/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });

    const { token } = await stack.createAccount();
    const wrongMethod = await stack.request('PUT', '/v3/webhooks', { token });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('POST');
    expect(wrongMethod.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers a route written in other letters 404 NOT_FOUND, token or not: it reaches no route, which it once did past the token check', async () => {
    const { token } = await stack.createAccount();
    const name = `other letters ${Date.now()}`;
    for (const [method, path, options] of [
      ['POST', '/INTERNAL/v3/accounts', { body: { name } }],
      ['POST', '/internal/V3/accounts', { token: stack.internalApiToken, body: { name } }],
      ['GET', '/V3/webhooks', {}],
      ['GET', '/v3/Webhooks', { token }],
      ['GET', '/V3/account/tokens', { token }],
      ['GET', '/V3/openapi.json', {}],
    ] as const) {
      const response = await stack.request(method, path, options);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
    expect(await stack.service.sql`SELECT id FROM accounts WHERE name = ${name}`).toHaveLength(0);
  });

  it('gives every response a request id, keeping a sane one the client sent', async () => {
    const generated = await stack.request('GET', '/healthz');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await stack.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
    const replaced = await stack.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });

  it('writes one JSON log line per request with its id, and never a token or a secret', async () => {
    const account = await stack.createAccount();
    const receiver = await stack.startReceiver();
    const created = await stack.request('POST', '/v3/webhooks', {
      token: account.token,
      body: { url: receiver.urlFor('/logged') },
      headers: { 'x-request-id': 'log-check-1' },
    });
    expect(created.status).toBe(201);
    const lines = stack.logs.map((line) => JSON.parse(line));
    const line = lines.find((entry) => entry.requestId === 'log-check-1');
    expect(line).toMatchObject({ msg: 'request', method: 'POST', route: '/v3/webhooks', status: 201, accountId: account.id });
    const everything = stack.logs.join('\n');
    expect(everything).not.toContain(created.body.secret);
    expect(everything).not.toContain(account.token);
    expect(everything).not.toContain(stack.internalApiToken);
  });

  it('answers 503 UNAVAILABLE with Retry-After when PostgreSQL is unreachable', async () => {
    const deadDatabase = await startResettingServer();
    const sql = createSql(`postgres://postgres@127.0.0.1:${deadDatabase.port}/none`, { max: 1 });
    const api = await stack.startApiWith({ sql });
    try {
      const response = await api.request('POST', '/v3/webhooks', { token: 'tok_x' });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(response.body).toEqual({ error: { code: 'UNAVAILABLE', message: expect.any(String) } });
      expect((await api.request('GET', '/readyz')).status).toBe(503);
    } finally {
      await api.close();
      await sql.end({ timeout: 1 });
      await deadDatabase.close();
    }
  });
});
