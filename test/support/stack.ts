// The service as a test drives it: the real worker and API, on the run's Temporal dev
// server and database, delivering over real HTTPS to receivers that trust a test CA.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startService, type Service } from '../../src/service';
import { startReceiver, type Receiver } from './receiver';
import { createTestCa, issueServerCert, type Pem } from './tls';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestStack {
  service: Service;
  /** The suite's own task queue. */
  taskQueue: string;
  ca: Pem;
  internalApiToken: string;
  /** Every JSON log line the service wrote. */
  logs: string[];
  /** Calls the API; `token` defaults to none. */
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** A new account with its token, made through the internal API. */
  createAccount(): Promise<{ id: string; token: string }>;
  putList(listId: string, ownerAccountId: string, memberAccountIds?: string[]): Promise<ApiResponse>;
  /** An HTTPS receiver whose certificate the service trusts; closed by stop(). */
  startReceiver(): Promise<Receiver>;
  stop(): Promise<void>;
}

export async function startTestStack(env: Record<string, string> = {}): Promise<TestStack> {
  const ca = await createTestCa();
  const serverCert = await issueServerCert(ca);
  const internalApiToken = `int_${randomBytes(24).toString('hex')}`;
  const logs: string[] = [];
  const logSink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({
    PORT: '0',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    DELIVERY_TIMEOUT_MS: '3000',
    ...env,
  });
  const taskQueue = `test-${randomBytes(4).toString('hex')}`;
  const service = await startService({
    config,
    databaseUrl: inject('databaseUrl'),
    temporalAddress: inject('temporalAddress'),
    internalApiToken,
    logger: createLogger('info', logSink),
    taskQueue,
    sender: { ca: [ca.cert] },
  });
  const receivers: Receiver[] = [];

  async function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${service.url}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  const internal = { token: internalApiToken };
  return {
    service,
    taskQueue,
    ca,
    internalApiToken,
    logs,
    request,
    async createAccount() {
      const response = await request<{ id: string; token: string }>('POST', '/internal/v3/accounts', { ...internal, body: { name: 'test account' } });
      if (response.status !== 201) throw new Error(`creating an account answered ${response.status}`);
      return response.body;
    },
    putList: (listId, ownerAccountId, memberAccountIds = []) =>
      request('PUT', `/internal/v3/lists/${listId}`, { ...internal, body: { ownerAccountId, memberAccountIds } }),
    async startReceiver() {
      const receiver = await startReceiver(serverCert);
      receivers.push(receiver);
      return receiver;
    },
    async stop() {
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await service.stop();
    },
  };
}
