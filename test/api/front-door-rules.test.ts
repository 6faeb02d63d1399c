// The front door's rules alone (src/api/front-door.ts, refusal-log.ts): which requests it
// answers, what it answers them with, and what it counts and logs. The door in front of the
// real API, refusing without a statement: front-door.test.ts.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AccountAccess, MemoryRefusal } from '../../src/api/account-access';
import { errorAnswer } from '../../src/api/errors';
import { refusalAnswer, refusalOf, type DoorRequest } from '../../src/api/front-door';
import { createRefusalLog } from '../../src/api/refusal-log';
import { INTERNAL_BODY_LIMIT_BYTES, PUBLIC_BODY_LIMIT_BYTES } from '../../src/limits';
import { createLogger } from '../../src/logger';

type RefusalFromMemory = AccountAccess['refusalFromMemory'];

const CLIENT_IP = '192.0.2.7';
const refusesNothing: RefusalFromMemory = () => null;
const overLimit =
  (limit: MemoryRefusal['limit']): RefusalFromMemory =>
  () => ({
    limit,
    accountId: limit === 'account' ? 'acc_flooding' : null,
    decision: { allowed: false, limit: 200, remaining: 0, resetSeconds: 7 },
  });

const request = (method: string, url: string, headers: DoorRequest['headers'] = {}): DoorRequest => ({ method, url, headers });
const declaring = (bytes: number) => ({ 'content-length': String(bytes) });

describe('which requests the front door answers', () => {
  it('413 to a POST, PUT or PATCH declaring a body over its API’s limit, before its token is asked about', () => {
    const asked: unknown[] = [];
    const asking: RefusalFromMemory = (...args) => (asked.push(args), null);
    for (const [method, url, limit] of [
      ['POST', '/v3/webhooks', PUBLIC_BODY_LIMIT_BYTES],
      ['PATCH', '/v3/webhooks/wh_1?x=1', PUBLIC_BODY_LIMIT_BYTES],
      ['POST', '/internal/v3/lists/l1/writes', INTERNAL_BODY_LIMIT_BYTES],
      ['PUT', '/internal/v3/lists/l1', INTERNAL_BODY_LIMIT_BYTES],
    ] as const) {
      const refusal = refusalOf(request(method, url, declaring(limit + 1)), () => CLIENT_IP, asking);
      expect(refusal, `${method} ${url}`).toMatchObject({ reason: 'body_too_large', close: true, headers: {}, accountId: null });
      expect(refusal!.error()).toMatchObject({
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body is larger than ${limit} bytes.`,
      });
      expect(
        refusalOf(request(method, url, declaring(limit)), () => CLIENT_IP, refusesNothing),
        `${method} ${url} at the limit`,
      ).toBeNull();
    }
    expect(asked).toEqual([]);
    // The internal API's limit is its own.
    expect(
      refusalOf(request('POST', '/internal/v3/accounts', declaring(PUBLIC_BODY_LIMIT_BYTES + 1)), () => CLIENT_IP, refusesNothing),
    ).toBeNull();
  });

  it('leaves a declared body to Koa where no route reads one: other methods, and paths outside both APIs', () => {
    const huge = declaring(10_000_000);
    for (const [method, url] of [
      ['GET', '/v3/webhooks'],
      ['DELETE', '/v3/webhooks/wh_1'],
      ['POST', '/healthz'],
      ['POST', '/dashboard'],
      ['POST', '/V3/webhooks'],
      ['POST', '/v3'],
    ])
      expect(
        refusalOf(request(method, url, huge), () => CLIENT_IP, refusesNothing),
        `${method} ${url}`,
      ).toBeNull();
  });

  it('asks the memory about the public API’s limited paths only, with the Bearer token (if sane) and the client address', () => {
    const asked: [string | null, string][] = [];
    const recording: RefusalFromMemory = (token, address) => (asked.push([token, address]), null);
    for (const url of ['/v3/openapi.json', '/healthz', '/readyz', '/metrics', '/dashboard', '/internal/v3/accounts', '/V3/webhooks'])
      expect(
        refusalOf(request('GET', url, { authorization: 'Bearer tok_x' }), () => CLIENT_IP, recording),
        url,
      ).toBeNull();
    expect(asked).toEqual([]);

    for (const authorization of ['Bearer tok_abc', 'bearer tok_abc', 'Basic dXNlcjpwYXNz', 'Bearer ', undefined])
      refusalOf(request('GET', '/v3/webhooks?limit=5', { authorization }), () => CLIENT_IP, recording);
    expect(asked).toEqual([
      ['tok_abc', CLIENT_IP],
      ['tok_abc', CLIENT_IP],
      [null, CLIENT_IP],
      [null, CLIENT_IP],
      [null, CLIENT_IP],
    ]);
    // An unknown route of the public API too: a client over its limit is told so whatever it asks.
    expect(refusalOf(request('GET', '/v3/no-such-route'), () => CLIENT_IP, recording)).toBeNull();
    expect(asked).toHaveLength(6);
  });

  it('429 for a request the memory refuses: the account’s or the address’s, keeping the connection unless the body’s length is unknown', () => {
    const account = refusalOf(request('GET', '/v3/webhooks', { authorization: 'Bearer tok_abc' }), () => CLIENT_IP, overLimit('account'));
    expect(account).toMatchObject({
      reason: 'account_rate_limit',
      close: false,
      accountId: 'acc_flooding',
      headers: { 'RateLimit-Limit': '200', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '7' },
    });
    expect(account!.error()).toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
      message: 'This account is over its rate limit: try again in 7 seconds.',
    });

    const address = refusalOf(request('POST', '/v3/webhooks', { 'transfer-encoding': 'chunked' }), () => CLIENT_IP, overLimit('address'));
    expect(address).toMatchObject({ reason: 'address_rate_limit', close: true, accountId: null });
    expect(address!.error().message).toBe('Too many requests without a valid token from this address: try again in 7 seconds.');
  });
});

describe('what the front door answers', () => {
  it('alike for refusals of one key (the door keeps one answer per key): the key holds all the error depends on', () => {
    const refusalWith = (limit: MemoryRefusal['limit'], resetSeconds: number) =>
      refusalOf(
        request('GET', '/v3/webhooks'),
        () => CLIENT_IP,
        () => ({
          limit,
          accountId: null,
          decision: { allowed: false, limit: 20, remaining: 0, resetSeconds },
        }),
      )!;
    const refusals = [
      refusalWith('account', 1),
      refusalWith('account', 2),
      refusalWith('address', 1),
      refusalWith('address', 1),
      refusalOf(request('POST', '/v3/webhooks', declaring(10_000_000)), () => CLIENT_IP, refusesNothing)!,
      refusalOf(request('PUT', '/internal/v3/lists/l', declaring(10_000_000)), () => CLIENT_IP, refusesNothing)!,
      refusalOf(request('POST', '/internal/v3/accounts', declaring(10_000_000)), () => CLIENT_IP, refusesNothing)!,
    ];
    for (const a of refusals)
      for (const b of refusals)
        expect(JSON.stringify(errorAnswer(a.error())) === JSON.stringify(errorAnswer(b.error()))).toBe(a.key === b.key);
  });

  it('a 429 as Koa answers it: X-Request-Id, RateLimit-*, Retry-After, Content-Type, Content-Length, in that order, and the envelope', () => {
    const refusal = refusalOf(request('GET', '/v3/webhooks'), () => CLIENT_IP, overLimit('account'))!;
    const answer = refusalAnswer(refusal, 'req-1');
    expect(answer.status).toBe(429);
    expect(Object.entries(answer.headers)).toEqual([
      ['X-Request-Id', 'req-1'],
      ['RateLimit-Limit', '200'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '7'],
      ['Retry-After', '7'],
      ['Content-Type', 'application/json; charset=utf-8'],
      ['Content-Length', String(Buffer.byteLength(answer.body))],
    ]);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'RATE_LIMITED', message: 'This account is over its rate limit: try again in 7 seconds.' },
    });
  });

  it('a 413 with Connection: close and no RateLimit-* headers: it comes before the limit is asked', () => {
    const refusal = refusalOf(request('POST', '/v3/webhooks', declaring(10_000_000)), () => CLIENT_IP, refusesNothing)!;
    const answer = refusalAnswer(refusal, 'req-2');
    expect(answer.status).toBe(413);
    expect(answer.headers).toEqual({
      'X-Request-Id': 'req-2',
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(answer.body)),
      Connection: 'close',
    });
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'PAYLOAD_TOO_LARGE', message: `The request body is larger than ${PUBLIC_BODY_LIMIT_BYTES} bytes.` },
    });
  });
});

describe('what the front door counts and logs', () => {
  /** A refusal log whose summaries land in `lines`; its interval never comes in a test: flush() writes. */
  function refusalLog() {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    return { lines, log: createRefusalLog(createLogger('info', sink), { msg: 'requests refused', level: 'info' }, 3_600_000) };
  }

  it('one summary line per interval: counts by reason, the addresses and accounts refused most, never a line per request', () => {
    const { lines, log } = refusalLog();
    for (let i = 0; i < 30; i++) log.count({ reason: 'account_rate_limit', address: '198.51.100.1', accountId: 'acc_noisy' });
    for (let i = 0; i < 6; i++) log.count({ reason: 'address_rate_limit', address: `203.0.113.${i % 3}`, accountId: null });
    // An IPv6 client by its /64, as the rate limit keys it.
    log.count({ reason: 'body_too_large', address: '2001:db8:1:2::1', accountId: null });
    log.count({ reason: 'body_too_large', address: '2001:db8:1:2:ffff::9', accountId: null });
    expect(lines).toEqual([]);

    log.flush();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'requests refused',
        since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        refused: { account_rate_limit: 30, address_rate_limit: 6, body_too_large: 2 },
        addresses: 6,
        topAddresses: [
          { address: '198.51.100.1', refused: 30 },
          { address: '203.0.113.0', refused: 2 },
          { address: '203.0.113.1', refused: 2 },
          { address: '203.0.113.2', refused: 2 },
          { address: '2001:db8:1:2::/64', refused: 2 },
        ],
        topAccounts: [{ accountId: 'acc_noisy', refused: 30 }],
      }),
    ]);
    log.flush();
    expect(lines).toHaveLength(1);
  });
});
