import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';

export interface DeadServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A loopback address where a backing service is down: a listener that resets every
 * connection. (A port that was free a moment ago could be taken by another process in
 * between, which might accept and never answer.)
 */
export async function startResettingServer(): Promise<DeadServer> {
  const server = createServer((socket) => socket.resetAndDestroy());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.close();
      await once(server, 'close');
    },
  };
}
