// A network namespace for the flooding client (BENCH_FLOOD_NETNS=1): its own loopback and
// addresses, reaching the service over a veth pair as a client on another machine reaches it
// over a network, not over the service's loopback. Needs root and `ip` (iproute2).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { log } from './config';
import * as stack from './stack';

export interface NetworkNamespace {
  name: string;
  /** The host's end of the pair: where the client reaches the service (which listens on every address). */
  hostAddress: string;
  /** The client's end, inside the namespace. */
  clientAddress: string;
  /** Deletes the namespace and the pair (once; also on Ctrl-C). */
  remove(): Promise<void>;
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A /30 of 10.254.0.0/16 in a /24 that no interface of the host uses: its network address's four octets. */
function freeSubnet(): number[] {
  const used = ip('-4', '-o', 'addr', 'show');
  for (let attempt = 0; attempt < 20; attempt++) {
    const [a, b] = randomBytes(2);
    if (!used.includes(`10.254.${a}.`)) return [10, 254, a, b & 0xfc];
  }
  throw new Error('no free /30 in 10.254.0.0/16');
}

/** Makes the namespace `webhooks-bench-<tag>` and its veth pair, the host's end .1 and the client's .2 of a private /30. */
export function makeNetworkNamespace(): NetworkNamespace {
  const tag = randomBytes(3).toString('hex');
  const name = `webhooks-bench-${tag}`;
  const [hostLink, clientLink] = [`wbf${tag}h`, `wbf${tag}n`];
  const network = freeSubnet();
  const address = (host: number) => `${network.slice(0, 3).join('.')}.${network[3] + host}`;
  const [hostAddress, clientAddress] = [address(1), address(2)];
  ip('netns', 'add', name);
  const remove = stack.onStop(`network namespace ${name}`, () => {
    for (const args of [
      ['netns', 'del', name],
      // Deleting the namespace deletes the pair, but not always before we look.
      ['link', 'del', hostLink],
    ])
      try {
        ip(...args);
      } catch {
        // gone already
      }
  });
  try {
    ip('link', 'add', hostLink, 'type', 'veth', 'peer', 'name', clientLink);
    ip('link', 'set', clientLink, 'netns', name);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', hostLink);
    ip('link', 'set', hostLink, 'up');
    ip('-n', name, 'addr', 'add', `${clientAddress}/30`, 'dev', clientLink);
    ip('-n', name, 'link', 'set', clientLink, 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
  } catch (error) {
    void remove();
    throw error;
  }
  log(`network namespace ${name}: the client at ${clientAddress}, the service at ${hostAddress}`);
  return { name, hostAddress, clientAddress, remove };
}
