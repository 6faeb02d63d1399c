// The harness's children: scripts of the compiled bench forked with an IPC channel.
import path from 'node:path';
import { fork, type ChildProcess } from 'node:child_process';
import { newInternalToken } from '../../../src/secrets';
import { BENCH_DIR } from './config';
import { rpcClient, type LoopDelay, type Rpc } from './ipc';
import * as stack from './stack';
import { type Context } from './types';

/**
 * Forks `file` (e.g. `baseline.js`) of the compiled bench; stopped with the harness. With
 * `under` (e.g. `ip netns exec <name>`), Node runs as that command's last argument: the same
 * pid, once the command has exec'd it.
 */
export function forkChild(name: string, file: string, env: Record<string, string>, under: string[] = []): ChildProcess {
  const child = fork(path.join(BENCH_DIR, file), [], {
    env: { ...process.env, ...env },
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(under.length ? { execPath: under[0], execArgv: [...under.slice(1), process.execPath, ...process.execArgv] } : {}),
  });
  if (child.pid) stack.ownPids.add(child.pid);
  stack.onStop(name, () => stack.terminate(child, 3_000));
  return child;
}

/** What a forked target serves (baseline.js, floor.js). */
interface ForkedApi {
  [type: string]: (message: never) => unknown;
  start: () => Promise<{ port: number }>;
  counts: () => { outcomesTotal: number; maxInFlight?: number };
  loopDelay: () => LoopDelay;
}

/**
 * A target run as a child of the harness (`<name>.js`): forked with a token of its own,
 * started, and sampled as the group `name`. Returns its RPC and the fields of the Target
 * that every such child fills alike.
 */
export async function forkTarget<H extends ForkedApi>(
  ctx: Context,
  name: 'baseline' | 'floor',
  env: Record<string, string>,
  startTimeoutMs?: number,
) {
  const token = newInternalToken();
  const child = forkChild(name, `${name}.js`, { ...env, BENCH_TOKEN: token });
  const rpc = rpcClient<H>(child);
  // What every forked target serves, called as such.
  const forked = rpc as unknown as Rpc<ForkedApi>;
  const { port } = await forked('start', undefined, startTimeoutMs);
  ctx.sampler.addGroup(name, () => [child.pid!]);
  const common = {
    kind: name,
    child: { counts: () => forked('counts'), loopDelay: () => forked('loopDelay') },
    baseUrl: `http://127.0.0.1:${port}`,
    token,
    workerGroup: name,
  };
  return { process: child, rpc, common };
}
