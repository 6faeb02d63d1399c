// Jaeger v2 as the trace backend of `npm run test:tracing`: built once from the Go module that
// pins it (scripts/jaeger), run with traces in memory and every port on loopback, and read back
// through its JSON query API (built from the module proxy it has no UI, only a placeholder page).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { freePortRange } from './ports';
import { waitFor } from './wait';
import { startWatched } from './watched-process';

const MODULE_DIR = path.resolve(__dirname, '../../scripts/jaeger');
const JAEGER_PACKAGE = 'github.com/jaegertracing/jaeger/cmd/jaeger';
const STORE = 'memory_store';

/** A tag of a span or a process: the value's JSON type follows `type`. */
export type JaegerTag =
  | { key: string; type: 'string'; value: string }
  | { key: string; type: 'bool'; value: boolean }
  | { key: string; type: 'int64' | 'float64'; value: number }
  /** Base64. */
  | { key: string; type: 'binary'; value: string };

export interface JaegerReference {
  refType: 'CHILD_OF' | 'FOLLOWS_FROM';
  traceID: string;
  spanID: string;
}

export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  /** The parent is the CHILD_OF reference; a root span has none. */
  references: JaegerReference[];
  /** Microseconds since the Unix epoch. */
  startTime: number;
  /** Microseconds. */
  duration: number;
  tags: JaegerTag[];
  /** Span events. */
  logs: { timestamp: number; fields: JaegerTag[] }[];
  /** A key of the trace's `processes`. */
  processID: string;
  warnings: string[] | null;
}

export interface JaegerProcess {
  serviceName: string;
  tags: JaegerTag[];
}

/** One trace as `GET /api/traces/{traceId}` answers it (its `data[0]`). */
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, JaegerProcess>;
  warnings: string[] | null;
}

interface JaegerAnswer<T> {
  data: T;
  errors: { code?: number; msg: string }[] | null;
}

export interface Jaeger {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT (OTLP over HTTP): the exporter appends /v1/traces. */
  readonly otlpEndpoint: string;
  /** The query API's base URL: `/api/traces/{traceId}`, `/api/traces?service=`, `/api/v3/traces` (which needs `query.num_traces`). */
  readonly queryUrl: string;
  /** The trace as Jaeger has it now (its spans so far), or null when it has none of it. */
  trace(traceId: string): Promise<JaegerTrace | null>;
  /** Polls until the trace exists and `until` holds for it: spans arrive in batches. */
  waitForTrace(traceId: string, until: (trace: JaegerTrace) => boolean): Promise<JaegerTrace>;
  /** The service's recent traces (Jaeger's default search: the last 2 days, at most 100). */
  traces(service: string): Promise<JaegerTrace[]>;
  stop(): Promise<void>;
}

/** Where built binaries stay between runs and clones: the user's cache, outside every work tree. */
function cacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'svc-webhooks');
}

/**
 * The Jaeger binary of scripts/jaeger's pins, built with `go build` (minutes) when the cache has
 * none: named by a hash of go.mod and go.sum, so that a change of version builds anew.
 */
export async function buildJaeger(): Promise<string> {
  const pins = createHash('sha256');
  for (const file of ['go.mod', 'go.sum']) pins.update(await readFile(path.join(MODULE_DIR, file)));
  const binary = path.join(cacheDir(), `jaeger-${pins.digest('hex').slice(0, 16)}`);
  const built = await access(binary, constants.X_OK).then(
    () => true,
    () => false,
  );
  if (built) return binary;
  console.log(`Building Jaeger from scripts/jaeger into ${binary} (a few minutes, once per version)...`);
  await mkdir(path.dirname(binary), { recursive: true });
  // Built under a name of its own and renamed: a run in another work tree may be building it too.
  const partial = `${binary}.${process.pid}.partial`;
  try {
    await promisify(execFile)('go', ['build', '-o', partial, JAEGER_PACKAGE], { cwd: MODULE_DIR, maxBuffer: 16 * 1024 * 1024 });
    await rename(partial, binary);
  } finally {
    await rm(partial, { force: true });
  }
  return binary;
}

/** Jaeger v2's configuration: in-memory storage, OTLP over HTTP in, the query API out, nothing else listening. */
function jaegerConfig(ports: { otlp: number; queryHttp: number; queryGrpc: number }): string {
  return stringify({
    extensions: {
      jaeger_storage: { backends: { [STORE]: { memory: { max_traces: 100_000 } } } },
      jaeger_query: {
        storage: { traces: STORE },
        // Else it traces its own queries to localhost:4317, whatever listens there, and takes
        // 10 s to stop while it retries.
        enable_tracing: false,
        http: { endpoint: `127.0.0.1:${ports.queryHttp}` },
        // It always serves gRPC as well: on a loopback port of its own.
        grpc: { endpoint: `127.0.0.1:${ports.queryGrpc}` },
      },
    },
    receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${ports.otlp}` } } } },
    exporters: { jaeger_storage_exporter: { trace_storage: STORE } },
    service: {
      extensions: ['jaeger_storage', 'jaeger_query'],
      // No batch processor: a span is stored as soon as it is received.
      pipelines: { traces: { receivers: ['otlp'], exporters: ['jaeger_storage_exporter'] } },
      // Jaeger's own metrics would listen on a port (8888).
      telemetry: { metrics: { level: 'none' } },
    },
  });
}

/** Starts Jaeger on free loopback ports and waits until it takes OTLP and answers queries. */
export async function startJaeger(): Promise<Jaeger> {
  const binary = await buildJaeger();
  const dir = await mkdtemp(path.join(tmpdir(), 'jaeger-'));
  const first = await freePortRange(3);
  const ports = { otlp: first, queryHttp: first + 1, queryGrpc: first + 2 };
  const configFile = path.join(dir, 'config.yaml');
  await writeFile(configFile, jaegerConfig(ports));
  const jaeger = startWatched(binary, ['--config', configFile], { env: process.env });
  const otlpEndpoint = `http://127.0.0.1:${ports.otlp}`;
  const queryUrl = `http://127.0.0.1:${ports.queryHttp}`;
  const stop = async () => {
    await jaeger.stop('SIGTERM', 30_000);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (await jaeger.exited()) throw new Error(`Jaeger exited:\n${jaeger.output().slice(-4000)}`);
        // The query API answers before the OTLP receiver starts: wait for both, the receiver taking an empty export.
        const [queryAnswer, otlpAnswer] = await Promise.all([
          fetch(`${queryUrl}/api/services`).catch(() => null),
          fetch(`${otlpEndpoint}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(
            () => null,
          ),
        ]);
        return queryAnswer?.ok && otlpAnswer?.ok ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: `Jaeger to take OTLP on ${otlpEndpoint} and answer queries on ${queryUrl}` },
    );
  } catch (error) {
    await stop();
    throw error;
  }

  /** The query API's `data`, or null when it answers 404. */
  const query = async <T>(pathAndQuery: string): Promise<T | null> => {
    const response = await fetch(`${queryUrl}${pathAndQuery}`);
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`GET ${pathAndQuery} answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as JaegerAnswer<T>).data;
  };
  const trace = async (traceId: string) => (await query<JaegerTrace[]>(`/api/traces/${traceId}`))?.[0] ?? null;
  return {
    otlpEndpoint,
    queryUrl,
    trace,
    waitForTrace: (traceId, until) =>
      waitFor(
        async () => {
          const found = await trace(traceId);
          if (found && until(found)) return found;
          // Thrown so that a timeout says what Jaeger had.
          throw new Error(
            found ? `it has ${found.spans.length} spans: ${found.spans.map((span) => span.operationName).join(', ')}` : 'not found',
          );
        },
        { timeoutMs: 60_000, intervalMs: 200, what: `trace ${traceId} in Jaeger to be as expected` },
      ),
    traces: async (service) => (await query<JaegerTrace[]>(`/api/traces?service=${encodeURIComponent(service)}`)) ?? [],
    stop,
  };
}
