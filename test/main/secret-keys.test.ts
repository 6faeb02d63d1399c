// SECRET_KEYS as `node dist/src/main.js` reads it: a malformed value, or a stored secret whose
// key it lacks, stops start-up with one line naming what is wrong and a non-zero exit; unset,
// one key is generated at first start and kept under the data directory, and read again at the
// next start.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parseSecretKeys } from '../../src/config';
import { createAccount } from '../../src/db/accounts';
import { createSecretBox, newSecretKeys } from '../../src/secret-keys';
import { insertWebhook } from '../../scripts/lib/webhook-rows';
import { withMigratedDatabase } from '../support/database';
import { freePort } from '../support/ports';
import { insertSealedWebhooks } from '../support/sealed-webhooks';
import { waitFor } from '../support/wait';
import { startWatched } from '../support/watched-process';

const ROOT = path.resolve(__dirname, '../..');

beforeAll(() => promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT }), 120_000);

/** `main.js` with `args`, on this environment alone (nothing of the test run's own), LOG_LEVEL=warn. */
function startMain(args: string[], env: Record<string, string>) {
  return startWatched(process.execPath, ['dist/src/main.js', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env },
  });
}

/** Runs `main.js` until it exits by itself: its code and everything it printed. */
async function runToExit(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const main = startMain(args, env);
  await waitFor(() => main.exited(), { timeoutMs: 60_000, what: `main.js ${args.join(' ')} to exit` });
  return { code: main.exitCode(), output: main.output() };
}

const backing = () => ({ DATABASE_URL: inject('databaseUrl'), TEMPORAL_ADDRESS: inject('temporalAddress') });

describe('SECRET_KEYS at start-up', () => {
  it('stops with one line and exit 1 when malformed, never repeating the key', async () => {
    const key = Buffer.alloc(16, 1).toString('base64');
    for (const args of [[], ['worker'], ['api']]) {
      const { code, output } = await runToExit(args, { ...backing(), INTERNAL_API_TOKEN: 'i'.repeat(40), SECRET_KEYS: `k1:${key}` });
      expect(code, output).toBe(1);
      expect(output).toBe('Cannot start: SECRET_KEYS entry 1 ("k1"): its key must be 32 bytes in base64 (openssl rand -base64 32)\n');
    }
  });

  it('stops with one line naming the key of a stored secret that SECRET_KEYS lacks, and exit 1', async () => {
    await withMigratedDatabase(async (sql, url) => {
      await insertWebhook(sql, (await createAccount(sql, 'sealed under the fixed key')).id);
      const env = { DATABASE_URL: url, TEMPORAL_ADDRESS: inject('temporalAddress'), SECRET_KEYS: newSecretKeys('other') };
      for (const part of ['worker', 'api']) {
        const { code, output } = await runToExit([part], { ...env, INTERNAL_API_TOKEN: 'i'.repeat(40), PORT: String(await freePort()) });
        expect(code, output).toBe(1);
        expect(output).toBe(
          'Cannot start: stored signing secrets are sealed under key "fixed-test-key", which SECRET_KEYS does not hold: ' +
            'put it back after the first key, and restart\n',
        );
      }
    });
  });

  it('unset, generates one key at first start, keeps it under the data directory, and reads it at the next', async () => {
    await withMigratedDatabase(async (sql, url) => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'webhooks-secret-keys-'));
      try {
        const env = {
          DATABASE_URL: url,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          INTERNAL_API_TOKEN: 'i'.repeat(40),
          DATA_DIR: dataDir,
        };
        const file = path.join(dataDir, 'secret-keys');
        const firstPort = await freePort();
        const first = startMain([], { ...env, PORT: String(firstPort) });
        expect(await first.answering(firstPort, 60_000), first.output()).toBe('answering /healthz');
        expect(first.output()).toContain(
          `Signing secrets are sealed under a key generated now, kept in ${file}: back it up with the database`,
        );
        expect(await first.stop('SIGTERM', 30_000)).toEqual({ code: 0, signal: null });
        const kept = await readFile(file, 'utf8');
        expect(kept).toMatch(/^generated-\d{8}:[A-Za-z0-9+/]{43}=\n$/);
        expect((await stat(file)).mode & 0o777).toBe(0o600);

        // A secret sealed under the kept key: the next start must read that key to start at all.
        const account = await createAccount(sql, 'sealed under the kept key');
        await insertSealedWebhooks(sql, createSecretBox(parseSecretKeys(kept.trim())), account.id, 1, () => 'https://receiver.test/kept');
        const secondPort = await freePort();
        const second = startMain([], { ...env, PORT: String(secondPort) });
        expect(await second.answering(secondPort, 60_000), second.output()).toBe('answering /healthz');
        expect(second.output()).not.toContain('generated now');
        expect(await second.stop('SIGTERM', 30_000)).toEqual({ code: 0, signal: null });
        expect(await readFile(file, 'utf8')).toBe(kept);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  }, 180_000);
});
