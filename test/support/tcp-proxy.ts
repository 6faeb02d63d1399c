// A loopback TCP proxy in front of a broker, which a test cuts (the broker is out of reach for
// whatever connects through it: connections reset, new ones refused) and restores on the same
// port, without touching the broker that other clients use.
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Closes the listener and every connection through it. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const open = async (port: number): Promise<Server> => {
    const server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      track(client);
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return server;
  };
  let server: Server | null = await open(0);
  const port = (server.address() as AddressInfo).port;
  const cut = async () => {
    if (server === null) return;
    const closing = once(server, 'close');
    server.close();
    for (const socket of sockets) socket.resetAndDestroy();
    await closing;
    server = null;
  };
  return {
    port,
    cut,
    async restore() {
      server ??= await open(port);
    },
    close: cut,
  };
}
