// There is no Docker engine on our machines: these tests keep
// docker-compose.yml, the Dockerfile and .dockerignore consistent with the code by reading them.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/contract/search-attributes';
import { dockerfileStages, npmInstalls } from '../support/dockerfile';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

// ---- docker-compose.yml ----------------------------------------------------------------

type Env = Record<string, string | undefined>;

interface Service {
  image?: string;
  build?: unknown;
  restart?: string;
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  ports?: (string | number | { target: number; published?: string | number })[];
  entrypoint?: string | string[];
  command?: string | string[];
  container_name?: string;
  hostname?: string;
  profiles?: string[];
  volumes?: string[];
}

/** Compose's variable interpolation: $$, $VAR, ${VAR}, ${VAR:-x}, ${VAR-x}, ${VAR:?err}, ${VAR?err}, ${VAR:+x}, ${VAR+x}. */
function interpolate(text: string, env: Env): string {
  return text.replace(
    /\$(\$|\{([A-Za-z_]\w*)(?:(:?[-?+])((?:[^{}]|\{[^{}]*\})*))?\}|([A-Za-z_]\w*))/g,
    (whole, _m, name, op, arg, bare) => {
      if (whole === '$$') return '$';
      if (bare !== undefined) return env[bare] ?? '';
      const value = env[name as string];
      const set = value !== undefined;
      const nonEmpty = set && value !== '';
      switch (op as string | undefined) {
        case undefined:
          return value ?? '';
        case ':-':
          return nonEmpty ? value : interpolate(arg, env);
        case '-':
          return set ? value : interpolate(arg, env);
        case ':?':
        case '?':
          if (op === ':?' ? !nonEmpty : !set) throw new Error(`required variable ${name} is missing a value: ${arg}`);
          return value!;
        case ':+':
          return nonEmpty ? interpolate(arg, env) : '';
        case '+':
          return set ? interpolate(arg, env) : '';
        default:
          throw new Error(`unsupported interpolation ${whole}`);
      }
    },
  );
}

function interpolateAll<T>(value: T, env: Env): T {
  if (typeof value === 'string') return interpolate(value, env) as T;
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, env)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateAll(item, env)])) as T;
  }
  return value;
}

function environment(service: Service): Record<string, string> {
  const raw = service.environment ?? {};
  const entries = Array.isArray(raw)
    ? raw.map((line) => {
        const at = line.indexOf('=');
        return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
      })
    : Object.entries(raw).map(([key, value]) => [key, value === null ? '' : String(value)]);
  return Object.fromEntries(entries);
}

function dependsOn(service: Service): Record<string, string> {
  const raw = service.depends_on ?? [];
  // The short (list) form means only "started".
  if (Array.isArray(raw)) return Object.fromEntries(raw.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(raw).map(([name, spec]) => [name, spec.condition ?? 'service_started']));
}

/** Published ports as { host, container }. */
function publishedPorts(service: Service): { host: number; container: number }[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') return { host: Number(port.published), container: Number(port.target) };
    const parts = String(port)
      .replace(/\/(tcp|udp)$/, '')
      .split(':');
    const container = Number(parts.at(-1));
    return { host: parts.length > 1 ? Number(parts.at(-2)) : NaN, container };
  });
}

/** The tag of an image reference, or undefined; a registry port is not a tag. */
function imageTag(image: string): string | undefined {
  const withoutDigest = image.split('@')[0];
  const lastSlash = withoutDigest.lastIndexOf('/');
  const lastColon = withoutDigest.lastIndexOf(':');
  return lastColon > lastSlash ? withoutDigest.slice(lastColon + 1) : undefined;
}

function isPinned(image: string): boolean {
  const tag = imageTag(image);
  return tag !== undefined && tag !== '' && tag !== 'latest' && !/\$/.test(image);
}

const TOKEN = 'int_' + 'x'.repeat(40);
const POSTGRES_PASSWORD = 'compose-test-password';
const SECRET_KEYS = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const operatorEnv: Env = { INTERNAL_API_TOKEN: TOKEN, SECRET_KEYS, POSTGRES_PASSWORD };

// merge: compose resolves YAML merge keys (`<<: *anchor`); the yaml package does so only when asked.
const rawCompose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const compose = interpolateAll(rawCompose, operatorEnv);
const services = compose.services;
const service = (name: string): Service => {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};

/** Long-running: everything but one-shot jobs, which must not be restarted. */
const longRunning = Object.keys(services).filter((name) => services[name].restart !== 'no');

const pkg = JSON.parse(read('package.json')) as { main: string; scripts: Record<string, string> };

/** The service's two parts (src/main.ts: `main.js api` / `main.js worker`), and what each alone refuses to start without. */
const PARTS = {
  api: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'INTERNAL_API_TOKEN', 'SECRET_KEYS'],
  worker: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SECRET_KEYS'],
} as const;
type Part = keyof typeof PARTS;
/** The compose services that run the service, each with the part it runs. */
const SERVICE_PARTS: [string, Part][] = [
  ['api', 'api'],
  ['worker', 'worker'],
  ['worker-bulk', 'worker'],
];

/** Every variable loadConfig reads, found by giving it an environment that records each read. */
function variablesReadByConfig(): Set<string> {
  const read = new Set<string>();
  loadConfig(
    new Proxy(
      {},
      {
        get(_target, key) {
          if (typeof key === 'string') read.add(key);
          return undefined;
        },
      },
    ),
  );
  return read;
}

function argv(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : value.trim().split(/\s+/);
}

/** Every key of a parsed YAML tree; a `<<` left in it means merge keys were not resolved. */
function allKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(allKeys);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => [key, ...allKeys(item)]);
  return [];
}

/** Runs a compose healthcheck test (exec form, `node`) here with the given environment: its exit code. */
function runHealthcheck(test: string[], env: Env): Promise<number> {
  return new Promise((done) => {
    execFile(process.execPath, test.slice(2), { env, timeout: 10_000 }, (error) => {
      done(error ? (typeof error.code === 'number' ? error.code : -1) : 0);
    });
  });
}

describe('docker-compose.yml', () => {
  it('defines the production-like stack and nothing else', () => {
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'nats',
      'postgres',
      'rabbitmq',
      'temporal',
      'temporal-setup',
      'temporal-ui',
      'worker',
      'worker-bulk',
    ]);
    // Shared settings come through YAML anchors and merge keys, resolved as compose does.
    expect(allKeys(compose)).not.toContain('<<');
  });

  it('the interpolation used here follows compose', () => {
    // The rest of this file relies on it.
    expect(interpolate('a$${b}${X:-d}${Y-e}${Z:+f}$X', { X: '1', Y: '' })).toBe('a${b}11');
    expect(() => interpolate('${X:?need X}', { X: '' })).toThrow('need X');
    expect(interpolate('${X?need X}', { X: '' })).toBe('');
  });

  it('pins every image to an explicit tag other than latest', () => {
    const images = Object.entries(services).filter(([, s]) => s.image !== undefined);
    expect(images.map(([name]) => name).sort()).toEqual(['nats', 'postgres', 'rabbitmq', 'temporal', 'temporal-setup', 'temporal-ui']);
    for (const [name, s] of images) {
      expect(isPinned(s.image!), `${name}: ${s.image}`).toBe(true);
    }
    // The service itself is built from this repository, not pulled.
    for (const [name] of SERVICE_PARTS) {
      expect(service(name).build, name).toBeDefined();
      expect(service(name).image, name).toBeUndefined();
    }
  });

  it('runs the api and the workers from one image built here, each with its own part', () => {
    for (const [name, part] of SERVICE_PARTS) {
      // `build: .`, or `build: { context: . }` with the Dockerfile at its default place.
      const build = service(name).build;
      expect(build, name).toEqual(typeof build === 'string' ? '.' : { context: '.' });
      expect(build, name).toEqual(service('api').build);
      expect(service(name).entrypoint, name).toBeUndefined();
      const node = ['node', pkg.main, part];
      // The bulk worker at a lower OS priority: nice runs node in its place, same process.
      expect(argv(service(name).command), name).toEqual(name === 'worker-bulk' ? ['nice', '-n', '10', ...node] : node);
      // The same command as `npm run start:<part>`, after its build; exec'd there, so that the
      // signals npm passes on reach node rather than the shell.
      expect(argv(pkg.scripts[`start:${part}`].split('&&').at(-1)), name).toEqual(['exec', ...node]);
    }
    expect(pkg.main).toBe('dist/src/main.js');
  });

  it('uses one Temporal release for the server and the admin tools', () => {
    expect(service('temporal').image).toMatch(/^temporalio\/auto-setup:/);
    expect(service('temporal-setup').image).toMatch(/^temporalio\/admin-tools:/);
    const server = imageTag(service('temporal').image!)!;
    expect(server).toMatch(/^\d+\.\d+\.\d+$/);
    expect(
      imageTag(service('temporal-setup').image!)!.startsWith(`${server}-`) || imageTag(service('temporal-setup').image!) === server,
    ).toBe(true);
  });

  it('gives every long-running service a healthcheck, and runs one-shot setup once', () => {
    expect(longRunning.sort()).toEqual(['api', 'nats', 'postgres', 'rabbitmq', 'temporal', 'temporal-ui', 'worker', 'worker-bulk']);
    for (const name of longRunning) {
      const check = services[name].healthcheck;
      expect(check?.disable, name).not.toBe(true);
      const test = check?.test;
      expect(Array.isArray(test) ? test.slice(0, 1) : test, name).not.toEqual(['NONE']);
      expect(Array.isArray(test) ? test.length : (test ?? '').length, name).toBeGreaterThan(1);
      expect(services[name].restart, name).toBe('unless-stopped');
    }
    expect(service('temporal-setup').restart).toBe('no');
    expect(service('postgres').healthcheck!.test).toContain('pg_isready');
    expect(service('temporal').healthcheck!.test).toEqual(expect.arrayContaining(['temporal', 'operator']));
    for (const [name] of SERVICE_PARTS) expect(String(service(name).healthcheck!.test), name).toContain('/healthz');
  });

  it('checks the api and each worker on /healthz at the PORT it listens on', async () => {
    // Stands in for the part: answers /healthz with `status`, on a port of its own.
    let status = 200;
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.statusCode = req.url === '/healthz' ? status : 404;
      res.end();
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const port = (server.address() as AddressInfo).port;
    try {
      for (const [name] of SERVICE_PARTS) {
        const test = service(name).healthcheck!.test;
        // Exec form with node: the image has neither a shell-form guarantee nor curl.
        expect(Array.isArray(test) ? test.slice(0, 2) : test, name).toEqual(['CMD', 'node']);
        const env = environment(service(name));
        // The part listens on PORT (loadConfig), and the check runs in the same container environment.
        expect(env.PORT, name).toBe(String(loadConfig(env).port));
        const inContainer = { ...env, PORT: String(port) };
        seen.length = 0;
        status = 200;
        expect(await runHealthcheck(test as string[], inContainer), `${name}: healthy`).toBe(0);
        expect(seen, name).toEqual(['GET /healthz']);
        status = 503;
        expect(await runHealthcheck(test as string[], inContainer), `${name}: unhealthy`).not.toBe(0);
      }
    } finally {
      await new Promise((closed) => server.close(closed));
    }
    // Nothing listening: unhealthy.
    for (const [name] of SERVICE_PARTS) {
      const env = { ...environment(service(name)), PORT: String(port) };
      expect(await runHealthcheck(service(name).healthcheck!.test as string[], env), `${name}: down`).not.toBe(0);
    }
  });

  it('starts each service only once what it needs is ready', () => {
    expect(dependsOn(service('postgres'))).toEqual({});
    expect(dependsOn(service('temporal'))).toEqual({ postgres: 'service_healthy' });
    expect(dependsOn(service('temporal-setup'))).toEqual({ temporal: 'service_healthy' });
    expect(dependsOn(service('temporal-ui'))).toEqual({ temporal: 'service_healthy' });
    // Each migrates the schema at start, and the workers' workflows set the registered search attributes.
    for (const [name] of SERVICE_PARTS) {
      expect(dependsOn(service(name)), name).toEqual({
        postgres: 'service_healthy',
        temporal: 'service_healthy',
        'temporal-setup': 'service_completed_successfully',
      });
    }
  });

  it('waits only on conditions that can come true', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [target, condition] of Object.entries(dependsOn(s))) {
        expect(services[target], `${name} -> ${target}`).toBeDefined();
        if (condition === 'service_healthy') expect(services[target].healthcheck, `${name} -> ${target}`).toBeDefined();
        // A job that restarts never stays "completed".
        if (condition === 'service_completed_successfully') expect(services[target].restart, `${name} -> ${target}`).toBe('no');
      }
    }
  });

  it('keeps PostgreSQL data in a named volume', () => {
    const volumes = (service('postgres') as { volumes?: string[] }).volumes ?? [];
    const data = volumes.find((v) => v.endsWith(':/var/lib/postgresql/data'));
    expect(data).toBeDefined();
    const name = data!.split(':')[0];
    expect(name).not.toMatch(/^[./~]/);
    expect(Object.keys(compose.volumes ?? {})).toContain(name);
  });

  it('runs a broker beside the service only when its profile is asked for; the api consumes from the one its URL names', () => {
    const withProfile = Object.entries(services).filter(([, s]) => s.profiles !== undefined);
    expect(Object.fromEntries(withProfile.map(([name, s]) => [name, s.profiles]))).toEqual({ nats: ['nats'], rabbitmq: ['rabbitmq'] });
    for (const [name, s] of withProfile) {
      const data = (s.volumes ?? []).map((volume) => volume.split(':')[0]);
      expect(data, name).toHaveLength(1);
      expect(Object.keys(compose.volumes ?? {}), name).toContain(data[0]);
    }
    // Without a URL, no broker: the stack starts as before.
    expect(loadConfig(environment(service('api'))).brokers).toEqual({ nats: undefined, amqp: undefined });
    const withBrokers = interpolateAll(rawCompose, {
      ...operatorEnv,
      NATS_URL: 'nats://nats:4222',
      AMQP_URL: 'amqp://webhooks:rabbit-password@rabbitmq:5672',
      RABBITMQ_PASSWORD: 'rabbit-password',
    }).services;
    const { brokers } = loadConfig(environment(withBrokers.api));
    expect(brokers.nats?.url).toBe('nats://nats:4222');
    expect(brokers.amqp?.url).toBe(`amqp://${environment(withBrokers.rabbitmq).RABBITMQ_DEFAULT_USER}:rabbit-password@rabbitmq:5672`);
    // Only the api consumes.
    for (const name of ['worker', 'worker-bulk']) expect(loadConfig(environment(withBrokers[name])).brokers.nats, name).toBeUndefined();
  });

  it('runs Temporal on the stack PostgreSQL', () => {
    const temporal = environment(service('temporal'));
    const postgres = environment(service('postgres'));
    expect(temporal.DB).toBe('postgres12');
    expect(temporal.POSTGRES_SEEDS).toBe('postgres');
    expect(temporal.DB_PORT).toBe('5432');
    expect(temporal.POSTGRES_USER).toBe(postgres.POSTGRES_USER);
    expect(temporal.POSTGRES_PWD).toBe(postgres.POSTGRES_PASSWORD);
    expect(postgres.POSTGRES_PASSWORD).toBe(POSTGRES_PASSWORD);
  });

  for (const [name, part] of SERVICE_PARTS) {
    describe(`${name} environment`, () => {
      const env = environment(service(name));

      it('holds only variables that loadConfig reads', () => {
        const readByConfig = variablesReadByConfig();
        expect(readByConfig.size).toBeGreaterThan(0);
        const unknown = Object.keys(env).filter((key) => !readByConfig.has(key));
        expect(unknown).toEqual([]);
      });

      it('is a valid configuration pointing at the stack', () => {
        const config = loadConfig(env);
        const postgres = environment(service('postgres'));
        expect(config.databaseUrl).toBe(`postgres://${postgres.POSTGRES_USER}:${POSTGRES_PASSWORD}@postgres:5432/${postgres.POSTGRES_DB}`);
        expect(config.temporalAddress).toBe('temporal:7233');
        expect(config.temporalNamespace).toBe('default');
        expect(config.port).toBe(3000);
        expect(config.deliveryTimeoutMs).toBe(10_000);
        // The api starts deliveries that the workers run: one task queue, one set of rules.
        const other = loadConfig(environment(service(part === 'api' ? 'worker' : 'api')));
        for (const key of ['databaseUrl', 'temporalAddress', 'temporalNamespace', 'deliveryTimeoutMs', 'allowedCidrs'] as const) {
          expect(config[key], key).toEqual(other[key]);
        }
        // The api seals with the keys the workers open with.
        const keys = (of: typeof config) => of.secretKeys?.map(({ id, key }) => [id, key.export()]);
        expect(keys(config)).toEqual(keys(other));
        expect(keys(config)).toEqual([['k1', Buffer.alloc(32, 1)]]);
      });

      it(`sets everything the ${part} alone refuses to start without: ${PARTS[part].join(', ')}`, () => {
        for (const key of PARTS[part]) {
          expect(env[key]?.trim(), key).toBeTruthy();
        }
        const config = loadConfig(env);
        expect(config.databaseUrl).toBeDefined();
        expect(config.temporalAddress).toBeDefined();
        if (part === 'api') expect(config.internalApiToken).toBe(TOKEN);
      });

      if (part === 'worker') {
        it('holds no internal API token: a worker serves no API', () => {
          expect(Object.keys(env)).not.toContain('INTERNAL_API_TOKEN');
        });
      }
    });
  }

  it('takes the internal API token and the secret keys from the operator, never from the file', () => {
    expect(() => interpolateAll(rawCompose, { POSTGRES_PASSWORD, SECRET_KEYS })).toThrow(/INTERNAL_API_TOKEN/);
    expect(() => interpolateAll(rawCompose, { INTERNAL_API_TOKEN: TOKEN, SECRET_KEYS })).toThrow(/POSTGRES_PASSWORD/);
    expect(() => interpolateAll(rawCompose, { INTERNAL_API_TOKEN: TOKEN, POSTGRES_PASSWORD })).toThrow(/SECRET_KEYS/);
    // Malformed keys are refused at start, with the variable named.
    const malformed = environment(interpolateAll(rawCompose, { ...operatorEnv, SECRET_KEYS: 'k1:short' }).services.worker);
    expect(() => loadConfig(malformed)).toThrow(/^SECRET_KEYS entry 1/);
    // A token shorter than config.ts allows is refused at start, with the variable named.
    const short = environment(interpolateAll(rawCompose, { ...operatorEnv, INTERNAL_API_TOKEN: 'short' }).services.api);
    expect(() => loadConfig(short)).toThrow(/INTERNAL_API_TOKEN/);
  });

  it('registers exactly the search attributes of src/temporal/search-attributes.ts', () => {
    const setup = service('temporal-setup');
    const script = [setup.entrypoint, setup.command].flat().filter(Boolean).join(' ').replace(/\\\n/g, ' ');
    expect(script).toMatch(/temporal operator search-attribute create/);
    const registered = [...script.matchAll(/--name\s+(\w+)\s+--type\s+(\w+)/g)].map(([, name, type]) => ({ name, type }));
    const cliType: Record<string, string> = {
      KEYWORD: 'Keyword',
      TEXT: 'Text',
      INT: 'Int',
      DOUBLE: 'Double',
      BOOL: 'Bool',
      DATETIME: 'Datetime',
      KEYWORD_LIST: 'KeywordList',
    };
    const expected = SEARCH_ATTRIBUTE_KEYS.map((key) => ({ name: key.name, type: cliType[key.type] }));
    const byName = (a: { name?: string }, b: { name?: string }) => a.name!.localeCompare(b.name!);
    expect(registered.sort(byName)).toEqual(expected.sort(byName));
    // In the namespace and on the server every part uses.
    for (const [name] of SERVICE_PARTS) {
      const env = environment(service(name));
      expect(script, name).toMatch(new RegExp(`--namespace\\s+${env.TEMPORAL_NAMESPACE}\\b`));
      expect(script, name).toMatch(new RegExp(`--address\\s+${env.TEMPORAL_ADDRESS}\\b`));
    }
  });

  it('publishes only the API (3000) and the Temporal Web UI (8233)', () => {
    const env = environment(service('api'));
    expect(publishedPorts(service('api'))).toEqual([{ host: 3000, container: loadConfig(env).port }]);
    expect(publishedPorts(service('temporal-ui'))).toEqual([{ host: 8233, container: 8080 }]);
    expect(environment(service('temporal-ui')).TEMPORAL_ADDRESS).toBe(env.TEMPORAL_ADDRESS);
    for (const name of ['postgres', 'temporal', 'temporal-setup', 'worker', 'worker-bulk']) {
      expect(publishedPorts(service(name)), name).toEqual([]);
    }
  });

  it('lets the workers scale (`--scale worker=N`): nothing that two replicas could both claim', () => {
    for (const name of ['worker', 'worker-bulk']) {
      const worker = service(name);
      // A published host port, a fixed container name or host name can be taken only once.
      expect(worker.ports ?? [], name).toEqual([]);
      expect(worker.container_name, name).toBeUndefined();
      expect(worker.hostname, name).toBeUndefined();
    }
  });

  it('serves both task queues: the main one in `worker`, the bulk one in `worker-bulk`', () => {
    const worker = loadConfig(environment(service('worker')));
    const bulk = loadConfig(environment(service('worker-bulk')));
    expect(worker.workerTaskQueues).toBe('main');
    expect(bulk.workerTaskQueues).toBe('bulk');
    // One queue of one namespace of one server: the pair is the whole of a worker that serves both.
    for (const key of ['temporalAddress', 'temporalNamespace'] as const) expect(bulk[key], key).toEqual(worker[key]);
  });
});

// ---- Dockerfile ------------------------------------------------------------------------

describe('Dockerfile', () => {
  const stages = dockerfileStages(read('Dockerfile'));
  const runtime = stages.at(-1)!;
  const last = (keyword: string) => runtime.instructions.filter((i) => i.keyword === keyword).at(-1);

  it('builds in one stage and runs from another, on pinned base images', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const aliases = new Set(stages.map((s) => s.alias).filter(Boolean));
    for (const stage of stages) {
      if (aliases.has(stage.from)) continue;
      expect(isPinned(stage.from), stage.from).toBe(true);
      expect(stage.from).toMatch(/^node:20[.-]/);
    }
  });

  it('builds with exactly the locked dependencies and the build script, which copies the migrations and bundles the dashboard', () => {
    const build = stages.find((s) => s.instructions.some((i) => i.keyword === 'RUN' && /\bnpm run build\b/.test(i.args)));
    expect(build).toBeDefined();
    expect(build).not.toBe(runtime);
    // npm ci installs the lock file's tree or fails; npm install would resolve anew where the two differ.
    expect(npmInstalls(build!).map((i) => i.args)).toEqual([expect.stringMatching(/^npm ci\b/)]);
    expect(pkg.scripts.build).toMatch(/cp -r src\/db\/migrations dist\/src\/db\/migrations/);
    // ... and bundles the dashboard into dist/dashboard, which the API serves.
    expect(pkg.scripts.build).toMatch(/npm run build:dashboard\b/);
    expect(pkg.scripts['build:dashboard']).toMatch(/--outfile=dist\/dashboard\/app\.js\b/);
    // The runtime copies dist/ from the build stage.
    expect(runtime.instructions.some((i) => i.keyword === 'COPY' && new RegExp(`--from=${build!.alias}\\s+\\S*dist\\b`).test(i.args))).toBe(
      true,
    );
  });

  it('installs production dependencies only in the runtime image', () => {
    const installs = npmInstalls(runtime);
    expect(installs.length).toBe(1);
    expect(installs[0].args).toMatch(/^npm ci --omit=dev\b/);
  });

  it('runs as a non-root user that can create the data directory', () => {
    const user = last('USER')?.args.split(':')[0];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    // main.ts creates DATA_DIR at every start; under a root-owned WORKDIR it must exist already.
    const dataDir = loadConfig({}).dataDir;
    const prepared = runtime.instructions.some(
      (i) =>
        i.keyword === 'RUN' &&
        i.args.includes(`mkdir -p ${dataDir}`) &&
        new RegExp(`chown ${user}(:\\w+)? ${dataDir.replace('.', '\\.')}\\b`).test(i.args),
    );
    expect(prepared).toBe(true);
  });

  it('starts dist/src/main.js, which is package.json main', () => {
    const cmd = JSON.parse(last('CMD')!.args) as string[];
    expect(cmd).toEqual(['node', pkg.main]);
    expect(pkg.main).toBe('dist/src/main.js');
    expect(runtime.instructions.some((i) => i.keyword === 'ENTRYPOINT')).toBe(false);
  });

  it('exposes the API port and checks /healthz with node', () => {
    expect(last('EXPOSE')?.args.split(/\s+/)).toEqual([String(loadConfig({}).port)]);
    const check = last('HEALTHCHECK')?.args ?? '';
    expect(check).toMatch(/CMD \[\s*"node"/);
    expect(check).toContain('/healthz');
    expect(check).not.toMatch(/\bcurl\b|\bwget\b/);
  });
});

describe('.dockerignore', () => {
  it('keeps local builds, dependencies, data and history out of the build context', () => {
    const entries = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim().replace(/^\/|\/$/g, ''))
      .filter((line) => line && !line.startsWith('#'));
    expect(entries).toEqual(expect.arrayContaining(['node_modules', 'dist', '.data', '.git']));
  });
});
