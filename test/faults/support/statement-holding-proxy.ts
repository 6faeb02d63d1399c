// A TCP proxy between one process and PostgreSQL that holds the statements a test names, as a
// database that stopped answering them would: it reads the client's side of the protocol
// (https://www.postgresql.org/docs/current/protocol-message-formats.html) and forwards each
// message until the first that runs a matching statement (the Bind of a prepared statement
// whose SQL matches, asked as it runs, or a simple Query); from there on that connection forwards nothing more until the
// test releases what it holds, as a database that answers again. What it holds is dropped when
// either side goes away, so a client killed meanwhile leaves none of it in the database. A
// Parse goes through: postgres.js prepares a statement before it binds it, and sends the
// Bind, with the parameters a test looks for, only once PostgreSQL has answered.
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';

export interface StatementHoldingProxy {
  /** The database URL through the proxy. */
  readonly url: string;
  /** Each statement held so far: its Bind, parameters as text, or its Query. */
  readonly heldStatements: readonly string[];
  /** Sends on what each connection holds, in the order the client sent it, and holds nothing from then on. */
  release(): void;
  close(): Promise<void>;
}

/** The protocol version of a StartupMessage: the untyped messages before it (SSLRequest) are answered with one byte. */
const PROTOCOL_3 = 196_608;

/**
 * Which statements start a hold, by their SQL, asked as each runs: a RegExp without the g flag
 * (which would make test() stateful), or a test's own rule (say, every statement once it holds).
 */
export type HeldStatements = RegExp | ((sql: string) => boolean);

export async function startStatementHoldingProxy(databaseUrl: string, holds: HeldStatements): Promise<StatementHoldingProxy> {
  const target = new URL(databaseUrl);
  const heldStatements: string[] = [];
  const sockets = new Set<net.Socket>();
  /** Each open connection's release: sends on what it holds. */
  const releases = new Set<() => void>();
  let released = false;
  const keep = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {}); // the other side's close follows
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    keep(client);
    keep(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.on('data', (chunk) => client.write(chunk));
    const filter = holdingFilter(holds, (statement) => heldStatements.push(statement));
    const forward = (messages: Buffer) => {
      if (messages.length > 0) upstream.write(messages);
    };
    const release = () => forward(filter.release());
    if (released) release();
    releases.add(release);
    client.on('close', () => releases.delete(release));
    client.on('data', (chunk) => forward(filter.forwardable(chunk)));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: url.toString(),
    heldStatements,
    release() {
      released = true;
      for (const release of releases) release();
    },
    async close() {
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** One connection's filter. */
interface HoldingFilter {
  /** Of what the client sent, what may go on to PostgreSQL now, whole messages only. */
  forwardable(chunk: Buffer): Buffer;
  /** What it held, to go on now; from then on it holds nothing. */
  release(): Buffer;
}

/** `onHeld` hears of the statement that starts the hold. */
function holdingFilter(holds: HeldStatements, onHeld: (statement: string) => void): HoldingFilter {
  const matches = typeof holds === 'function' ? holds : (sql: string) => holds.test(sql);
  let pending = Buffer.alloc(0);
  let started = false;
  let holding = false;
  let released = false;
  let heldMessages: Buffer[] = [];
  /** The SQL of each prepared statement, by name ('' the unnamed one). */
  const prepared = new Map<string, string>();

  /** Whether the message runs a matching statement; a Parse is remembered for its Bind. */
  function startsHold(message: Buffer): boolean {
    const type = String.fromCharCode(message[0]);
    const body = message.subarray(5);
    if (type === 'P') {
      const [name, query] = cstrings(body, 2);
      prepared.set(name, query);
      return false;
    }
    const held = (type === 'Q' && matches(cstrings(body, 1)[0])) || (type === 'B' && matches(prepared.get(cstrings(body, 2)[1]) ?? ''));
    if (held) onHeld(body.toString('utf8'));
    return held;
  }

  return {
    forwardable(chunk) {
      pending = Buffer.concat([pending, chunk]);
      const forward: Buffer[] = [];
      for (;;) {
        // Before the StartupMessage: a length and a code; after it: a type byte, then a length.
        const lengthAt = started ? 1 : 0;
        if (pending.length < lengthAt + 4) break;
        const size = lengthAt + pending.readInt32BE(lengthAt);
        if (pending.length < size) break;
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (!started) started = message.readInt32BE(4) === PROTOCOL_3;
        else if (!holding && !released) holding = startsHold(message);
        (holding ? heldMessages : forward).push(message);
      }
      return Buffer.concat(forward);
    },
    release() {
      released = true;
      holding = false;
      const messages = Buffer.concat(heldMessages);
      heldMessages = [];
      return messages;
    },
  };
}

/** The first `count` NUL-terminated strings of a message body. */
function cstrings(body: Buffer, count: number): string[] {
  const strings: string[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = body.indexOf(0, start);
    strings.push(body.toString('utf8', start, end));
    start = end + 1;
  }
  return strings;
}
