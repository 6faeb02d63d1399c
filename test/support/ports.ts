import { createServer, type AddressInfo } from 'node:net';

/** A loopback port that was free a moment ago: nothing listens on it until someone binds it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The first of `count` consecutive loopback ports, all free a moment ago, below `below`
 * (the Temporal server keeps its membership ports in a smallint).
 */
export async function freePortRange(count: number, below = 32_768): Promise<number> {
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * (below - 20_000 - count));
    const free = await Promise.all(Array.from({ length: count }, (_, i) => isFree(first + i)));
    if (free.every(Boolean)) return first;
  }
}

function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
