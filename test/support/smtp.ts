// A real SMTP server process the service mails to (test/support/smtp-server-process.ts, built
// once per run with esbuild and run with node), and the mail it received, parsed by
// `mailparser`. It can be stopped and started again on the same port: the SMTP server down.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { simpleParser, type ParsedMail } from 'mailparser';
import { waitFor } from './wait';

export interface ReceivedMail {
  envelopeFrom: string | null;
  envelopeTo: string[];
  /** The user name it logged in with, if it did. */
  user: string | null;
  parsed: ParsedMail;
}

export interface SmtpServer {
  /** `smtp://user:pass@127.0.0.1:port`, for SMTP_URL. */
  readonly url: string;
  /** Every mail received since the first start, in order. */
  readonly mails: ReceivedMail[];
  /** SIGKILL: the server is gone, connections are refused. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

let bundled: Promise<string> | undefined;

/** The server's script as one CommonJS file (node cannot run TypeScript itself). */
function serverScript(): Promise<string> {
  bundled ??= (async () => {
    const outfile = path.join(await mkdtemp(path.join(tmpdir(), 'smtp-server-')), 'smtp-server.cjs');
    await build({
      entryPoints: [path.join(__dirname, 'smtp-server-process.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile,
      logLevel: 'warning',
    });
    return outfile;
  })();
  return bundled;
}

/** Starts an SMTP server that requires this login. */
export async function startSmtpServer(login = { user: 'notifier', pass: 'smtp-test-password' }): Promise<SmtpServer> {
  const script = await serverScript();
  const mails: ReceivedMail[] = [];
  const parsing: Promise<void>[] = [];
  let port = 0;
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const started = spawn(process.execPath, [script], {
      env: { ...process.env, SMTP_PORT: String(port), SMTP_USER: login.user, SMTP_PASS: login.pass },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child = started;
    let listening = false;
    createInterface({ input: started.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { listening?: number; mail?: Omit<ReceivedMail, 'parsed'> & { raw: string } };
      if (message.listening !== undefined) {
        port = message.listening;
        listening = true;
      }
      if (message.mail) {
        const { raw, ...envelope } = message.mail;
        parsing.push(simpleParser(Buffer.from(raw, 'base64')).then((parsed) => void mails.push({ ...envelope, parsed })));
      }
    });
    await waitFor(
      async () => {
        if (started.exitCode !== null) throw new Error(`the SMTP server exited (${started.exitCode})`);
        return listening ? true : undefined;
      },
      { what: 'the SMTP server to listen' },
    );
  }

  async function kill(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    running.kill('SIGKILL');
    await once(running, 'exit');
  }

  await start();
  return {
    get url() {
      return `smtp://${login.user}:${login.pass}@127.0.0.1:${port}`;
    },
    mails,
    kill,
    start,
    async stop() {
      await kill();
      await Promise.all(parsing);
    },
  };
}
