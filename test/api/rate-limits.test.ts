// The public API's rate limits on a stack with small ones: per account (other accounts
// served meanwhile), per client address without a valid token (X-Forwarded-For believed
// only behind a configured proxy), the RateLimit-* headers, 429 RATE_LIMITED with
// Retry-After and nothing done; and what is not limited: the internal API, the probes, the
// document and the dashboard. Two API processes sharing a limit: test/faults/api-processes.test.ts.
import { randomInt } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../../src/api/rate-limits';
import { startTestStack, type ApiResponse, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';

const ACCOUNT_BURST = 5;
const ADDRESS_BURST = 3;

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    RATE_LIMIT_PER_SECOND: '1',
    RATE_LIMIT_BURST: String(ACCOUNT_BURST),
    RATE_LIMIT_UNAUTHENTICATED_PER_SECOND: '1',
    RATE_LIMIT_UNAUTHENTICATED_BURST: String(ADDRESS_BURST),
    TRUST_PROXY_HOPS: '1',
  });
});
afterAll(() => stack?.stop());

const headersOf = (response: ApiResponse) => ({
  limit: response.headers.get('ratelimit-limit'),
  remaining: response.headers.get('ratelimit-remaining'),
  reset: Number(response.headers.get('ratelimit-reset')),
});

/** A client address of the documentation ranges, as a trusted proxy reports it. */
let addresses = 0;
const nextAddress = () => ({ 'x-forwarded-for': `198.51.100.${++addresses}` });

describe('the limit of an account', () => {
  it('serves its burst with the RateLimit-* headers counting down, then answers 429 RATE_LIMITED with Retry-After', async () => {
    const { token } = await stack.createAccount();
    for (let i = 1; i <= ACCOUNT_BURST; i++) {
      const served = await stack.request('GET', '/v3/webhooks', { token });
      expect(served.status).toBe(200);
      const headers = headersOf(served);
      expect(headers).toMatchObject({ limit: String(ACCOUNT_BURST), remaining: String(ACCOUNT_BURST - i) });
      expect(headers.reset).toBeGreaterThanOrEqual(0);
      expect(headers.reset).toBeLessThanOrEqual(ACCOUNT_BURST);
    }
    const limited = await stack.request('GET', '/v3/webhooks', { token });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringMatching(
          new RegExp(`^This account is over its rate limit: try again in ${limited.headers.get('retry-after')} seconds?\\.$`),
        ),
      },
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(ACCOUNT_BURST);
    expect(headersOf(limited)).toMatchObject({ limit: String(ACCOUNT_BURST), remaining: '0', reset: retryAfter });
  });

  it("limits an account alone: another account's requests are served meanwhile, and its own again once its window is over", async () => {
    const [noisy, quiet] = [await stack.createAccount(), await stack.createAccount()];
    const answers = await Promise.all(Array.from({ length: ACCOUNT_BURST * 3 }, () => stack.request('GET', '/v3/webhooks', noisy)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(ACCOUNT_BURST);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(ACCOUNT_BURST * 2);
    expect((await stack.request('GET', '/v3/webhooks', quiet)).status).toBe(200);
    await waitFor(async () => ((await stack.request('GET', '/v3/webhooks', noisy)).status === 200 ? true : undefined), {
      intervalMs: 250,
      what: "the noisy account's next window",
    });
  });

  it('does nothing for a request over the limit', async () => {
    const { token } = await stack.createAccount();
    for (let i = 0; i < ACCOUNT_BURST; i++) await stack.request('GET', '/v3/webhooks', { token });
    const limited = await stack.request('POST', '/v3/account/tokens', { token, body: { name: 'over the limit' } });
    expect(limited.status).toBe(429);
    const names = await waitFor(async () => {
      const listed = await stack.request('GET', '/v3/account/tokens', { token });
      return listed.status === 200 ? listed.body.data.map((t: { name: string }) => t.name) : undefined;
    });
    expect(names).toEqual(['initial']);
  });

  it("counts a relay session's opening and its connection tickets against the account's limit", async () => {
    const { token } = await stack.createAccount();
    const session = await stack.request('POST', '/v3/relay-sessions', { token });
    expect(session.status).toBe(201);
    const tickets = [];
    for (let i = 1; i < ACCOUNT_BURST; i++)
      tickets.push(await stack.request('POST', `/v3/webhooks/${session.body.id}/relay-connections`, { token }));
    expect(tickets.map((ticket) => ticket.status)).toEqual(Array<number>(ACCOUNT_BURST - 1).fill(201));
    const limited = await stack.request('POST', `/v3/webhooks/${session.body.id}/relay-connections`, { token });
    expect(limited.status).toBe(429);
  });

  it('counts every token of the account against one limit', async () => {
    const { token } = await stack.createAccount();
    const second = (await stack.request('POST', '/v3/account/tokens', { token, body: { name: 'second' } })).body.token;
    for (let i = 1; i < ACCOUNT_BURST; i++) expect((await stack.request('GET', '/v3/webhooks', { token: second })).status).toBe(200);
    expect((await stack.request('GET', '/v3/webhooks', { token })).status).toBe(429);
  });
});

describe('the limit of a client address, for requests without a valid token', () => {
  it('answers 401 with the headers until the burst is spent, then 429; another address still gets 401', async () => {
    const address = nextAddress();
    for (const [i, token] of ['tok_unknown', null, 'tok_unknown'].entries()) {
      const refused = await stack.request('GET', '/v3/webhooks', { token, headers: address });
      expect(refused.status).toBe(401);
      expect(headersOf(refused)).toMatchObject({ limit: String(ADDRESS_BURST), remaining: String(ADDRESS_BURST - 1 - i) });
    }
    const limited = await stack.request('GET', '/v3/webhooks', { token: 'tok_unknown', headers: address });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringMatching(/^Too many requests without a valid token/),
    });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await stack.request('GET', '/v3/webhooks', { headers: nextAddress() })).status).toBe(401);
  });

  it('still serves a valid token from a limited address, once the process has seen it: the account has its own limit', async () => {
    const address = nextAddress();
    const { token } = await stack.createAccount();
    expect((await stack.request('GET', '/v3/webhooks', { token })).status).toBe(200);
    for (let i = 0; i <= ADDRESS_BURST; i++) await stack.request('GET', '/v3/webhooks', { headers: address });
    expect((await stack.request('GET', '/v3/webhooks', { headers: address })).status).toBe(429);
    expect((await stack.request('GET', '/v3/webhooks', { token, headers: address })).status).toBe(200);
  });

  it("answers a token the process has not seen, from a limited address, with the address's 429: no token is looked up for it", async () => {
    const address = nextAddress();
    for (let i = 0; i <= ADDRESS_BURST; i++) await stack.request('GET', '/v3/webhooks', { headers: address });
    const { token } = await stack.createAccount();
    const limited = await stack.request('GET', '/v3/webhooks', { token, headers: address });
    expect(limited.status).toBe(429);
    expect(limited.body.error.message).toMatch(/^Too many requests without a valid token from this address/);
    expect((await stack.request('GET', '/v3/webhooks', { token })).status).toBe(200);
  });

  it('takes the address from the socket, not X-Forwarded-For, when no proxy is trusted', async () => {
    const api = await stack.startApiWith({});
    // From a loopback address of its own, whose bucket no other test has drawn on.
    const localAddress = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    const fromThere = new Agent({ connect: { localAddress } });
    try {
      const statuses: number[] = [];
      for (let i = 1; i <= ADDRESS_BURST + 1; i++) {
        const response = await request(`${api.url}/v3/webhooks`, {
          dispatcher: fromThere,
          headers: { 'x-forwarded-for': `203.0.113.${i}` },
        });
        await response.body.dump();
        statuses.push(response.statusCode);
      }
      expect(statuses).toEqual([...Array<number>(ADDRESS_BURST).fill(401), 429]);
    } finally {
      await fromThere.close();
    }
  });

  it('keys IPv4 addresses as they are, IPv4-mapped ones as IPv4, and IPv6 ones by their /64', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2::1')).toBe(addressKey('2001:db8:1:2:ffff::9'));
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
  });
});

describe('what is not limited', () => {
  it('the internal API, the probes, the document and the dashboard: many requests, no RateLimit headers', async () => {
    const address = nextAddress();
    for (let i = 0; i < ADDRESS_BURST * 3; i++) {
      for (const path of ['/healthz', '/v3/openapi.json', '/dashboard']) {
        const response = await stack.request('GET', path, { headers: address });
        expect(response.status, path).toBe(200);
        expect(response.headers.get('ratelimit-limit')).toBeNull();
      }
      const created = await stack.request('POST', '/internal/v3/accounts', {
        token: stack.internalApiToken,
        body: { name: `unlimited ${i}` },
        headers: address,
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('ratelimit-limit')).toBeNull();
    }
  });
});
