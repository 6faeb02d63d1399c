import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_BODY_BYTES, KEPT_HEADER_BYTES } from '../../src/delivery/response-capture';
import { createHttpSender, type HttpSender, type HttpSenderOptions } from '../../src/delivery/sender';
import { signPayload, verifySignature } from '../../src/delivery/signing';
import { type Resolver, checkWebhookUrl, createAddressPolicy } from '../../src/delivery/url-policy';
import { type Receiver, startReceiver } from '../support/receiver';
import { type Pem, createSelfSignedCert, createTestCa, issueServerCert } from '../../scripts/lib/tls';

const USER_AGENT = 'svc-webhooks/0.0.0-test';
const loopbackAllowed = createAddressPolicy(['127.0.0.0/8', '::1/128']);
const strict = createAddressPolicy([]);

const noLookup: Resolver = async (hostname) => {
  throw new Error(`unexpected lookup of ${hostname}`);
};

let ca: Pem;
let localhostCert: Pem;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ca = await createTestCa();
  localhostCert = await issueServerCert(ca);
});

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

afterAll(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function receiver(options: { cert?: Pem; host?: string } = {}): Promise<Receiver> {
  const pem = options.cert ?? localhostCert;
  const started = await startReceiver({ cert: pem.cert, key: pem.key, host: options.host });
  cleanups.push(() => started.close());
  return started;
}

/**
 * The default deadline: far beyond any exchange on loopback, however loaded the machine, so
 * that only a receiver that holds back its answer reaches it. A test whose deadline must pass
 * after the request or the headers arrived uses it too: on a loaded machine a short one (300 ms)
 * passed before the request reached the receiver, or before the headers reached the sender. A
 * test that expects nothing to arrive may use a short one.
 */
function sender(overrides: Partial<HttpSenderOptions> = {}): HttpSender {
  const created = createHttpSender({
    timeoutMs: 5000,
    policy: loopbackAllowed,
    resolve: noLookup,
    ca: [ca.cert],
    userAgent: USER_AGENT,
    ...overrides,
  });
  cleanups.push(() => created.close());
  return created;
}

/** A resolver answering from a table, counting its calls. */
function tableResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve: Resolver = async (hostname) => {
    calls.push(hostname);
    const answer = table[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer;
  };
  return { resolve, calls };
}

const body = '{"event":"item.added","listId":"lst_1","cursor":7,"at":"2024-05-01T12:00:00.000Z"}';
const secret = 'whsec_' + 'k'.repeat(32);
const svcHeaders = {
  'SVC-Event': 'item.added',
  'SVC-Signature': signPayload(body, secret),
  'SVC-Delivery': 'dlv_test1',
  'SVC-Webhook': 'wh_test1',
};

describe('createHttpSender: success', () => {
  it('delivers a 2xx with the exact body and headers', async () => {
    const hook = await receiver();
    hook.respondWith({ status: 204 });
    const { result } = await sender().post(hook.urlFor('/hooks/in?source=test'), body, svcHeaders);

    expect(result).toEqual({ delivered: true, statusCode: 204, durationMs: expect.any(Number), error: null });
    expect(Number.isInteger(result.durationMs)).toBe(true);
    const [received] = await hook.waitForRequests(1);
    expect(received.method).toBe('POST');
    expect(received.path).toBe('/hooks/in?source=test');
    expect(received.rawBody.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(received.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'svc-event': 'item.added',
      'svc-delivery': 'dlv_test1',
      'svc-webhook': 'wh_test1',
      'content-length': String(Buffer.byteLength(body)),
    });
    expect(received.headers['content-encoding']).toBeUndefined();
    expect(verifySignature(received.rawBody, received.headers['svc-signature'] as string, secret)).toBe(true);
    expect(received.servername).toBeNull(); // IP-literal URL: no SNI
  });

  it('sets content-type and user-agent itself, whatever the caller passes', async () => {
    const hook = await receiver();
    await sender().post(hook.urlFor('/'), body, { 'Content-Type': 'text/plain', 'USER-AGENT': 'spoofed' });
    const [received] = await hook.waitForRequests(1);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers['user-agent']).toBe(USER_AGENT);
  });

  it('dials the checked address of a name and verifies the certificate against the name', async () => {
    const hook = await receiver({ cert: await issueServerCert(ca, ['hooks.test']) });
    const dns = tableResolver({ 'hooks.test': ['127.0.0.1'] });
    const { result } = await sender({ resolve: dns.resolve }).post(`https://hooks.test:${hook.port}/in`, body, svcHeaders);

    expect(result.error).toBeNull();
    const [received] = await hook.waitForRequests(1);
    expect(received.servername).toBe('hooks.test'); // SNI carries the name, not the address
    expect(received.headers.host).toBe(`hooks.test:${hook.port}`);
    // hooks.test exists in no real DNS: the connection went to the address our resolver answered.
    expect(dns.calls).toEqual(['hooks.test']);
  });

  it('keeps connections alive and resolves exactly once per new connection', async () => {
    const hook = await receiver({ cert: await issueServerCert(ca, ['hooks.test']) });
    const dns = tableResolver({ 'hooks.test': ['127.0.0.1'] });
    const http = sender({ resolve: dns.resolve });
    const url = `https://hooks.test:${hook.port}/in`;

    const results = [];
    for (let i = 0; i < 5; i++) results.push((await http.post(url, body, svcHeaders)).result);

    expect(results.map((r) => r.error)).toEqual([null, null, null, null, null]);
    await hook.waitForRequests(5);
    expect(hook.connections).toBeLessThan(5);
    expect(dns.calls).toHaveLength(hook.connections);
  });

  it('still trusts NODE_EXTRA_CA_CERTS when extra CAs are passed (an explicit ca replaces the default store)', async () => {
    const hook = await receiver();
    const dir = await mkdtemp(join(tmpdir(), 'sender-ca-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'ca.pem'), ca.cert);
    const unrelatedCa = await createTestCa();

    const previous = process.env.NODE_EXTRA_CA_CERTS;
    process.env.NODE_EXTRA_CA_CERTS = join(dir, 'ca.pem');
    let http: HttpSender;
    try {
      http = sender({ ca: [unrelatedCa.cert] });
    } finally {
      if (previous === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = previous;
    }
    const { result } = await http.post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: true, error: null });
  });

  it('delivers to an IPv6 literal', async () => {
    const hook = await receiver({ host: '::1' });
    expect(hook.url).toMatch(/^https:\/\/\[::1\]:\d+$/);
    const { result } = await sender().post(hook.urlFor('/v6'), body, svcHeaders);
    expect(result.error).toBeNull();
    expect(result.delivered).toBe(true);
    await hook.waitForRequests(1);
  });

  it('reads at most 64 KiB of a large (5 MB) response body', async () => {
    const hook = await receiver();
    hook.respondWith({ body: Buffer.alloc(5 * 1024 * 1024, 'x') });
    const { result } = await sender().post(hook.urlFor('/big'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: true, statusCode: 200, error: null });
  });

  it('stops reading after 64 KiB: a body that never ends still counts as delivered', async () => {
    const hook = await receiver();
    // 128 KiB and then nothing, without ending: waiting for the end would hit the deadline.
    hook.respondWith({ body: Buffer.alloc(128 * 1024, 'y'), leaveOpen: true });
    const { result } = await sender().post(hook.urlFor('/endless'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: true, statusCode: 200, error: null });
  });

  it('never decompresses a response body', async () => {
    const hook = await receiver();
    // Not valid gzip: a client that decompressed would fail on it.
    hook.respondWith({
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      body: Buffer.from('definitely not gzip data'),
    });
    const { result } = await sender().post(hook.urlFor('/gz'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: true, statusCode: 200, error: null });
    const [received] = await hook.waitForRequests(1);
    expect(received.headers['accept-encoding']).toBeUndefined();
  });
});

describe('createHttpSender: receiver failures', () => {
  it.each([500, 404, 429])('reports %i as non_2xx', async (status) => {
    const hook = await receiver();
    hook.respondWith({ status, body: 'nope' });
    const { result } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: status, error: 'non_2xx' });
  });

  it.each([301, 302, 307, 308])('reports %i as redirect and never follows it', async (status) => {
    const target = await receiver();
    const hook = await receiver();
    hook.respondWith({ status, headers: { location: target.urlFor('/elsewhere') } });

    const { result } = await sender().post(hook.urlFor('/moved'), body, svcHeaders);

    expect(result).toMatchObject({ delivered: false, statusCode: status, error: 'redirect' });
    expect(hook.requests.map((r) => r.path)).toEqual(['/moved']);
    expect(target.requests).toHaveLength(0);
    expect(target.connections).toBe(0);
  });

  it('times out on a receiver that never answers', async () => {
    const hook = await receiver();
    hook.respondWith({ hang: true });
    const { result } = await sender().post(hook.urlFor('/slow'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'timeout' });
    await hook.waitForRequests(1);
  });

  it('times out when the body does not finish within the deadline', async () => {
    const hook = await receiver();
    hook.respondWith({ body: 'partial', leaveOpen: true });
    const { result } = await sender().post(hook.urlFor('/trickle'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: 200, error: 'timeout' });
  });

  it('reports a self-signed certificate as tls', async () => {
    const hook = await receiver({ cert: await createSelfSignedCert() });
    const { result } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'tls' });
    expect(hook.requests).toHaveLength(0);
  });

  it('reports a certificate from an untrusted CA as tls', async () => {
    const hook = await receiver();
    const { result } = await sender({ ca: undefined }).post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, error: 'tls' });
    expect(hook.requests).toHaveLength(0);
  });

  it('reports a certificate for another host as tls (IP literal)', async () => {
    const hook = await receiver({ cert: await issueServerCert(ca, ['other.example']) });
    const { result } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, error: 'tls' });
    expect(hook.requests).toHaveLength(0);
  });

  it('reports a certificate for another host as tls (name)', async () => {
    const hook = await receiver({ cert: await issueServerCert(ca, ['other.example', '127.0.0.1']) });
    const dns = tableResolver({ 'hooks.test': ['127.0.0.1'] });
    const { result } = await sender({ resolve: dns.resolve }).post(`https://hooks.test:${hook.port}/`, body, svcHeaders);
    // The certificate covers the address we dial, but not the name in the URL.
    expect(result).toMatchObject({ delivered: false, error: 'tls' });
    expect(hook.requests).toHaveLength(0);
  });

  it('reports an expired certificate as tls', async () => {
    const day = 24 * 60 * 60 * 1000;
    const expired = await issueServerCert(ca, ['127.0.0.1'], {
      notBeforeDate: new Date(Date.now() - 30 * day),
      notAfterDate: new Date(Date.now() - day),
    });
    const hook = await receiver({ cert: expired });
    const { result } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, error: 'tls' });
  });

  it('reports a refused connection as connection', async () => {
    const hook = await receiver();
    const url = hook.urlFor('/gone');
    await hook.close();
    const { result } = await sender().post(url, body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'connection' });
  });

  it('reports a connection closed during the handshake as connection', async () => {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as net.AddressInfo;
    const { result } = await sender().post(`https://127.0.0.1:${port}/`, body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'connection' });
  });

  it('ends at its deadline, as timeout, while the lookup of the host has not answered', async () => {
    let answered = false;
    let answer: (addresses: string[]) => void = () => {};
    const slowDns: Resolver = () =>
      new Promise((resolve) => {
        answer = (addresses) => {
          answered = true;
          resolve(addresses);
        };
      });
    const { result } = await sender({ timeoutMs: 300, resolve: slowDns }).post('https://slow-dns.test/', body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'timeout' });
    expect(answered).toBe(false); // the deadline, not the resolver, ended it
    answer(['127.0.0.1']);
  });

  it('reports a name that does not resolve at dial time as connection', async () => {
    const dns = tableResolver({});
    const { result } = await sender({ resolve: dns.resolve }).post('https://nowhere.test/', body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'connection' });
    expect(dns.calls).toEqual(['nowhere.test']);
  });
});

describe('createHttpSender: address policy at dial time', () => {
  it.each([
    ['an IPv4 literal', (port: number) => `https://127.0.0.1:${port}/`],
    ['an IPv4-mapped IPv6 literal', (port: number) => `https://[::ffff:127.0.0.1]:${port}/`],
    ['an IPv4-compatible IPv6 literal', (port: number) => `https://[::7f00:1]:${port}/`],
    ['the unspecified address', (port: number) => `https://0.0.0.0:${port}/`],
  ])('refuses loopback as %s when no CIDR allows it', async (_name, urlFor) => {
    const hook = await receiver();
    const { result } = await sender({ policy: strict }).post(urlFor(hook.port), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'blocked_address' });
    expect(hook.requests).toHaveLength(0);
    expect(hook.connections).toBe(0);
  });

  it('refuses a name resolving to loopback when no CIDR allows it', async () => {
    const hook = await receiver();
    const dns = tableResolver({ localhost: ['127.0.0.1'] });
    const { result } = await sender({ policy: strict, resolve: dns.resolve }).post(
      hook.urlFor('/').replace('127.0.0.1', 'localhost'),
      body,
      svcHeaders,
    );
    expect(result.error).toBe('blocked_address');
    expect(hook.connections).toBe(0);
  });

  it('refuses a DNS-rebinding name that passed the registration check', async () => {
    const hook = await receiver();
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    const calls: string[] = [];
    const rebinding: Resolver = async (hostname) => {
      calls.push(hostname);
      return answers.shift() ?? ['127.0.0.1'];
    };
    const url = `https://rebind.test:${hook.port}/`;

    await expect(checkWebhookUrl(url, strict, rebinding)).resolves.toBeInstanceOf(URL);
    const { result } = await sender({ policy: strict, resolve: rebinding }).post(url, body, svcHeaders);

    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'blocked_address' });
    expect(calls).toEqual(['rebind.test', 'rebind.test']); // registration, then exactly one at dial
    expect(hook.connections).toBe(0);
  });

  it.each(['http://127.0.0.1:1/', 'ftp://127.0.0.1/', 'https://user:pass@127.0.0.1/', 'not a url'])(
    'refuses %s before any network activity',
    async (url) => {
      const { result } = await sender().post(url, body, svcHeaders);
      expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'blocked_address' });
    },
  );
});

describe('createHttpSender: what was sent and what came back', () => {
  it('says what it sent: the URL, the headers as sent (lower-case), the exact body; the signature, never the secret', async () => {
    const hook = await receiver();
    const url = hook.urlFor('/sent?x=1');
    const { request } = await sender().post(url, body, svcHeaders);
    expect(request).toEqual({
      url,
      headers: {
        'svc-event': 'item.added',
        'svc-signature': signPayload(body, secret),
        'svc-delivery': 'dlv_test1',
        'svc-webhook': 'wh_test1',
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
      },
      body,
    });
    const [received] = await hook.waitForRequests(1);
    for (const [name, value] of Object.entries(request.headers)) expect(received.headers[name], name).toBe(value);
    expect(received.rawBody.toString('utf8')).toBe(request.body);
    expect(JSON.stringify(request)).not.toContain(secret);
  });

  it("keeps a 2xx's status, its headers in the order received (lower-case), and its body as text", async () => {
    const hook = await receiver();
    hook.respondWith({ status: 202, headers: { 'X-Zeta': 'last letter', 'Content-Type': 'text/plain', 'X-Alpha': 'a' }, body: 'accepted' });
    const { result, response } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: true, statusCode: 202 });
    expect(response).toMatchObject({ statusCode: 202, body: 'accepted', bodyTruncated: false });
    expect(Object.keys(response!.headers).slice(0, 3)).toEqual(['x-zeta', 'content-type', 'x-alpha']);
    expect(response!.headers['x-zeta']).toBe('last letter');
    expect(Object.keys(response!.headers).filter((name) => name !== name.toLowerCase())).toEqual([]);
  });

  it("keeps what a failing receiver said, and a redirect's Location", async () => {
    const hook = await receiver();
    hook.respondWith({ status: 503, headers: { 'retry-after': '120' }, body: '{"error":"database down"}' });
    const failed = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(failed.result).toMatchObject({ delivered: false, statusCode: 503, error: 'non_2xx' });
    expect(failed.response).toMatchObject({ statusCode: 503, body: '{"error":"database down"}', bodyTruncated: false });
    expect(failed.response!.headers['retry-after']).toBe('120');

    hook.respondWith({ status: 301, headers: { location: 'https://elsewhere.test/' } });
    const moved = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(moved.result.error).toBe('redirect');
    expect(moved.response).toMatchObject({ statusCode: 301, headers: { location: 'https://elsewhere.test/' }, body: '' });
  });

  it('keeps the first 4 KiB of a longer body, never a character cut in two by the limit', async () => {
    const hook = await receiver();
    // 4095 bytes of 'a', then 'é' (2 bytes) across the limit, then more.
    hook.respondWith({ status: 500, body: `${'a'.repeat(KEPT_BODY_BYTES - 1)}é${'b'.repeat(10_000)}` });
    const { result, response } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result.error).toBe('non_2xx');
    expect(response!.body).toBe('a'.repeat(KEPT_BODY_BYTES - 1));
    expect(response!.bodyTruncated).toBe(true);

    hook.respondWith({ body: 'c'.repeat(KEPT_BODY_BYTES) });
    const exact = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(exact.response).toMatchObject({ body: 'c'.repeat(KEPT_BODY_BYTES), bodyTruncated: false });
  });

  it('decodes the body as UTF-8, replacing invalid bytes and NUL, keeping a byte order mark', async () => {
    const hook = await receiver();
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('ok '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(' nul:'),
      Buffer.from([0x00]),
      Buffer.from(' ünï'),
      Buffer.from([0xc3]), // a character the body ends in the middle of
    ]);
    hook.respondWith({ status: 400, body: bytes });
    const { response } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(response).toMatchObject({ body: '\uFEFFok \uFFFD\uFFFD nul:\uFFFD ünï\uFFFD', bodyTruncated: false });
  });

  it('keeps headers to 4 KiB in all: one that does not fit is left out whole, smaller ones after it are kept', async () => {
    const hook = await receiver();
    hook.respondWith({
      headers: {
        'x-first': 'kept',
        'x-huge': 'h'.repeat(KEPT_HEADER_BYTES),
        'x-after': 'kept too',
        // Node writes a header's characters as bytes: these are the UTF-8 bytes of the text.
        'x-utf8': Buffer.from('ünïcödé').toString('latin1'),
        'x-latin1': 'caf\u00e9',
      },
      body: 'ok',
    });
    const { response } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    const headers = response!.headers;
    expect(headers).toMatchObject({ 'x-first': 'kept', 'x-after': 'kept too', 'x-utf8': 'ünïcödé', 'x-latin1': 'caf\uFFFD' });
    expect(headers['x-huge']).toBeUndefined();
    const size = Object.entries(headers).reduce((sum, [name, value]) => sum + Buffer.byteLength(`${name}: ${value}\r\n`), 0);
    expect(size).toBeLessThanOrEqual(KEPT_HEADER_BYTES);
  });

  it("keeps a failing receiver's body up to the deadline and no further, its class unchanged", async () => {
    const hook = await receiver();
    hook.respondWith({ status: 500, body: 'partial', leaveOpen: true });
    const { result, response } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ delivered: false, statusCode: 500, error: 'non_2xx' });
    expect(response).toMatchObject({ statusCode: 500, body: 'partial', bodyTruncated: true });
  });

  it('keeps what arrived of a 2xx whose body the deadline cut off', async () => {
    const hook = await receiver();
    hook.respondWith({ body: 'partial', leaveOpen: true });
    const { result, response } = await sender().post(hook.urlFor('/'), body, svcHeaders);
    expect(result).toMatchObject({ statusCode: 200, error: 'timeout' });
    expect(response).toMatchObject({ statusCode: 200, body: 'partial', bodyTruncated: true });
  });

  it('has no response when none arrived: time-out before the headers, TLS, connection, blocked address', async () => {
    const silent = await receiver();
    silent.respondWith({ hang: true });
    const untrusted = await receiver({ cert: await createSelfSignedCert() });
    const closed = await receiver();
    const closedUrl = closed.urlFor('/');
    await closed.close();
    for (const [url, error, http] of [
      [silent.urlFor('/'), 'timeout', sender({ timeoutMs: 300 })],
      [untrusted.urlFor('/'), 'tls', sender()],
      [closedUrl, 'connection', sender()],
      [silent.urlFor('/'), 'blocked_address', sender({ policy: strict })],
    ] as const) {
      const exchange = await http.post(url, body, svcHeaders);
      expect(exchange.result.error, error).toBe(error);
      expect(exchange.response, error).toBeNull();
      expect(exchange.request, error).toMatchObject({ url, body });
    }
  });
});
