import { describe, expect, it } from 'vitest';
import {
  type Resolver,
  UrlNotAllowedError,
  checkWebhookUrl,
  createAddressPolicy,
  parseWebhookUrl,
  resolveAllowedAddresses,
} from '../../src/delivery/url-policy';

const strict = createAddressPolicy([]);
const loopbackAllowed = createAddressPolicy(['127.0.0.0/8', '::1/128']);

/** A resolver for names that must never be looked up (IP literals). */
const noLookup: Resolver = async (hostname) => {
  throw new Error(`unexpected lookup of ${hostname}`);
};

function fixedResolver(answers: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const found = answers[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
}

async function rejection(promise: Promise<unknown>): Promise<UrlNotAllowedError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UrlNotAllowedError);
  return err as UrlNotAllowedError;
}

describe('createAddressPolicy', () => {
  const blocked: Array<[string, string]> = [
    ['127.0.0.1', 'IPv4 loopback'],
    ['127.255.255.254', 'IPv4 loopback, end of /8'],
    ['10.1.2.3', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12, end'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network 0/8'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved 240/4'],
    ['192.0.2.1', 'documentation TEST-NET-1'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local fd'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with zone'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::7f00:1', 'IPv4-compatible loopback, hex form (ipaddr.js says unicast)'],
    ['::5efe:7f00:1', 'ISATAP-style loopback in ::/8 (ipaddr.js says unicast)'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['64:ff9b:1::808:808', 'local-use NAT64 64:ff9b:1::/48'],
    ['2002:a00:1::', '6to4 of 10.0.0.1'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['100::1', 'discard-only'],
    ['not-an-ip', 'not an address'],
  ];
  it.each(blocked)('blocks %s (%s)', (address) => {
    expect(strict.isAllowed(address)).toBe(false);
  });

  const allowed: Array<[string, string]> = [
    ['8.8.8.8', 'public IPv4'],
    ['93.184.216.34', 'public IPv4'],
    ['2606:4700::1111', 'public IPv6'],
    ['2a00:1450:4001:80b::200e', 'public IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['64:ff9b::8.8.8.8', 'NAT64 of a public address'],
    ['2002:808:808::1', '6to4 of a public address'],
  ];
  it.each(allowed)('allows %s (%s)', (address) => {
    expect(strict.isAllowed(address)).toBe(true);
  });

  it('opens exactly the allowed CIDRs, including IPv4 carried in IPv6', () => {
    expect(loopbackAllowed.isAllowed('127.0.0.1')).toBe(true);
    expect(loopbackAllowed.isAllowed('127.8.9.10')).toBe(true);
    expect(loopbackAllowed.isAllowed('::1')).toBe(true);
    expect(loopbackAllowed.isAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(loopbackAllowed.isAllowed('::7f00:1')).toBe(true);
    expect(loopbackAllowed.isAllowed('8.8.8.8')).toBe(true);
    // Still blocked: not covered by the allow list.
    expect(loopbackAllowed.isAllowed('10.0.0.1')).toBe(false);
    expect(loopbackAllowed.isAllowed('::2')).toBe(false);
    expect(loopbackAllowed.isAllowed('169.254.169.254')).toBe(false);
    expect(loopbackAllowed.isAllowed('fe80::1')).toBe(false);
  });

  it('accepts IPv6 CIDRs for IPv6 ranges', () => {
    const policy = createAddressPolicy(['fd00::/8']);
    expect(policy.isAllowed('fd00::1234')).toBe(true);
    expect(policy.isAllowed('fc00::1')).toBe(false);
  });

  it.each(['', '127.0.0.1', '127.0.0.0/33', '::1/129', 'localhost/8', '10.0.0.0/8,'])(
    'throws a clear error for the malformed CIDR %j',
    (cidr) => {
      expect(() => createAddressPolicy([cidr])).toThrow(/Invalid CIDR/);
    },
  );
});

describe('parseWebhookUrl', () => {
  it('returns the normalised URL', () => {
    expect(parseWebhookUrl('HTTPS://Example.COM:443/hooks?a=1').href).toBe('https://example.com/hooks?a=1');
  });

  it.each([
    ['http://example.com/hook'],
    ['ftp://example.com/hook'],
    ['javascript:alert(1)'],
    ['file:///etc/passwd'],
    ['gopher://example.com/'],
  ])('refuses the scheme of %s', (raw) => {
    expect(() => parseWebhookUrl(raw)).toThrow(expect.objectContaining({ reason: 'scheme' }));
  });

  it.each([['https://user:pass@example.com/'], ['https://user@example.com/'], ['https://:pass@example.com/']])(
    'refuses credentials in %s',
    (raw) => {
      expect(() => parseWebhookUrl(raw)).toThrow(expect.objectContaining({ reason: 'credentials' }));
    },
  );

  it('never puts the credentials in the error message', () => {
    let message = '';
    try {
      parseWebhookUrl('https://user:s3cr3t-value@example.com/');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('s3cr3t-value');
  });

  it.each([['not a url'], ['https://'], ['https://exa mple.com/'], ['']])('refuses %j as invalid_host', (raw) => {
    expect(() => parseWebhookUrl(raw)).toThrow(expect.objectContaining({ reason: 'invalid_host' }));
  });
});

describe('checkWebhookUrl', () => {
  const blockedUrls = [
    'https://127.0.0.1/',
    'https://2130706433/',
    'https://0x7f000001/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::127.0.0.1]/',
    'https://[::7f00:1]/',
    'https://[64:ff9b::a00:1]/',
    'https://[2002:a00:1::]/',
    'https://[fc00::1]/',
    'https://[fe80::1]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://10.0.0.1/',
    'https://172.16.0.1/',
    'https://192.168.0.1/',
  ];
  it.each(blockedUrls)('refuses %s as blocked_address without a lookup', async (raw) => {
    const err = await rejection(checkWebhookUrl(raw, strict, noLookup));
    expect(err.reason).toBe('blocked_address');
  });

  it.each(['https://8.8.8.8/hook', 'https://[2606:4700::1111]/hook', 'https://[64:ff9b::8.8.8.8]/'])(
    'allows the public literal %s without a lookup',
    async (raw) => {
      await expect(checkWebhookUrl(raw, strict, noLookup)).resolves.toBeInstanceOf(URL);
    },
  );

  it('opens loopback with the allow list 127.0.0.0/8,::1/128', async () => {
    for (const raw of ['https://127.0.0.1:8443/', 'https://127.1/', 'https://[::1]/', 'https://[::ffff:127.0.0.1]/']) {
      await expect(checkWebhookUrl(raw, loopbackAllowed, noLookup)).resolves.toBeInstanceOf(URL);
    }
    const err = await rejection(checkWebhookUrl('https://10.0.0.1/', loopbackAllowed, noLookup));
    expect(err.reason).toBe('blocked_address');
  });

  it('allows a name that resolves only to public addresses', async () => {
    const resolve = fixedResolver({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::248'] });
    const url = await checkWebhookUrl('https://hooks.example.com/in', strict, resolve);
    expect(url.href).toBe('https://hooks.example.com/in');
  });

  it('refuses a name when any of its addresses is blocked', async () => {
    const resolve = fixedResolver({ 'mixed.example.com': ['93.184.216.34', '10.0.0.5', '2606:4700::1111'] });
    const err = await rejection(checkWebhookUrl('https://mixed.example.com/', strict, resolve));
    expect(err.reason).toBe('blocked_address');
    expect(err.message).not.toContain('10.0.0.5');
  });

  it('refuses localhost by its addresses', async () => {
    const resolve = fixedResolver({ localhost: ['127.0.0.1', '::1'] });
    const err = await rejection(checkWebhookUrl('https://localhost/', strict, resolve));
    expect(err.reason).toBe('blocked_address');
    await expect(checkWebhookUrl('https://localhost/', loopbackAllowed, resolve)).resolves.toBeInstanceOf(URL);
  });

  it('refuses a name that does not resolve as invalid_host', async () => {
    const err = await rejection(checkWebhookUrl('https://nowhere.invalid/', strict, fixedResolver({})));
    expect(err.reason).toBe('invalid_host');
  });

  it('refuses a name with no answers as invalid_host', async () => {
    const err = await rejection(checkWebhookUrl('https://empty.example.com/', strict, async () => []));
    expect(err.reason).toBe('invalid_host');
  });

  it('checks the scheme before any lookup', async () => {
    const err = await rejection(checkWebhookUrl('http://hooks.example.com/', strict, noLookup));
    expect(err.reason).toBe('scheme');
  });
});

describe('resolveAllowedAddresses', () => {
  it('resolves once and returns the checked addresses', async () => {
    const calls: string[] = [];
    const resolve: Resolver = async (hostname) => {
      calls.push(hostname);
      return ['8.8.8.8', '8.8.4.4'];
    };
    await expect(resolveAllowedAddresses('dns.example', strict, resolve)).resolves.toEqual(['8.8.8.8', '8.8.4.4']);
    expect(calls).toEqual(['dns.example']);
  });

  it('judges bracketed and bare IPv6 literals directly', async () => {
    await expect(resolveAllowedAddresses('[::1]', loopbackAllowed, noLookup)).resolves.toEqual(['::1']);
    await expect(resolveAllowedAddresses('::1', loopbackAllowed, noLookup)).resolves.toEqual(['::1']);
    const err = await rejection(resolveAllowedAddresses('[::1]', strict, noLookup));
    expect(err.reason).toBe('blocked_address');
  });
});
