// A command a test starts and stops as a process manager would: its output kept for failure
// messages, its /healthz awaited, its exit after a signal awaited and reported.
import { spawn, type SpawnOptions } from 'node:child_process';
import { waitFor } from './wait';

export interface WatchedProcess {
  readonly pid: number;
  /** Everything it printed so far, stdout and stderr interleaved. */
  output(): string;
  /** true once it has exited, else undefined (a waitFor probe). */
  exited(): Promise<true | undefined>;
  /** Its exit code once it has exited by itself; null while it runs or when a signal ended it. */
  exitCode(): number | null;
  /** Waits until it answers /healthz on the port, or exits first: says which. */
  answering(port: number, timeoutMs: number): Promise<'answering /healthz' | 'exited'>;
  /** Sends the signal to its pid alone and waits for the exit: its code, or the signal that ended it. */
  stop(signal: NodeJS.Signals, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startWatched(command: string, args: string[], options: Omit<SpawnOptions, 'stdio'>): WatchedProcess {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = async () => (child.exitCode !== null || child.signalCode !== null ? true : undefined);
  return {
    pid: child.pid!,
    output: () => output,
    exited,
    exitCode: () => child.exitCode,
    answering: (port, timeoutMs) =>
      waitFor(
        async () => {
          if (await exited()) return 'exited';
          const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
          return response?.ok ? 'answering /healthz' : undefined;
        },
        { timeoutMs, intervalMs: 250, what: `${command} ${args.join(' ')} to answer /healthz on port ${port}` },
      ),
    async stop(signal, timeoutMs) {
      child.kill(signal);
      await waitFor(exited, { timeoutMs, intervalMs: 100, what: `${command} ${args.join(' ')} to exit after ${signal}` });
      return { code: child.exitCode, signal: child.signalCode };
    },
  };
}
