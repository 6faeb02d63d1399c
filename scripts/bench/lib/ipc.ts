// Request/response over a forked child's IPC channel: { id, type, ... } answered by { id, result | error }.
import { type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** A child's handlers: each takes the request's fields (its payload). */
type Handlers = Record<string, (message: never) => unknown>;

export interface LoopDelay {
  maxMs: number;
  p99Ms: number;
}

/** What a child serves: its handlers, and `loopDelay`, which every child answers. */
export type Served<H extends Handlers> = H & { loopDelay: () => LoopDelay };

type Payload<F> = F extends (message: infer P) => unknown ? P : never;

/** Calls a child's handler by name: resolves with what it returned. */
export type Rpc<H extends Handlers> = <K extends keyof H & string>(
  type: K,
  payload?: Payload<H[K]>,
  timeoutMs?: number,
) => Promise<Awaited<ReturnType<H[K]>>>;

interface Answer {
  id: number;
  result?: unknown;
  error?: string;
}

export function rpcClient<H extends Handlers>(child: ChildProcess): Rpc<H> {
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  child.on('message', (message: Answer | undefined) => {
    const waiting = message && pending.get(message.id);
    if (!message || !waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.error) waiting.reject(new Error(message.error));
    else waiting.resolve(message.result);
  });
  child.on('exit', (code, signal) => {
    for (const waiting of pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error(`child ${child.pid} exited (${code ?? signal}) before answering`));
    }
    pending.clear();
  });
  return <K extends keyof H & string>(type: K, payload?: Payload<H[K]>, timeoutMs = 300_000) =>
    new Promise<Awaited<ReturnType<H[K]>>>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${type}: no answer from child ${child.pid} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, { resolve: (v) => resolve(v as Awaited<ReturnType<H[K]>>), reject, timer });
      child.send({ ...(payload ?? {}), id, type });
    });
}

/** In a child: answers requests with handlers[type](message). */
export function serveRpc<H extends Handlers>(handlers: H): void {
  // Every child reports how long its event loop was held up (the largest delay since the last ask).
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const served: Record<string, (message: never) => unknown> = {
    ...handlers,
    loopDelay(): LoopDelay {
      const result = { maxMs: Math.round(delay.max / 1e6), p99Ms: Math.round(delay.percentile(99) / 1e6) };
      delay.reset();
      return result;
    },
  };
  const answer = async (message: { id: number; type: string } | undefined): Promise<void> => {
    const handler = message ? served[message.type] : undefined;
    try {
      if (!handler) throw new Error(`unknown request ${message?.type}`);
      const result = await handler(message as never);
      process.send?.({ id: message?.id, result });
    } catch (error) {
      process.send?.({ id: message?.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  };
  process.on('message', (message: { id: number; type: string } | undefined) => void answer(message));
  // The harness going away (even killed) closes the channel: never outlive it.
  process.on('disconnect', () => process.exit(0));
}
