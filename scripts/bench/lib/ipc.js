// @ts-check
// Request/response over a forked child's IPC channel: { id, type, ... } answered by { id, result | error }.
'use strict';

/**
 * @param {import('node:child_process').ChildProcess} child
 * @returns {(type: string, payload?: Record<string, unknown>, timeoutMs?: number) => Promise<any>}
 */
function rpcClient(child) {
  let next = 1;
  /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void, timer: NodeJS.Timeout }>} */
  const pending = new Map();
  child.on('message', (/** @type {any} */ message) => {
    const waiting = pending.get(message?.id);
    if (!waiting) return;
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
  return (type, payload = {}, timeoutMs = 300_000) =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${type}: no answer from child ${child.pid} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
      child.send({ ...payload, id, type });
    });
}

/**
 * In a child: answers requests with handlers[type](message).
 * @param {Record<string, (message: any) => unknown>} handlers
 */
function serveRpc(handlers) {
  // Every child reports how long its event loop was held up (the largest delay since the last ask).
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  handlers = {
    ...handlers,
    loopDelay() {
      const result = { maxMs: Math.round(delay.max / 1e6), p99Ms: Math.round(delay.percentile(99) / 1e6) };
      delay.reset();
      return result;
    },
  };
  process.on('message', async (/** @type {any} */ message) => {
    const handler = handlers[message?.type];
    try {
      if (!handler) throw new Error(`unknown request ${message?.type}`);
      const result = await handler(message);
      process.send?.({ id: message.id, result });
    } catch (error) {
      process.send?.({ id: message.id, error: error instanceof Error ? error.stack ?? error.message : String(error) });
    }
  });
  // The harness going away (even killed) closes the channel: never outlive it.
  process.on('disconnect', () => process.exit(0));
}

module.exports = { rpcClient, serveRpc };
