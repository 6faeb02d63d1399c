// Configuration is read from the environment once, at start, into one typed object.
// A missing or malformed value stops start-up with one line naming it.
import ipaddr from 'ipaddr.js';
import { DEFAULT_DELIVERIES_PER_BATCH, OUTCOME_SETTLE_MS } from './contract/rules';
import type { RateLimits } from './limits';
import { KEY_ID_PATTERN, secretKeyFrom, type SecretKey } from './secret-keys';

export interface Config {
  port: number;
  /** Unset: start an embedded PostgreSQL under dataDir. */
  databaseUrl: string | undefined;
  /** Unset: start the Temporal CLI dev server locally. */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  /** Unset: generated at first start and kept under dataDir. */
  internalApiToken: string | undefined;
  /** SECRET_KEYS: the keys of signing secrets at rest, the first sealing. Unset: generated at first start and kept under dataDir. */
  secretKeys: SecretKey[] | undefined;
  deliveryTimeoutMs: number;
  /** A write with more deliveries than this is delivered in child workflows of this many. */
  deliveriesPerBatch: number;
  /** Writes, registrations and notices older than this are pruned (every hour, by a Temporal Schedule). */
  retentionDays: number;
  /** A relay session without a connection for this long is deleted with its log. */
  relayGraceSeconds: number;
  /** The most sends a second of one recovery (POST /v3/webhooks/{id}/recoveries). */
  recoveryRatePerSecond: number;
  /** Deliveries of large writes and recoveries (the bulk task queue) under way at once in one worker process. */
  bulkDeliveriesPerWorker: number;
  /** The task queues a worker process serves: both, or only the main or the bulk one (see WorkerTaskQueues). */
  workerTaskQueues: WorkerTaskQueues;
  allowedCidrs: string[];
  /** The public API's rate limits: per account, and per client address without a valid token. */
  rateLimits: RateLimits;
  /** Proxies in front of the API whose X-Forwarded-For is believed for the client's address; 0: none. */
  trustProxyHops: number;
  /** The HTTP server's time-outs and its cap per client address, against slow and idle clients. */
  httpServer: HttpServerConfig;
  dataDir: string;
  logLevel: string;
  /** Unset: notices are recorded and logged, not mailed. Holds credentials: never logged. */
  smtpUrl: string | undefined;
  /** The From of notice mails. */
  notifyFrom: string;
  /** Notice mails per account in any 60 minutes; the rest are recorded and not mailed. */
  notifyMaxPerHour: number;
  /** Where owners reach the service; notice mails link to its /dashboard. No trailing slash. */
  publicBaseUrl: string;
  /** PROBE_INTERVALS: the waits between the probes of a webhook paused by failures, the last repeating. */
  probeIntervalsMs: number[];
  /** PROBE_MAX_DAYS: how long after its pause a webhook is probed; 0: never. */
  probeMaxDays: number;
  /**
   * OUTCOME_SETTLE_MS: how long `webhook/{id}` holds a delivery's outcome before counting it, so
   * that outcomes told late count in the order their attempts ended; a webhook keeps the value
   * it was registered under. At least 1 s: the batching of log rows alone may take 250 ms.
   */
  outcomeSettleMs: number;
  tracing: TracingConfig;
  /** List writes consumed from message brokers (DESIGN.md §18); neither by default. */
  brokers: BrokersConfig;
}

/** The brokers an API process consumes list writes from: each set when its URL is. */
export interface BrokersConfig {
  nats: NatsConfig | undefined;
  amqp: AmqpConfig | undefined;
}

/** NATS JetStream (NATS_URL set). */
export interface NatsConfig {
  /** NATS_URL: may hold credentials, so it is never logged. */
  url: string;
  /** NATS_STREAM: created on `subject` when missing. */
  stream: string;
  /** NATS_SUBJECT: where upstreams publish; refused messages go to `<subject>.rejected`. */
  subject: string;
  /** NATS_CONSUMER: the durable pull consumer every service process shares. */
  consumer: string;
  /** NATS_MAX_ACK_PENDING: messages delivered and not yet acked, across all processes. */
  maxAckPending: number;
}

/** RabbitMQ (AMQP_URL set). */
export interface AmqpConfig {
  /** AMQP_URL: may hold credentials, so it is never logged. */
  url: string;
  /** AMQP_QUEUE: durable, declared when missing; refused messages go to `<queue>.rejected`. */
  queue: string;
  /** AMQP_PREFETCH: messages delivered and not yet acked, per process. */
  prefetch: number;
}

/** OpenTelemetry (docs/operating.md, "Tracing"); the SDK reads the other OTEL_* variables itself. */
export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: spans are exported. */
  exporting: boolean;
  /** TRACE_RECEIVERS=on: every POST to a receiver carries `traceparent`. */
  traceReceivers: boolean;
  /** TRACE_URL_TEMPLATE: where the dashboard links a trace id, `{traceId}` standing for it. */
  traceUrlTemplate: string | undefined;
}

/** What src/api/connections.ts applies to the HTTP server of the API (and of a worker alone). */
export interface HttpServerConfig {
  /** HTTP_HEADERS_TIMEOUT_MS: a request's headers must be in within this, from its start. */
  headersTimeoutMs: number;
  /** HTTP_REQUEST_TIMEOUT_MS: a whole request, body included, must be in within this, from its start. */
  requestTimeoutMs: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** MAX_CONNECTIONS_PER_ADDRESS: connections one client address may hold open at once; 0: no cap. */
  maxConnectionsPerAddress: number;
}

/**
 * `main`: small writes, pings, redeliveries, registrations; `bulk`: large writes and
 * recoveries. Serving them in processes of their own lets the bulk ones run at a lower OS
 * priority (docs/operating.md).
 */
export const WORKER_TASK_QUEUES = ['both', 'main', 'bulk'] as const;
export type WorkerTaskQueues = (typeof WORKER_TASK_QUEUES)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function oneOf<const T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')} (got "${raw}")`);
  return raw as T;
}

/**
 * Behind trusted proxies every connection comes from one of them, so the cap per address is
 * off unless MAX_CONNECTIONS_PER_ADDRESS is set. 256: far above what one client needs (a
 * browser opens 6; an upstream service's pool writing 1,000 a second at a 250 ms answer has
 * 250 in flight), and few enough that one address cannot take the descriptors others need.
 */
function httpServer(env: Env, trustProxyHops: number): HttpServerConfig {
  const headersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 1_000, 300_000);
  const requestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000);
  // Node refuses a headers time-out longer than the whole request's.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be more than HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 1_000, 300_000),
    maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', trustProxyHops > 0 ? 0 : 256, 0, 1_000_000),
  };
}

function cidrList(env: Env, name: string): string[] {
  const cidrs = (optional(env, name) ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const invalid = cidrs.find((cidr) => !ipaddr.isValidCIDR(cidr));
  if (invalid !== undefined) {
    throw new ConfigError(`${name} must be a comma-separated list of CIDRs (bad entry "${invalid}")`);
  }
  return cidrs;
}

/** SMTP_URL: an smtp:// or smtps:// URL. Its value is never repeated: it may hold a password. */
function smtpUrl(env: Env): string | undefined {
  const raw = optional(env, 'SMTP_URL');
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw) || !['smtp:', 'smtps:'].includes(new URL(raw).protocol) || !new URL(raw).hostname) {
    throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL with a host (credentials, if any, in the URL)');
  }
  return raw;
}

function notifyFrom(env: Env): string {
  const from = optional(env, 'NOTIFY_FROM') ?? DEFAULT_NOTIFY_FROM;
  // One header's value: an address, or a name and <address>; never a line break.
  if (!from.includes('@') || /\p{Cc}/u.test(from) || from.length > 320) {
    throw new ConfigError(`NOTIFY_FROM must be an email address, or a name and <address>, on one line (got "${from}")`);
  }
  return from;
}

function publicBaseUrl(env: Env, port: number): string {
  const raw = optional(env, 'PUBLIC_BASE_URL');
  if (raw === undefined) return `http://localhost:${port}`;
  if (!URL.canParse(raw) || !['http:', 'https:'].includes(new URL(raw).protocol)) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http:// or https:// URL (got "${raw}")`);
  }
  return raw.replace(/\/+$/, '');
}

const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** PROBE_INTERVALS: durations such as `5m,15m,1h`, each from 1 second to 7 days. */
function probeIntervals(env: Env): number[] {
  const raw = optional(env, 'PROBE_INTERVALS') ?? '5m,15m,1h,3h,6h';
  return raw.split(',').map((part) => {
    const match = /^(\d+)([smh])$/.exec(part.trim());
    const ms = match ? Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS] : NaN;
    if (!(ms >= 1_000 && ms <= 7 * 86_400_000)) {
      throw new ConfigError(
        `PROBE_INTERVALS must be a comma-separated list of durations such as 5m,15m,1h (s, m or h; 1s to 168h) (got "${raw}")`,
      );
    }
    return ms;
  });
}

function traceUrlTemplate(env: Env): string | undefined {
  const raw = optional(env, 'TRACE_URL_TEMPLATE');
  if (raw === undefined) return undefined;
  const example = raw.replaceAll('{traceId}', '0'.repeat(32));
  if (!raw.includes('{traceId}') || !URL.canParse(example) || !['http:', 'https:'].includes(new URL(example).protocol)) {
    throw new ConfigError(`TRACE_URL_TEMPLATE must be an http:// or https:// URL containing {traceId} (got "${raw}")`);
  }
  return raw;
}

/**
 * SECRET_KEYS, or the file that keeps a generated one: `id:key,...`, each id 1 to 32 of
 * `A-Z a-z 0-9 _ -` and each key 32 bytes in base64. No message repeats a key.
 */
export function parseSecretKeys(raw: string, source = 'SECRET_KEYS'): SecretKey[] {
  const keys = raw.split(',').map((entry, index) => {
    const [id, key, ...more] = entry.trim().split(':');
    const what = `${source} entry ${index + 1}`;
    if (key === undefined || more.length > 0) throw new ConfigError(`${what} must be id:key (keys separated by commas)`);
    if (!KEY_ID_PATTERN.test(id)) throw new ConfigError(`${what}: its id must be 1 to 32 of A-Z a-z 0-9 _ - (got "${id}")`);
    const secretKey = secretKeyFrom(key);
    if (secretKey === null) throw new ConfigError(`${what} ("${id}"): its key must be 32 bytes in base64 (openssl rand -base64 32)`);
    return { id, key: secretKey };
  });
  const repeated = keys.find((key, index) => keys.findIndex((other) => other.id === key.id) !== index);
  if (repeated) throw new ConfigError(`${source} names key "${repeated.id}" twice`);
  return keys;
}

/** A NATS stream or consumer name: no dots, spaces, wildcards or path separators. */
const NATS_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A NATS subject of literal tokens: its `.rejected` sibling must not overlap it. */
const NATS_SUBJECT = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
/** An AMQP queue name, up to 255 bytes with `.rejected` added. */
const AMQP_QUEUE = /^[A-Za-z0-9_.:-]{1,200}$/;

function named(env: Env, name: string, fallback: string, pattern: RegExp, what: string): string {
  const value = optional(env, name) ?? fallback;
  if (!pattern.test(value)) throw new ConfigError(`${name} must be ${what} (got "${value}")`);
  return value;
}

/** A broker URL of one of `protocols`; its value is never repeated: it may hold a password. */
function brokerUrl(env: Env, name: string, protocols: string[], { list = false } = {}): string | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  // `list`: a comma-separated list of servers (NATS's), each a URL.
  const urls = list ? raw.split(',').map((part) => part.trim()) : [raw];
  if (!urls.every((url) => URL.canParse(url) && protocols.includes(new URL(url).protocol) && new URL(url).hostname)) {
    const forms = protocols.map((protocol) => `${protocol}//`).join(' or ');
    throw new ConfigError(`${name} must be ${list ? 'URLs' : 'a URL'} (${forms}) with a host (credentials, if any, in the URL)`);
  }
  return raw;
}

/**
 * The bound on messages under way at once from one broker (NATS_MAX_ACK_PENDING, AMQP_PREFETCH):
 * each holds a workflow start, and at 128 a burst kept a dev server on two cores past the
 * start's 5 s deadline; 32 take far more writes a second than the workers deliver.
 */
const BROKER_IN_FLIGHT = 32;

function brokers(env: Env): BrokersConfig {
  const natsUrl = brokerUrl(env, 'NATS_URL', ['nats:', 'tls:'], { list: true });
  const amqpUrl = brokerUrl(env, 'AMQP_URL', ['amqp:', 'amqps:']);
  return {
    nats:
      natsUrl === undefined
        ? undefined
        : {
            url: natsUrl,
            stream: named(env, 'NATS_STREAM', 'LIST_WRITES', NATS_NAME, '1 to 64 of A-Z a-z 0-9 _ -'),
            subject: named(env, 'NATS_SUBJECT', 'list-writes', NATS_SUBJECT, 'a subject of tokens of A-Z a-z 0-9 _ - separated by dots'),
            consumer: named(env, 'NATS_CONSUMER', 'svc-webhooks', NATS_NAME, '1 to 64 of A-Z a-z 0-9 _ -'),
            maxAckPending: integer(env, 'NATS_MAX_ACK_PENDING', BROKER_IN_FLIGHT, 1, 10_000),
          },
    amqp:
      amqpUrl === undefined
        ? undefined
        : {
            url: amqpUrl,
            queue: named(env, 'AMQP_QUEUE', 'list-writes', AMQP_QUEUE, '1 to 200 of A-Z a-z 0-9 _ . : -'),
            prefetch: integer(env, 'AMQP_PREFETCH', BROKER_IN_FLIGHT, 1, 10_000),
          },
  };
}

export const DEFAULT_NOTIFY_FROM = 'Webhook notices <webhooks@localhost>';

export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// connection string');
  }
  const temporalAddress = optional(env, 'TEMPORAL_ADDRESS');
  if (temporalAddress !== undefined && !/^[\w.-]+:\d+$/.test(temporalAddress)) {
    throw new ConfigError(`TEMPORAL_ADDRESS must be host:port (got "${temporalAddress}")`);
  }
  const internalApiToken = optional(env, 'INTERNAL_API_TOKEN');
  if (internalApiToken !== undefined && internalApiToken.length < 32) {
    throw new ConfigError('INTERNAL_API_TOKEN must be at least 32 characters');
  }
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const trustProxyHops = integer(env, 'TRUST_PROXY_HOPS', 0, 0, 10);
  const secretKeys = optional(env, 'SECRET_KEYS');
  return {
    port,
    databaseUrl,
    temporalAddress,
    temporalNamespace: optional(env, 'TEMPORAL_NAMESPACE') ?? 'default',
    internalApiToken,
    secretKeys: secretKeys === undefined ? undefined : parseSecretKeys(secretKeys),
    deliveryTimeoutMs: integer(env, 'DELIVERY_TIMEOUT_MS', 10_000, 100, 120_000),
    deliveriesPerBatch: integer(env, 'DELIVERIES_PER_BATCH', DEFAULT_DELIVERIES_PER_BATCH, 1, 1000),
    retentionDays: integer(env, 'RETENTION_DAYS', 30, 1, 3650),
    relayGraceSeconds: integer(env, 'RELAY_GRACE_SECONDS', 60, 1, 86_400),
    recoveryRatePerSecond: integer(env, 'RECOVERY_RATE_PER_SECOND', 10, 1, 1000),
    bulkDeliveriesPerWorker: integer(env, 'BULK_DELIVERIES_PER_WORKER', 25, 1, 1000),
    workerTaskQueues: oneOf(env, 'WORKER_TASK_QUEUES', WORKER_TASK_QUEUES, 'both'),
    allowedCidrs: cidrList(env, 'WEBHOOK_ALLOWED_CIDRS'),
    rateLimits: {
      account: {
        perSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 20, 1, 1_000_000),
        burst: integer(env, 'RATE_LIMIT_BURST', 200, 1, 1_000_000_000),
      },
      address: {
        perSecond: integer(env, 'RATE_LIMIT_UNAUTHENTICATED_PER_SECOND', 5, 1, 1_000_000),
        burst: integer(env, 'RATE_LIMIT_UNAUTHENTICATED_BURST', 20, 1, 1_000_000_000),
      },
      accountInFlight: integer(env, 'ACCOUNT_REQUESTS_IN_FLIGHT', 4, 1, 10_000),
    },
    trustProxyHops,
    httpServer: httpServer(env, trustProxyHops),
    dataDir: optional(env, 'DATA_DIR') ?? '.data',
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    smtpUrl: smtpUrl(env),
    notifyFrom: notifyFrom(env),
    notifyMaxPerHour: integer(env, 'NOTIFY_MAX_PER_HOUR', 20, 0, 100_000),
    publicBaseUrl: publicBaseUrl(env, port),
    probeIntervalsMs: probeIntervals(env),
    probeMaxDays: integer(env, 'PROBE_MAX_DAYS', 7, 0, 365),
    outcomeSettleMs: integer(env, 'OUTCOME_SETTLE_MS', OUTCOME_SETTLE_MS, 1000, 600_000),
    tracing: {
      exporting:
        optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined || optional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined,
      traceReceivers: oneOf(env, 'TRACE_RECEIVERS', ['on', 'off'], 'off') === 'on',
      traceUrlTemplate: traceUrlTemplate(env),
    },
    brokers: brokers(env),
  };
}
