// The cap per client address of src/api/connections.ts: its bookkeeping alone, its summary
// log, and on a real HTTP server on loopback (Linux answers all of 127.0.0.0/8, so a socket
// bound to 127.0.0.2 is another client than 127.0.0.1).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { capConnections, createConnectionCap } from '../../src/api/connections';
import { createLogger } from '../../src/logger';
import { metrics } from '../../src/metrics';
import { waitFor } from '../support/wait';

/** A logger whose lines the test reads. */
function loggedLines() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('info', sink) };
}

const refusedPerAddress = async () =>
  (await metrics.connectionsRefused.get()).values.find((value) => value.labels.reason === 'per_address')?.value ?? 0;
const openConnections = async () => (await metrics.connectionsOpen.get()).values[0].value;

describe('the cap per address, its bookkeeping', () => {
  it('admits an address up to the cap, refuses the next, and admits again once one closes', () => {
    const cap = createConnectionCap(2);
    expect([cap.admit('192.0.2.7'), cap.admit('192.0.2.7'), cap.admit('192.0.2.7')]).toEqual([true, true, false]);
    expect(cap.admit('192.0.2.8')).toBe(true);
    cap.release('192.0.2.7');
    expect([cap.admit('192.0.2.7'), cap.admit('192.0.2.7')]).toEqual([true, false]);
  });

  it('admits every connection when the cap is 0', () => {
    const cap = createConnectionCap(0);
    expect(Array.from({ length: 1000 }, () => cap.admit('192.0.2.7')).every(Boolean)).toBe(true);
  });
});

describe('the cap on a server', () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];
  /** The gauge before the test: each test leaves it so, once the server has seen every socket close. */
  let baseline = 0;
  beforeEach(async () => {
    baseline = await openConnections();
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    server?.closeAllConnections();
    server?.close();
    if (server) await once(server, 'close');
    server = undefined;
    await waitFor(async () => ((await openConnections()) === baseline ? true : undefined), { what: 'the gauge back where it was' });
  });

  /** Serves on every address (IPv4 clients then come IPv4-mapped), upgrading `/upgrade` and keeping the socket. */
  async function serveCapped(maxPerAddress: number) {
    const { lines, logger } = loggedLines();
    const upgraded: Socket[] = [];
    server = createServer((_request, response) => response.end('ok'));
    server.on('upgrade', (_request, socket: Socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
      socket.on('end', () => socket.destroy()); // the server's sockets are half-open: closed by it as by a WebSocket
      upgraded.push(socket);
    });
    const cap = capConnections(server, maxPerAddress, logger);
    server.listen(0);
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    return { port, lines, upgraded, stop: () => cap.stop() };
  }

  /**
   * A connection from `localAddress` that sends `request`. `reply` settles with what it got once
   * the head of an answer is in, or once the server closed it (with '' when it was refused).
   */
  function open(port: number, localAddress: string, request: string) {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    sockets.push(socket);
    let received = '';
    socket.on('error', () => {}); // a refused socket may end in a reset
    socket.on('connect', () => socket.write(request));
    const reply = new Promise<string>((settle) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        if (received.includes('\r\n\r\n')) settle(received);
      });
      socket.on('close', () => settle(received));
    });
    return { socket, reply };
  }

  /** Opens connections from `localAddress` until one is answered: the server has seen a connection of it close. */
  const answeredOnceMore = (port: number, localAddress: string) =>
    waitFor(async () => ((await open(port, localAddress, GET).reply).startsWith('HTTP/1.1 200') ? true : undefined), {
      what: `a connection from ${localAddress} answered`,
    });

  const GET = 'GET / HTTP/1.1\r\nHost: test\r\n\r\n';
  const UPGRADE = 'GET /upgrade HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n';

  it('refuses the connection over the cap at once, counts it, and serves another address meanwhile', async () => {
    const { port, lines, stop } = await serveCapped(2);
    const refusedBefore = await refusedPerAddress();
    const held = [open(port, '127.0.0.2', GET), open(port, '127.0.0.2', GET)];
    for (const connection of held) expect(await connection.reply).toMatch(/^HTTP\/1.1 200/);
    expect(await open(port, '127.0.0.2', GET).reply).toBe('');
    expect(await open(port, '127.0.0.3', GET).reply).toMatch(/^HTTP\/1.1 200/);
    expect((await refusedPerAddress()) - refusedBefore).toBe(1);
    stop();
    // The address as the cap keys it: 127.0.0.2, though the socket's peer was ::ffff:127.0.0.2.
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'connections refused',
        refused: { per_address: 1 },
        topAddresses: [{ address: '127.0.0.2', refused: 1 }],
      }),
    ]);

    // One of the two closes: the address may open one again.
    held[0].socket.destroy();
    await answeredOnceMore(port, '127.0.0.2');
  });

  it('counts an upgraded socket against its address for as long as it is open', async () => {
    const { port, upgraded } = await serveCapped(2);
    for (const connection of [open(port, '127.0.0.2', UPGRADE), open(port, '127.0.0.2', UPGRADE)])
      expect(await connection.reply).toMatch(/^HTTP\/1.1 101/);
    expect(await open(port, '127.0.0.2', GET).reply).toBe('');
    upgraded[0].destroy();
    await answeredOnceMore(port, '127.0.0.2');
  });

  it('keeps the gauge of open connections, upgraded ones included', async () => {
    const { port } = await serveCapped(0);
    const connections = [...Array.from({ length: 4 }, () => open(port, '127.0.0.2', GET)), open(port, '127.0.0.2', UPGRADE)];
    for (const connection of connections) await connection.reply;
    expect((await openConnections()) - baseline).toBe(5);
    // afterEach closes them, and waits for the gauge to come back to the baseline.
  });
});
