// SSRF (issue 6, item 3): every blocked form is refused at registration, through the real
// API (400 URL_NOT_ALLOWED with its reason, nothing stored, no ping), and at the dial,
// through the sender with the same policy; and a registered webhook whose name starts to
// answer a blocked address (or rebinds between the check and the connection) is refused
// at delivery time without any connection. Host names are answered by an injectable
// resolver (./support/dns.ts), which the API's check and the worker's sender share.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpSender, type HttpSender } from '../../src/delivery/sender';
import { createAddressPolicy } from '../../src/delivery/url-policy';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';
import { issueServerCert } from '../../scripts/lib/tls';
import { createTestDns, type TestDns } from './support/dns';
import { httpBehaviour, startHostileServer, type Behaviour, type HostileServer } from './support/hostile-server';
import { recordScenario } from './support/scenarios';

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';

// ---- a stack with WEBHOOK_ALLOWED_CIDRS empty: nothing private, not even loopback ----

let strict: TestStack;
let strictDns: TestDns;
let strictSender: HttpSender;
/** Listens on 127.0.0.1: every loopback form below carries its port, so a dial would show here. */
let witness: Receiver;

beforeAll(async () => {
  strictDns = createTestDns({
    localhost: ['127.0.0.1', '::1'],
    'loopback.ssrf.test': ['127.0.0.1'],
    'private.ssrf.test': ['10.0.0.1'],
    'metadata.ssrf.test': ['169.254.169.254'],
    'ula.ssrf.test': ['fd00::1'],
    'mapped.ssrf.test': ['::ffff:127.0.0.1'],
    'nat64.ssrf.test': ['64:ff9b::a00:1'],
    'mixed.ssrf.test': [PUBLIC_V4, '10.0.0.1'],
    'mixed6.ssrf.test': [PUBLIC_V6, 'fe80::1'],
    'mixed-last.ssrf.test': [PUBLIC_V4, PUBLIC_V6, '127.0.0.1'],
  });
  strict = await startTestStack({ WEBHOOK_ALLOWED_CIDRS: '' }, { resolve: strictDns.resolve });
  witness = await strict.startReceiver();
  strictSender = createHttpSender({
    timeoutMs: 2000,
    policy: createAddressPolicy([]),
    resolve: strictDns.resolve,
    ca: [strict.ca.cert],
    userAgent: 'svc-webhooks/faults',
  });
});

afterAll(async () => {
  await strictSender?.close();
  await strict?.stop();
});

/** Forms of blocked addresses, grouped as the table shows them. `P` is replaced by the witness's port. */
const BLOCKED_FORMS: Array<[group: string, urls: string[]]> = [
  ['IPv4 literal, decimal', ['https://2130706433:P/', 'https://167772161:P/', 'https://2852039166:P/']],
  ['IPv4 literal, octal', ['https://0177.0.0.1:P/', 'https://012.0.0.1:P/', 'https://0251.0376.0251.0376:P/']],
  ['IPv4 literal, hex', ['https://0x7f000001:P/', 'https://0x7f.0.0.1:P/', 'https://0xa000001:P/', 'https://0xa9.0xfe.0xa9.0xfe:P/']],
  ['IPv4 literal, short and full-width', ['https://127.1:P/', 'https://10.1:P/', 'https://192.168.1:P/', 'https://１２７.０.０.１:P/']],
  [
    'IPv4-mapped IPv6',
    ['https://[::ffff:127.0.0.1]:P/', 'https://[::ffff:a00:1]:P/', 'https://[::ffff:169.254.169.254]:P/', 'https://[::ffff:0:7f00:1]:P/'],
  ],
  ['IPv4-compatible IPv6 and other ::/8 forms', ['https://[::127.0.0.1]:P/', 'https://[::a00:1]:P/', 'https://[::5efe:7f00:1]:P/']],
  [
    'NAT64 forms of private addresses',
    ['https://[64:ff9b::127.0.0.1]:P/', 'https://[64:ff9b::a00:1]:P/', 'https://[64:ff9b::a9fe:a9fe]:P/', 'https://[64:ff9b:1::a00:1]:P/'],
  ],
  ['6to4 forms of private addresses', ['https://[2002:7f00:1::1]:P/', 'https://[2002:a00:1::]:P/', 'https://[2002:a9fe:a9fe::1]:P/']],
  ['unspecified: 0.0.0.0 and [::]', ['https://0.0.0.0:P/', 'https://0:P/', 'https://[::]:P/']],
  [
    'link-local and metadata',
    ['https://169.254.169.254:P/', 'https://[fe80::1]:P/', 'https://[fd00:ec2::254]:P/', 'https://100.100.100.200:P/'],
  ],
  ['unique-local IPv6', ['https://[fc00::1]:P/', 'https://[fd12:3456:789a::1]:P/']],
  [
    'private, CGNAT, multicast, broadcast, reserved',
    [
      'https://10.0.0.1:P/',
      'https://172.16.0.1:P/',
      'https://192.168.0.1:P/',
      'https://100.64.0.1:P/',
      'https://224.0.0.1:P/',
      'https://[ff02::1]:P/',
      'https://255.255.255.255:P/',
      'https://240.0.0.1:P/',
    ],
  ],
  [
    'names resolving to a blocked address',
    [
      'https://loopback.ssrf.test:P/',
      'https://private.ssrf.test:P/',
      'https://metadata.ssrf.test:P/',
      'https://ula.ssrf.test:P/',
      'https://mapped.ssrf.test:P/',
      'https://nat64.ssrf.test:P/',
    ],
  ],
  [
    'names resolving to public and blocked addresses',
    ['https://mixed.ssrf.test:P/', 'https://mixed6.ssrf.test:P/', 'https://mixed-last.ssrf.test:P/'],
  ],
  ['WEBHOOK_ALLOWED_CIDRS empty: loopback itself', ['https://127.0.0.1:P/', 'https://[::1]:P/', 'https://localhost:P/']],
];

async function accountRegistrations(stack: TestStack, accountId: string): Promise<number> {
  const [row] = await stack.service.sql<
    { count: number }[]
  >`SELECT count(*)::int AS count FROM registrations WHERE account_id = ${accountId}`;
  return row.count;
}

describe('registration and dial refuse every blocked form (WEBHOOK_ALLOWED_CIDRS empty)', () => {
  it.for(BLOCKED_FORMS)('%s', async ([group, templates], { task }) => {
    const row = recordScenario(task, { scenario: `refused: ${group}`, requests: 0, fiveXx: 0 });
    const urls = templates.map((template) => template.replace(':P/', `:${witness.port}/`));
    const account = await strict.createAccount();
    const refusals: string[] = [];
    for (const url of urls) {
      const response = await strict.request('POST', '/v3/webhooks', { token: account.token, body: { url } });
      const { result: dial } = await strictSender.post(url, '{}', {});
      row.requests! += 2;
      if (response.status >= 500) row.fiveXx! += 1;
      refusals.push(`API ${response.status} ${response.body?.error?.reason}, dial ${dial.error}`);
      expect(response.status, url).toBe(400);
      expect(response.body.error, url).toEqual({ code: 'URL_NOT_ALLOWED', reason: 'blocked_address', message: expect.any(String) });
      const hostname = new URL(url).hostname;
      if (net.isIP(hostname.replace(/^\[|\]$/g, '')) === 0) {
        // A name's answers stay out of the answer: they may describe our own network.
        for (const address of await strictDns.resolve(hostname)) expect(response.body.error.message, url).not.toContain(address);
      }
      expect(dial, url).toMatchObject({ delivered: false, statusCode: null, error: 'blocked_address' });
    }
    // Nothing stored, no registration begun, nothing dialled.
    expect((await strict.request('GET', '/v3/webhooks', { token: account.token })).body.data).toEqual([]);
    expect(await accountRegistrations(strict, account.id)).toBe(0);
    expect(witness.connections).toBe(0);
    row.outcome = [...new Set(refusals)].map((refusal) => `${refusal} ×${refusals.filter((r) => r === refusal).length}`).join(', ');
    row.note = `${urls.length} URLs; nothing stored, no ping, no connection`;
  });

  it('gives the other reasons: scheme, credentials, invalid_host', async ({ task }) => {
    const row = recordScenario(task, {
      scenario: 'refused with their own reasons: scheme, credentials, invalid_host',
      requests: 0,
      fiveXx: 0,
    });
    const account = await strict.createAccount();
    const cases: Array<[string, string]> = [
      [`http://127.0.0.1:${witness.port}/`, 'scheme'],
      ['ftp://example.com/', 'scheme'],
      ['https://user:secret@example.com/', 'credentials'],
      ['https://nowhere.ssrf.test/', 'invalid_host'],
      ['https://exa mple.com/', 'invalid_host'],
    ];
    for (const [url, reason] of cases) {
      const response = await strict.request('POST', '/v3/webhooks', { token: account.token, body: { url } });
      row.requests! += 1;
      if (response.status >= 500) row.fiveXx! += 1;
      expect(response.status, url).toBe(400);
      expect(response.body.error, url).toMatchObject({ code: 'URL_NOT_ALLOWED', reason });
    }
    expect((await strict.request('GET', '/v3/webhooks', { token: account.token })).body.data).toEqual([]);
    expect(witness.connections).toBe(0);
    row.outcome = cases.map(([, reason]) => reason).join(', ');
  });
});

// ---- a stack that allows 127.0.0.0/8 only: webhooks on names that later move ----

let allowing: TestStack;
let dns: TestDns;
let server: HostileServer;
let behaving: Behaviour;
const names = [
  'private.moves.test',
  'metadata.moves.test',
  'mixed.moves.test',
  'mapped.moves.test',
  'ula.moves.test',
  'v6-loopback.moves.test',
  'rebind.moves.test',
  'rebind-ping.moves.test',
];

describe('delivery time: a registered name that starts to answer a blocked address', () => {
  beforeAll(async () => {
    dns = createTestDns();
    allowing = await startTestStack({ WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' }, { resolve: dns.resolve });
    const cert = await issueServerCert(allowing.ca, names);
    behaving = httpBehaviour({ cert: cert.cert, key: cert.key }, (_req, res) => res.end('ok'));
    server = await startHostileServer(behaving);
  });
  afterAll(async () => {
    await server?.close();
    await allowing?.stop();
  });

  /** A webhook at https://NAME:PORT/ whose name answers 127.0.0.1, with a list and one delivered write. */
  async function registeredOn(name: string) {
    dns.set(name, ['127.0.0.1']);
    const owner = await allowing.createAccount();
    const webhook = await allowing.registerWebhook(owner.token, `https://${name}:${server.port}/hook`);
    const listId = `ssrf-${randomBytes(6).toString('hex')}`;
    expect((await allowing.putList(listId, owner.id)).status).toBe(201);
    await allowing.reportWrite(listId, 'before');
    const deliveries = async () =>
      (await allowing.request('GET', `/v3/webhooks/${webhook.id}/deliveries`, { token: owner.token })).body.data;
    expect(await deliveries()).toMatchObject([{ cursor: 1, outcome: 'delivered', error: null }]);
    return { owner, webhook, listId, deliveries };
  }

  /** Drops the kept-alive connections, so that the next delivery must dial (and look up) again. */
  function freshConnections() {
    server.behave(behaving);
    server.resetStats();
  }

  it.for([
    ['private.moves.test', ['10.0.0.1']],
    ['metadata.moves.test', ['169.254.169.254']],
    ['mixed.moves.test', ['127.0.0.1', '10.0.0.1']],
    ['mapped.moves.test', ['::ffff:10.0.0.1']],
    ['ula.moves.test', ['fd00::1']],
    ['v6-loopback.moves.test', ['::1']],
  ] as const)('%s moves to %s', async ([name, blocked], { task }) => {
    const row = recordScenario(task, {
      scenario: `delivery: name moves from 127.0.0.1 to ${blocked.join(' + ')}`,
      writesAccepted: 0,
      writesLost: 0,
    });
    const { deliveries, listId } = await registeredOn(name);
    row.writesAccepted = 1;
    dns.set(name, [...blocked]);
    freshConnections();
    const lookups = dns.callsFor(name);

    await allowing.reportWrite(listId, 'after');
    row.writesAccepted = 2;
    const [latest] = await deliveries();
    row.outcome = latest?.error ?? 'delivered';
    expect(latest).toMatchObject({ kind: 'event', cursor: 2, outcome: 'failed', statusCode: null, error: 'blocked_address' });
    expect(dns.callsFor(name)).toBe(lookups + 1); // looked up once, at the dial
    expect(server.stats.connections).toBe(0);
    row.note = 'looked up once at the dial; no connection';
  });

  it('DNS rebinding between the registration check and the ping: 422, nothing stored, no connection', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'rebinding: check answers 127.0.0.1, the ping dial 10.0.0.1' });
    const name = 'rebind-ping.moves.test';
    dns.sequence(name, [['127.0.0.1'], ['10.0.0.1']]);
    freshConnections();
    const owner = await allowing.createAccount();
    const response = await allowing.request('POST', '/v3/webhooks', {
      token: owner.token,
      body: { url: `https://${name}:${server.port}/hook` },
    });
    row.outcome = `${response.status} ${response.body.error?.code} ${response.body.error?.reason}`;
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({ code: 'WEBHOOK_UNREACHABLE', reason: 'blocked_address' });
    expect(dns.callsFor(name)).toBe(2); // the API's check, then the dial: the dial used its own answer
    expect(server.stats.connections).toBe(0);
    expect((await allowing.request('GET', '/v3/webhooks', { token: owner.token })).body.data).toEqual([]);
    row.note = 'two lookups (check, dial); nothing stored; no connection';
  });

  it('DNS rebinding between registration and delivery: blocked_address, nothing connects', async ({ task }) => {
    const row = recordScenario(task, {
      scenario: 'rebinding: 127.0.0.1 at registration, 10.0.0.1 at delivery',
      writesAccepted: 0,
      writesLost: 0,
    });
    const name = 'rebind.moves.test';
    // The API's check and the ping's dial get 127.0.0.1; every later lookup 10.0.0.1.
    dns.sequence(name, [['127.0.0.1'], ['127.0.0.1'], ['10.0.0.1']]);
    const owner = await allowing.createAccount();
    const webhook = await allowing.registerWebhook(owner.token, `https://${name}:${server.port}/hook`);
    expect(dns.callsFor(name)).toBe(2);
    const listId = `ssrf-${randomBytes(6).toString('hex')}`;
    expect((await allowing.putList(listId, owner.id)).status).toBe(201);
    freshConnections();

    await allowing.reportWrite(listId, 'rebound');
    row.writesAccepted = 1;
    const [delivery] = (await allowing.request('GET', `/v3/webhooks/${webhook.id}/deliveries`, { token: owner.token })).body.data;
    row.outcome = delivery?.error ?? 'delivered';
    expect(delivery).toMatchObject({ kind: 'event', cursor: 1, outcome: 'failed', statusCode: null, error: 'blocked_address' });
    expect(dns.callsFor(name)).toBe(3); // one lookup per dial, never a second one for the same dial
    expect(server.stats.connections).toBe(0);
    row.note = 'three lookups (check, ping dial, delivery dial); no connection';
  });
});
