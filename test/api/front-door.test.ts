// The front door in front of the real API (src/api/front-door.ts): a body declared over the
// limit is refused 413 and the connection closed with no byte of it read; a flooding account
// over its limit, and an address flooding with tokens that do not exist, are refused 429
// while PostgreSQL answers nothing: the API's connections go through a proxy that holds every
// statement from the flood's start, and none reaches it. The same without the door, in Koa
// (account-access.ts asks the memory before it looks a token up). The door's rules alone:
// front-door-rules.test.ts.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAccountAccess } from '../../src/api/account-access';
import { createSql, type Sql } from '../../src/db/sql';
import { INTERNAL_BODY_LIMIT_BYTES, PUBLIC_BODY_LIMIT_BYTES, type RateLimits } from '../../src/limits';
import { newToken } from '../../src/secrets';
import { startStatementHoldingProxy, type StatementHoldingProxy } from '../faults/support/statement-holding-proxy';
import { startTestStack, type ApiResponse, type RequestFunction, type TestStack } from '../support/stack';
import { sample } from '../support/metrics';
import { waitFor } from '../support/wait';

/** Bursts whose windows (30 s) outlast each test's flood many times over, so that a window never ends mid-flood. */
const LIMITS: RateLimits = { account: { perSecond: 1, burst: 30 }, address: { perSecond: 1, burst: 30 }, accountInFlight: 4 };
/** The requests of each flood answered while the database holds everything. */
const FLOOD = 25;

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

/** A client address of its own (an IPv6 /64 of the documentation range), as a trusted proxy reports it. */
const newAddress = () => ({ 'x-forwarded-for': `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1` });

/** A status line, the headers in their order (names as sent), and the body, of one request sent on a socket of its own, read until the server closes it. */
interface RawAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** Sends `head` (and no body) on a new connection and reads the answer until the server closes the connection. */
async function rawExchange(url: string, head: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.write(head);
  await new Promise<void>((closed, failed) => {
    socket.on('close', () => closed());
    socket.on('error', failed);
  });
  return parseAnswer(Buffer.concat(chunks).toString('utf8'));
}

function parseAnswer(text: string): RawAnswer {
  const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
  const [statusLine, ...lines] = head.split('\r\n');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers: lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
    body,
  };
}

describe('a body declared over the limit', () => {
  it('is refused 413 PAYLOAD_TOO_LARGE from its headers alone, token or not, and the connection closed', async () => {
    const metricsBefore = await refusedCount('413', 'body_too_large');
    for (const [path, limit] of [
      ['/v3/webhooks', PUBLIC_BODY_LIMIT_BYTES],
      ['/internal/v3/lists/door/writes', INTERNAL_BODY_LIMIT_BYTES],
    ] as const) {
      for (const declared of [10_000_000, limit + 1]) {
        const requestId = `door-413-${randomBytes(4).toString('hex')}`;
        // Headers only: the server answers and closes, or this waits forever.
        const answer = await rawExchange(
          stack.service.url,
          `POST ${path} HTTP/1.1\r\nHost: door\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\nX-Request-Id: ${requestId}\r\n\r\n`,
        );
        expect(answer.status, `${path} declaring ${declared}`).toBe(413);
        expect(JSON.parse(answer.body)).toEqual({
          error: { code: 'PAYLOAD_TOO_LARGE', message: `The request body is larger than ${limit} bytes.` },
        });
        const headers = Object.fromEntries(answer.headers.map(([name, value]) => [name.toLowerCase(), value]));
        expect(headers).toMatchObject({
          'x-request-id': requestId,
          'content-type': 'application/json; charset=utf-8',
          'content-length': String(Buffer.byteLength(answer.body)),
          connection: 'close',
        });
        // No log line of its own: the door counts it instead.
        expect(stack.logs.filter((line) => line.includes(requestId))).toEqual([]);
      }
    }
    expect(await refusedCount('413', 'body_too_large')).toBe(metricsBefore + 4);
  });

  it('that expects 100 Continue is refused 413 without one, so the client never sends it; a body within the limit is continued', async () => {
    const refused = await rawExchange(
      stack.service.url,
      'POST /v3/webhooks HTTP/1.1\r\nHost: door\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n',
    );
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body).error.code).toBe('PAYLOAD_TOO_LARGE');

    const { token } = await stack.createAccount();
    const body = JSON.stringify({ url: 'not a url' });
    const { hostname, port } = new URL(stack.service.url);
    const answered = await new Promise<{ continued: boolean; status: number }>((done, failed) => {
      let continued = false;
      const request = http.request({
        host: hostname,
        port,
        method: 'POST',
        path: '/v3/webhooks',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          expect: '100-continue',
        },
      });
      // The body goes only once the server asked for it.
      request.on('continue', () => {
        continued = true;
        request.end(body);
      });
      request.on('response', (response) => {
        response.resume();
        done({ continued, status: response.statusCode! });
      });
      request.on('error', failed);
    });
    expect(answered).toEqual({ continued: true, status: 400 });
  });
});

/** The service's http_requests_refused_total for a status and reason, read from /metrics. */
async function refusedCount(status: string, reason: string): Promise<number> {
  return sample((await stack.request('GET', '/metrics')).body as string, 'http_requests_refused_total', { status, reason });
}

/** The service's http_requests_rate_limited_total for a limit, read from /metrics. */
async function rateLimitedCount(limit: 'account' | 'address'): Promise<number> {
  return sample((await stack.request('GET', '/metrics')).body as string, 'http_requests_rate_limited_total', { limit });
}

/**
 * An API with an access of its own, whose statements (the token lookups, the limiter's) all
 * go through a proxy that, once hold() is called, holds every statement it is sent.
 */
async function apiWithHeldDatabase(frontDoor: boolean) {
  let holding = false;
  const proxy: StatementHoldingProxy = await startStatementHoldingProxy(inject('databaseUrl'), () => holding);
  const sql: Sql = createSql(proxy.url, { max: 2 });
  const access = createAccountAccess(sql, LIMITS);
  await access.start();
  const api = await stack.startApiWith({ sql, access, trustProxyHops: 1 }, { frontDoor });
  return {
    api,
    access,
    proxy,
    hold() {
      holding = true;
    },
    async close() {
      proxy.release();
      await api.close();
      await access.stop();
      await sql.end();
      await proxy.close();
    },
  };
}

function expectRateLimited(response: ApiResponse, limit: 'account' | 'address', burst: number) {
  expect(response.status).toBe(429);
  const retryAfter = response.headers.get('retry-after');
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(response.headers.get('ratelimit-limit')).toBe(String(burst));
  expect(response.headers.get('ratelimit-remaining')).toBe('0');
  expect(response.headers.get('ratelimit-reset')).toBe(retryAfter);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const message = limit === 'account' ? 'This account is over its rate limit' : 'Too many requests without a valid token from this address';
  expect(response.body).toEqual({
    error: { code: 'RATE_LIMITED', message: `${message}: try again in ${retryAfter} ${retryAfter === '1' ? 'second' : 'seconds'}.` },
  });
}

/**
 * Sends a request that needs a statement (a token never seen, from an address under its
 * limit) and waits until the proxy holds it: the API's statements do go through the proxy.
 */
async function expectStatementsHeld(request: RequestFunction, proxy: StatementHoldingProxy) {
  const needing = request('GET', '/v3/webhooks', { token: newToken(), headers: newAddress() });
  await waitFor(async () => (proxy.heldStatements.length > 0 ? true : undefined), { what: 'a statement held' });
  proxy.release();
  expect((await needing).status).toBe(401);
}

describe.for([
  ['through the front door', true],
  ['in Koa alone', false],
] as const)('a flood refused from memory, %s, while PostgreSQL answers nothing', ([, frontDoor]) => {
  it('an account over its limit keeps getting 429 with its RateLimit-* headers and Retry-After', async () => {
    const held = await apiWithHeldDatabase(frontDoor);
    try {
      const { token } = await stack.createAccount();
      const address = newAddress();
      for (let i = 0; i < LIMITS.account.burst; i++)
        expect((await held.api.request('GET', '/v3/webhooks', { token, headers: address })).status).toBe(200);
      await held.access.flushUsage(); // the meter's one statement for the requests served
      held.hold();
      const refusedBefore = await refusedCount('429', 'account_rate_limit');
      const limitedBefore = await rateLimitedCount('account');
      for (let i = 0; i < FLOOD; i++)
        expectRateLimited(await held.api.request('GET', '/v3/webhooks', { token, headers: address }), 'account', LIMITS.account.burst);
      // The door answered them, or (without it) Koa did; every 429 counts as rate limited either way.
      expect(await refusedCount('429', 'account_rate_limit')).toBe(refusedBefore + (frontDoor ? FLOOD : 0));
      expect(await rateLimitedCount('account')).toBe(limitedBefore + FLOOD);
      // Whatever the route, and from any address: the account is over its limit.
      for (const [method, path, body] of [
        ['POST', '/v3/webhooks', { url: 'https://receiver.test' }],
        ['GET', '/v3/account', undefined],
      ] as const)
        expectRateLimited(await held.api.request(method, path, { token, body, headers: newAddress() }), 'account', LIMITS.account.burst);
      expect(held.proxy.heldStatements).toEqual([]);
      await expectStatementsHeld(held.api.request, held.proxy);
    } finally {
      await held.close();
    }
  });

  it('an address flooding with tokens that do not exist gets 429 once over its limit, no token looked up', async () => {
    const held = await apiWithHeldDatabase(frontDoor);
    try {
      const address = newAddress();
      for (let i = 0; i < LIMITS.address.burst; i++)
        expect((await held.api.request('GET', '/v3/webhooks', { token: newToken(), headers: address })).status).toBe(401);
      held.hold();
      const refusedBefore = await refusedCount('429', 'address_rate_limit');
      const limitedBefore = await rateLimitedCount('address');
      for (let i = 0; i < FLOOD; i++)
        expectRateLimited(
          await held.api.request('GET', '/v3/webhooks', { token: newToken(), headers: address }),
          'address',
          LIMITS.address.burst,
        );
      expect(await refusedCount('429', 'address_rate_limit')).toBe(refusedBefore + (frontDoor ? FLOOD : 0));
      expect(await rateLimitedCount('address')).toBe(limitedBefore + FLOOD);
      for (const headers of [address, { ...address, authorization: 'Basic c2VjcmV0' }])
        expectRateLimited(await held.api.request('GET', '/v3/account', { headers }), 'address', LIMITS.address.burst);
      expect(held.proxy.heldStatements).toEqual([]);
      await expectStatementsHeld(held.api.request, held.proxy);
    } finally {
      await held.close();
    }
  });
});

describe('the answers of the door and of Koa', () => {
  it('are the same bytes, but for the date: a 429 of an account, and of an address', async () => {
    const access = createAccountAccess(stack.service.sql, LIMITS);
    await access.start();
    const [door, koa] = [
      await stack.startApiWith({ access, trustProxyHops: 1 }),
      await stack.startApiWith({ access, trustProxyHops: 1 }, { frontDoor: false }),
    ];
    try {
      const { token } = await stack.createAccount();
      const address = newAddress()['x-forwarded-for'];
      for (let i = 0; i < LIMITS.account.burst; i++) await door.request('GET', '/v3/webhooks', { token });
      for (let i = 0; i < LIMITS.address.burst; i++) await door.request('GET', '/v3/webhooks', { headers: { 'x-forwarded-for': address } });
      for (const authorization of [`Authorization: Bearer ${token}\r\n`, '']) {
        const head = `GET /v3/webhooks HTTP/1.1\r\nHost: door\r\n${authorization}X-Forwarded-For: ${address}\r\nX-Request-Id: same-request\r\nConnection: close\r\n\r\n`;
        const refused = await refusedCount('429', authorization ? 'account_rate_limit' : 'address_rate_limit');
        const [fromDoor, fromKoa] = [await rawExchange(door.url, head), await rawExchange(koa.url, head)];
        expect(fromDoor.status).toBe(429);
        expect(await refusedCount('429', authorization ? 'account_rate_limit' : 'address_rate_limit')).toBe(refused + 1);
        // The seconds to wait may have moved on by one between the two.
        const comparable = (answer: RawAnswer) =>
          JSON.stringify(answer)
            .replace(/"Date","[^"]*"/, '"Date",""')
            .replace(/\d+( seconds?)/, 'N$1')
            .replace(/"(RateLimit-Reset|Retry-After|Content-Length)","\d+"/g, '"$1","N"');
        expect(comparable(fromDoor)).toBe(comparable(fromKoa));
      }
    } finally {
      await door.close();
      await koa.close();
      await access.stop();
    }
  });
});
