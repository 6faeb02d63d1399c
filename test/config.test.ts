import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';

/** Two keys of SECRET_KEYS: 32 bytes each, in the standard and the URL-safe base64 alphabet. */
const NEW_KEY = Buffer.alloc(32, 0xfb);
const OLD_KEY = Buffer.alloc(32, 7);
const SECRET_KEYS = `k2:${NEW_KEY.toString('base64')},k1:${OLD_KEY.toString('base64url')}`;

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      databaseUrl: undefined,
      temporalAddress: undefined,
      temporalNamespace: 'default',
      internalApiToken: undefined,
      secretKeys: undefined,
      deliveryTimeoutMs: 10_000,
      deliveriesPerBatch: 500,
      retentionDays: 30,
      relayGraceSeconds: 60,
      recoveryRatePerSecond: 10,
      bulkDeliveriesPerWorker: 25,
      workerTaskQueues: 'both',
      allowedCidrs: [],
      rateLimits: { account: { perSecond: 20, burst: 200 }, address: { perSecond: 5, burst: 20 }, accountInFlight: 4 },
      trustProxyHops: 0,
      httpServer: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnectionsPerAddress: 256 },
      dataDir: '.data',
      logLevel: 'info',
      smtpUrl: undefined,
      notifyFrom: 'Webhook notices <webhooks@localhost>',
      notifyMaxPerHour: 20,
      publicBaseUrl: 'http://localhost:3000',
      probeIntervalsMs: [300_000, 900_000, 3_600_000, 10_800_000, 21_600_000],
      probeMaxDays: 7,
      outcomeSettleMs: 5000,
      tracing: { exporting: false, traceReceivers: false, traceUrlTemplate: undefined },
      brokers: { nats: undefined, amqp: undefined },
    });
  });

  it('reads every variable', () => {
    const token = 'i'.repeat(40);
    expect(
      loadConfig({
        PORT: '8080',
        DATABASE_URL: 'postgres://u@db:5432/webhooks',
        TEMPORAL_ADDRESS: 'temporal:7233',
        TEMPORAL_NAMESPACE: 'prod',
        INTERNAL_API_TOKEN: token,
        SECRET_KEYS,
        DELIVERY_TIMEOUT_MS: '5000',
        DELIVERIES_PER_BATCH: '50',
        RETENTION_DAYS: '7',
        RELAY_GRACE_SECONDS: '5',
        RECOVERY_RATE_PER_SECOND: '100',
        BULK_DELIVERIES_PER_WORKER: '12',
        WORKER_TASK_QUEUES: 'bulk',
        WEBHOOK_ALLOWED_CIDRS: ' 127.0.0.0/8, ::1/128 ',
        RATE_LIMIT_PER_SECOND: '50',
        RATE_LIMIT_BURST: '500',
        RATE_LIMIT_UNAUTHENTICATED_PER_SECOND: '2',
        RATE_LIMIT_UNAUTHENTICATED_BURST: '8',
        ACCOUNT_REQUESTS_IN_FLIGHT: '9',
        TRUST_PROXY_HOPS: '1',
        HTTP_HEADERS_TIMEOUT_MS: '2000',
        HTTP_REQUEST_TIMEOUT_MS: '60000',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
        MAX_CONNECTIONS_PER_ADDRESS: '32',
        DATA_DIR: '/var/lib/webhooks',
        LOG_LEVEL: 'warn',
        SMTP_URL: 'smtps://notifier:p%40ss@smtp.example.com:465',
        NOTIFY_FROM: 'Hooks <hooks@example.com>',
        NOTIFY_MAX_PER_HOUR: '5',
        PUBLIC_BASE_URL: 'https://hooks.example.com/',
        PROBE_INTERVALS: '30s, 2m,1h',
        PROBE_MAX_DAYS: '0',
        OUTCOME_SETTLE_MS: '2000',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        TRACE_RECEIVERS: 'on',
        TRACE_URL_TEMPLATE: 'https://jaeger.example.com/trace/{traceId}',
        NATS_URL: 'nats://user:pw@nats-1:4222, tls://nats-2:4222',
        NATS_STREAM: 'WRITES',
        NATS_SUBJECT: 'upstream.list-writes',
        NATS_CONSUMER: 'hooks',
        NATS_MAX_ACK_PENDING: '32',
        AMQP_URL: 'amqps://user:pw@rabbit:5671/prod',
        AMQP_QUEUE: 'upstream.list-writes',
        AMQP_PREFETCH: '16',
      }),
    ).toEqual({
      port: 8080,
      databaseUrl: 'postgres://u@db:5432/webhooks',
      temporalAddress: 'temporal:7233',
      temporalNamespace: 'prod',
      internalApiToken: token,
      secretKeys: [
        { id: 'k2', key: expect.anything() },
        { id: 'k1', key: expect.anything() },
      ],
      deliveryTimeoutMs: 5000,
      deliveriesPerBatch: 50,
      retentionDays: 7,
      relayGraceSeconds: 5,
      recoveryRatePerSecond: 100,
      bulkDeliveriesPerWorker: 12,
      workerTaskQueues: 'bulk',
      allowedCidrs: ['127.0.0.0/8', '::1/128'],
      rateLimits: { account: { perSecond: 50, burst: 500 }, address: { perSecond: 2, burst: 8 }, accountInFlight: 9 },
      trustProxyHops: 1,
      httpServer: { headersTimeoutMs: 2_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 1_000, maxConnectionsPerAddress: 32 },
      dataDir: '/var/lib/webhooks',
      logLevel: 'warn',
      smtpUrl: 'smtps://notifier:p%40ss@smtp.example.com:465',
      notifyFrom: 'Hooks <hooks@example.com>',
      notifyMaxPerHour: 5,
      publicBaseUrl: 'https://hooks.example.com',
      probeIntervalsMs: [30_000, 120_000, 3_600_000],
      probeMaxDays: 0,
      outcomeSettleMs: 2000,
      tracing: { exporting: true, traceReceivers: true, traceUrlTemplate: 'https://jaeger.example.com/trace/{traceId}' },
      brokers: {
        nats: {
          url: 'nats://user:pw@nats-1:4222, tls://nats-2:4222',
          stream: 'WRITES',
          subject: 'upstream.list-writes',
          consumer: 'hooks',
          maxAckPending: 32,
        },
        amqp: { url: 'amqps://user:pw@rabbit:5671/prod', queue: 'upstream.list-writes', prefetch: 16 },
      },
    });
  });

  it('reads each key of SECRET_KEYS, the first first, from base64 in either alphabet', () => {
    const keys = loadConfig({ SECRET_KEYS: ` ${SECRET_KEYS} ` }).secretKeys!;
    expect(keys.map(({ id, key }) => [id, key.export()])).toEqual([
      ['k2', NEW_KEY],
      ['k1', OLD_KEY],
    ]);
  });

  it('exports spans when either OTLP endpoint variable is set', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing.exporting).toBe(true);
    expect(loadConfig({ OTEL_SERVICE_NAME: 'hooks' }).tracing.exporting).toBe(false);
  });

  it('caps the connections per address only when set, behind trusted proxies (each connection is from one of them)', () => {
    expect(loadConfig({ TRUST_PROXY_HOPS: '1' }).httpServer.maxConnectionsPerAddress).toBe(0);
    expect(loadConfig({ TRUST_PROXY_HOPS: '1', MAX_CONNECTIONS_PER_ADDRESS: '1000' }).httpServer.maxConnectionsPerAddress).toBe(1000);
    expect(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '0' }).httpServer.maxConnectionsPerAddress).toBe(0);
  });

  it('consumes from a broker only when its URL is set, with the documented names and bounds', () => {
    expect(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222', AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672' }).brokers).toEqual({
      nats: { url: 'nats://127.0.0.1:4222', stream: 'LIST_WRITES', subject: 'list-writes', consumer: 'svc-webhooks', maxAckPending: 32 },
      amqp: { url: 'amqp://guest:guest@127.0.0.1:5672', queue: 'list-writes', prefetch: 32 },
    });
    // The names are read only beside their broker's URL.
    expect(loadConfig({ NATS_STREAM: 'bad.name', AMQP_QUEUE: '' }).brokers).toEqual({ nats: undefined, amqp: undefined });
  });

  it('links notice mails to the API itself unless PUBLIC_BASE_URL says otherwise', () => {
    expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT must be an integer from 0 to 65535 \(got "abc"\)$/],
    [{ PORT: '70000' }, /^PORT must be/],
    [{ DELIVERY_TIMEOUT_MS: '10s' }, /^DELIVERY_TIMEOUT_MS must be an integer/],
    [{ DELIVERIES_PER_BATCH: '0' }, /^DELIVERIES_PER_BATCH must be an integer from 1 to 1000/],
    [{ RECOVERY_RATE_PER_SECOND: '1001' }, /^RECOVERY_RATE_PER_SECOND must be an integer from 1 to 1000/],
    [{ RELAY_GRACE_SECONDS: '0' }, /^RELAY_GRACE_SECONDS must be an integer from 1 to 86400/],
    [{ WORKER_TASK_QUEUES: 'webhooks-bulk' }, /^WORKER_TASK_QUEUES must be one of both, main, bulk \(got "webhooks-bulk"\)$/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must be a postgres:\/\/ connection string$/],
    [{ TEMPORAL_ADDRESS: 'http://temporal' }, /^TEMPORAL_ADDRESS must be host:port/],
    [{ INTERNAL_API_TOKEN: 'short' }, /^INTERNAL_API_TOKEN must be at least 32 characters$/],
    [{ RATE_LIMIT_PER_SECOND: '0' }, /^RATE_LIMIT_PER_SECOND must be an integer from 1 to/],
    [{ RATE_LIMIT_BURST: '2.5' }, /^RATE_LIMIT_BURST must be an integer/],
    [{ TRUST_PROXY_HOPS: '11' }, /^TRUST_PROXY_HOPS must be an integer from 0 to 10/],
    [{ HTTP_HEADERS_TIMEOUT_MS: '500' }, /^HTTP_HEADERS_TIMEOUT_MS must be an integer from 1000 to 300000/],
    [{ HTTP_REQUEST_TIMEOUT_MS: '5000' }, /^HTTP_HEADERS_TIMEOUT_MS \(10000\) must not be more than HTTP_REQUEST_TIMEOUT_MS \(5000\)$/],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' }, /^HTTP_KEEP_ALIVE_TIMEOUT_MS must be an integer from 1000 to 300000/],
    [{ MAX_CONNECTIONS_PER_ADDRESS: '-1' }, /^MAX_CONNECTIONS_PER_ADDRESS must be an integer from 0 to 1000000/],
    [
      { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,localhost' },
      /^WEBHOOK_ALLOWED_CIDRS must be a comma-separated list of CIDRs \(bad entry "localhost"\)$/,
    ],
    [{ SMTP_URL: 'https://smtp.example.com' }, /^SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/],
    [{ SMTP_URL: 'smtp:' }, /^SMTP_URL must be/],
    [{ NOTIFY_FROM: 'nobody' }, /^NOTIFY_FROM must be an email address/],
    [{ NOTIFY_FROM: 'a@example.com\r\nBcc: b@example.com' }, /^NOTIFY_FROM must be/],
    [{ NOTIFY_MAX_PER_HOUR: '-1' }, /^NOTIFY_MAX_PER_HOUR must be an integer from 0 to 100000/],
    [{ PUBLIC_BASE_URL: 'hooks.example.com' }, /^PUBLIC_BASE_URL must be an http:\/\/ or https:\/\/ URL/],
    [{ PROBE_INTERVALS: '5m,' }, /^PROBE_INTERVALS must be a comma-separated list of durations such as 5m,15m,1h .*\(got "5m,"\)$/],
    [{ PROBE_INTERVALS: '1d' }, /^PROBE_INTERVALS must be/],
    [{ PROBE_INTERVALS: '0s' }, /^PROBE_INTERVALS must be/],
    [{ PROBE_INTERVALS: '169h' }, /^PROBE_INTERVALS must be/],
    [{ PROBE_MAX_DAYS: '366' }, /^PROBE_MAX_DAYS must be an integer from 0 to 365/],
    [{ OUTCOME_SETTLE_MS: '999' }, /^OUTCOME_SETTLE_MS must be an integer from 1000 to 600000/],
    [{ NATS_URL: 'http://127.0.0.1:4222' }, /^NATS_URL must be URLs \(nats:\/\/ or tls:\/\/\) with a host/],
    [{ NATS_URL: 'nats://a:4222,b:4222' }, /^NATS_URL must be URLs/],
    [{ NATS_URL: 'nats://a:4222', NATS_STREAM: 'LIST.WRITES' }, /^NATS_STREAM must be 1 to 64 of A-Z a-z 0-9 _ - \(got "LIST.WRITES"\)$/],
    [{ NATS_URL: 'nats://a:4222', NATS_SUBJECT: 'list-writes.>' }, /^NATS_SUBJECT must be a subject of tokens/],
    [{ NATS_URL: 'nats://a:4222', NATS_CONSUMER: 'a b' }, /^NATS_CONSUMER must be/],
    [{ NATS_URL: 'nats://a:4222', NATS_MAX_ACK_PENDING: '0' }, /^NATS_MAX_ACK_PENDING must be an integer from 1 to 10000/],
    [{ AMQP_URL: 'rabbit:5672' }, /^AMQP_URL must be a URL \(amqp:\/\/ or amqps:\/\/\) with a host/],
    [{ AMQP_URL: 'amqp://rabbit', AMQP_QUEUE: 'list writes' }, /^AMQP_QUEUE must be 1 to 200 of/],
    [{ AMQP_URL: 'amqp://rabbit', AMQP_PREFETCH: '10001' }, /^AMQP_PREFETCH must be an integer from 1 to 10000/],
    [{ TRACE_RECEIVERS: 'yes' }, /^TRACE_RECEIVERS must be one of on, off \(got "yes"\)$/],
    [
      { TRACE_URL_TEMPLATE: 'http://localhost:16686/trace/' },
      /^TRACE_URL_TEMPLATE must be an http:\/\/ or https:\/\/ URL containing \{traceId\}/,
    ],
    [{ TRACE_URL_TEMPLATE: 'javascript:alert({traceId})' }, /^TRACE_URL_TEMPLATE must be/],
    [{ SECRET_KEYS: NEW_KEY.toString('base64') }, /^SECRET_KEYS entry 1 must be id:key \(keys separated by commas\)$/],
    [{ SECRET_KEYS: `k2:${NEW_KEY.toString('base64')},` }, /^SECRET_KEYS entry 2 must be id:key/],
    [
      { SECRET_KEYS: `k 2:${NEW_KEY.toString('base64')}` },
      /^SECRET_KEYS entry 1: its id must be 1 to 32 of A-Z a-z 0-9 _ - \(got "k 2"\)$/,
    ],
    [{ SECRET_KEYS: `${'k'.repeat(33)}:${NEW_KEY.toString('base64')}` }, /^SECRET_KEYS entry 1: its id must be/],
    [{ SECRET_KEYS: `k1:${Buffer.alloc(16).toString('base64')}` }, /^SECRET_KEYS entry 1 \("k1"\): its key must be 32 bytes in base64/],
    [{ SECRET_KEYS: `k1:${'!'.repeat(43)}=` }, /^SECRET_KEYS entry 1 \("k1"\): its key must be 32 bytes/],
    [{ SECRET_KEYS: `k1:${NEW_KEY.toString('base64')},k1:${OLD_KEY.toString('base64')}` }, /^SECRET_KEYS names key "k1" twice$/],
  ])('stops with one line naming a malformed value: %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never repeats SMTP_URL, which may hold a password', () => {
    expect(() => loadConfig({ SMTP_URL: 'ftp://user:hunter2@smtp.example.com' })).toThrow(/^(?!.*hunter2)/);
  });

  it('never repeats a broker URL, which may hold a password', () => {
    expect(() => loadConfig({ NATS_URL: 'http://user:hunter2@nats:4222' })).toThrow(/^(?!.*hunter2)/);
    expect(() => loadConfig({ AMQP_URL: 'http://user:hunter2@rabbit:5672' })).toThrow(/^(?!.*hunter2)/);
  });

  it('never repeats a key of SECRET_KEYS, however it is malformed', () => {
    const key = NEW_KEY.toString('base64');
    for (const raw of [key, `k1:${key}:x`, `k1:${key.slice(1)}`, `bad id:${key}`, `k1:${key},k1:${key}`]) {
      expect(() => loadConfig({ SECRET_KEYS: raw }), raw).toThrow(new RegExp(`^(?!.*${key.slice(0, 12).replace(/[+/]/g, '\\$&')})`));
    }
  });
});
