// The flooding client of split-noisy-neighbour, standing for a client on another machine: the
// flooder (flooder.ts) in a cpu cgroup of its own with a CPU quota, and with
// BENCH_FLOOD_NETNS=1 in a network namespace of its own.
import { type FlooderApi } from '../flooder';
import { tryCpuGroup, type Throttling } from './cgroups';
import { forkChild } from './children';
import { CONFIG, log } from './config';
import { rpcClient, type Rpc } from './ipc';
import { makeNetworkNamespace } from './netns';
import * as stack from './stack';
import { type Context, type FloodClientSetup } from './types';

export interface FloodClient {
  rpc: Rpc<FlooderApi>;
  /** Where the flooder reaches the service. */
  host: string;
  port: number;
  setup: FloodClientSetup;
  /** Starts counting the quota's throttling: returns what it held back since (null when uncapped). */
  throttlingSince(): () => Throttling | null;
  stop(): Promise<void>;
}

/** Forks the flooder, capped (or, where the machine cannot cap it, flagged as not), and checks it reaches the service at `baseUrl`. */
export async function startFloodClient(ctx: Context, baseUrl: string): Promise<FloodClient> {
  const { cpuCores, netns: wantNetns } = CONFIG.noisyNeighbour.flood;
  const url = new URL(baseUrl);
  const namespace = wantNetns ? makeNetworkNamespace() : null;
  const { group, missing } = tryCpuGroup('webhooks-bench-flood', { cores: cpuCores }, `the flooding client's CPU cap of ${cpuCores} cores`);
  const child = forkChild('flooder', 'flooder.js', {}, namespace ? ['ip', 'netns', 'exec', namespace.name] : []);
  const stop = async () => {
    ctx.sampler.removeGroup('flood');
    await stack.terminate(child, 3_000);
    await group?.remove();
    await namespace?.remove();
  };
  try {
    group?.add(child.pid!);
    ctx.sampler.addGroup('flood', () => [child.pid!]);
    const rpc = rpcClient<FlooderApi>(child);
    // The service listens on every address: from the namespace, at the host's end of the pair.
    const host = namespace?.hostAddress ?? url.hostname;
    const port = Number(url.port);
    await rpc('reach', { host, port, timeoutMs: 5_000 });
    const setup: FloodClientSetup = {
      cpuCap: group ? { cores: cpuCores } : null,
      uncappedWhy: missing,
      netns: namespace && { name: namespace.name, clientAddress: namespace.clientAddress, serviceAddress: namespace.hostAddress },
    };
    log(
      `flooding client: pid ${child.pid}, ${group ? `capped at ${cpuCores} cores in ${group.dir}` : 'UNCAPPED'}, ` +
        `${namespace ? `in network namespace ${namespace.name}` : 'on the loopback'}, the service at ${host}:${port}`,
    );
    const throttlingSince = () => {
      const before = group?.throttling();
      return () => {
        const after = group?.throttling();
        if (!before || !after) return null;
        return {
          periods: after.periods - before.periods,
          throttledPeriods: after.throttledPeriods - before.throttledPeriods,
          throttledMs: after.throttledMs - before.throttledMs,
        };
      };
    };
    return { rpc, host, port, setup, throttlingSince, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
