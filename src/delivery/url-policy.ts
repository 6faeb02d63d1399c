// SSRF policy for webhook URLs (docs/api.md, "Decisions"). Pure: the caller supplies the resolver,
// so registration (API) and every dial (sender) apply exactly the same rules.
import { promises as dns } from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type UrlRejectionReason = 'scheme' | 'credentials' | 'blocked_address' | 'invalid_host';

export class UrlNotAllowedError extends Error {
  override readonly name = 'UrlNotAllowedError';

  constructor(
    readonly reason: UrlRejectionReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};

export interface AddressPolicy {
  isAllowed(address: string): boolean;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

const NAT64_LOCAL_USE = ipaddr.parseCIDR('64:ff9b:1::/48');
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16');

/**
 * The IPv4 address an IPv6 address carries, if it is one of the forms that can reach an
 * IPv4 host: anything in ::/8 (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, and
 * forms like ::7f00:1 or ::5efe:7f00:1 that ipaddr.js calls "unicast") carries it in its
 * last 32 bits, 6to4 2002::/16 in bits 16-47. Null for any other address.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  // 64:ff9b:1::/48 lies inside ::/8 but is a local-use NAT64 prefix: leave it to range(), which refuses it.
  if (bytes[0] === 0 && !address.match(NAT64_LOCAL_USE)) {
    return new ipaddr.IPv4(bytes.slice(12, 16));
  }
  if (address.match(SIX_TO_FOUR)) {
    return new ipaddr.IPv4(bytes.slice(2, 6));
  }
  return null;
}

function parseCidr(cidr: string): Cidr {
  try {
    return ipaddr.parseCIDR(cidr.trim());
  } catch {
    throw new Error(`Invalid CIDR "${cidr}": expected an address and a prefix length, like 127.0.0.0/8 or ::1/128`);
  }
}

/**
 * An address is allowed iff an allowed CIDR covers it (or the IPv4 address it carries),
 * or it is a plain public unicast address.
 */
export function createAddressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
  const allowed = allowedCidrs.map(parseCidr);
  const inAllowList = (address: Address): boolean =>
    allowed.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));

  return {
    isAllowed(raw: string): boolean {
      let address: Address;
      try {
        address = ipaddr.parse(stripBrackets(raw));
      } catch {
        return false;
      }
      if (inAllowList(address)) return true;
      if (address.kind() === 'ipv4') return address.range() === 'unicast';

      const v4 = embeddedIPv4(address as ipaddr.IPv6);
      if (v4) return inAllowList(v4) || v4.range() === 'unicast';
      return address.range() === 'unicast';
    },
  };
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Parses a webhook URL and applies the rules that need no DNS. `.href` is its normalised identity. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlNotAllowedError('invalid_host', 'The URL could not be parsed');
  }
  if (url.protocol !== 'https:') {
    throw new UrlNotAllowedError('scheme', 'The URL must use https');
  }
  if (url.username !== '' || url.password !== '') {
    throw new UrlNotAllowedError('credentials', 'The URL must not contain a user name or password');
  }
  if (url.hostname === '') {
    throw new UrlNotAllowedError('invalid_host', 'The URL has no host');
  }
  return url;
}

/**
 * Judges an IP literal directly, otherwise resolves the name once and refuses it if any
 * answer is blocked. Returns the checked addresses: connect to one of these, never look
 * the name up again (DNS rebinding).
 */
export async function resolveAllowedAddresses(hostname: string, policy: AddressPolicy, resolve: Resolver): Promise<string[]> {
  const host = stripBrackets(hostname);
  let addresses: string[];
  if (net.isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new UrlNotAllowedError('invalid_host', `The host ${host} could not be resolved`, { cause: err });
    }
    if (addresses.length === 0) {
      throw new UrlNotAllowedError('invalid_host', `The host ${host} has no address`);
    }
  }
  if (!addresses.every((address) => policy.isAllowed(address))) {
    // The blocked address itself stays out of the message: it may describe our own network.
    const what = net.isIP(host) !== 0 ? `The address ${host} is` : `The host ${host} resolves to an address that is`;
    throw new UrlNotAllowedError('blocked_address', `${what} not allowed (private, loopback or otherwise reserved)`);
  }
  return addresses;
}

export async function checkWebhookUrl(raw: string, policy: AddressPolicy, resolve: Resolver): Promise<URL> {
  const url = parseWebhookUrl(raw);
  await resolveAllowedAddresses(url.hostname, policy, resolve);
  return url;
}
