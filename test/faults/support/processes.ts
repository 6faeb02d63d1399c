// The service's parts as separate processes (`node dist/src/main.js api|worker`), so that a
// test can kill one with SIGKILL and start it again, as a machine failure would.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { waitFor } from '../../support/wait';

const MAIN = path.resolve(__dirname, '../../../dist/src/main.js');

export interface PartProcess {
  readonly url: string;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts one part and waits until its /healthz answers. Its output is kept for a failure message. */
export async function startPart(part: 'api' | 'worker', env: Record<string, string>, port: number): Promise<PartProcess> {
  const child: ChildProcess = spawn(process.execPath, [MAIN, part], {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`${part} exited (${child.exitCode}): ${output.slice(-2000)}`);
      const response = await fetch(`${url}/healthz`).catch(() => null);
      return response?.ok ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `the ${part} process to answer /healthz` },
  );
  const exited = () => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit').then(() => {}));
  return {
    url,
    async kill() {
      child.kill('SIGKILL');
      await exited();
    },
    async stop() {
      child.kill('SIGTERM');
      await exited();
    },
  };
}
