// The service as a test drives it: the real worker and API, on the run's Temporal dev
// server and database, delivering over real HTTPS to receivers that trust a test CA.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { createAccountAccess } from '../../src/api/account-access';
import { createApp, type AppDependencies } from '../../src/api/app';
import { createFrontDoor } from '../../src/api/front-door';
import { createWorkflows, type Workflows } from '../../src/temporal/client';
import { loadConfig } from '../../src/config';
import { newInternalToken } from '../../src/secrets';
import { createLogger } from '../../src/logger';
import type { Resolver } from '../../src/delivery/url-policy';
import { startService, type Service } from '../../src/service';
import { startTracing } from '../../src/tracing/setup';
import type { ListChange, ListWriteBody, WriteAccepted } from '../../src/objects';
import { lifecycleWorkflowId, listWriteWorkflowId } from '../../src/contract/workflows';
import { startResettingServer } from './dead-server';
import { outcomesSignalled } from './outcome-signals';
import { startReceiver, type Receiver, type ReceiverOptions } from './receiver';
import { createTestCa, issueServerCert, type Pem } from '../../scripts/lib/tls';
import { FIXED_SECRET_KEYS } from '../../scripts/lib/fixed-secret-keys';
import { createSecretBox } from '../../src/secret-keys';
import { findSealedSecret } from '../../src/db/webhooks';
import { sdkMetricsUrl } from './runtime';
import { waitFor } from './wait';

/**
 * The stack's HTTP deadline of a delivery or ping: far above what an exchange that should
 * succeed takes on a loaded machine (at 3 s, TLS handshakes under a load of 14 on two cores
 * missed it, and deliveries a test expected never arrived); the few tests that need a receiver
 * to time out wait it out.
 */
const DELIVERY_TIMEOUT_MS = 15_000;

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
  /** Registers a webhook (expecting 201) and returns it with its secret. */
  registerWebhook(token: string, url: string, body?: Record<string, unknown>): Promise<{ id: string; secret: string; url: string }>;
  /** A new account with a list it owns and a webhook at `url` (on list.changed, unless `body` says otherwise). */
  setUpListWebhook(
    url: string,
    body?: Record<string, unknown>,
  ): Promise<{ owner: { id: string; token: string }; webhookId: string; listId: string }>;
  /** Reports a write (expecting 202) and waits until its workflow has made every delivery and reported the outcomes. */
  reportWrite(listId: string, writeId: string, changes?: ListChange[], extra?: Pick<ListWriteBody, 'at'>): Promise<WriteAccepted>;
  /** Waits until GET /v3/webhooks/{id} shows this consecutive-failure count, and returns the webhook. */
  waitForFailureCount(token: string, webhookId: string, count: number): Promise<any>;
  /** The webhook's signing secret as PostgreSQL keeps it, opened. */
  secretOf(webhookId: string): Promise<string>;
  /** What the API starts workflows with, on the suite's task queue, through `client` (the stack's, or one to a Temporal that is down). */
  workflowsOn(client: Client): Workflows;
  /** The handle of the webhook's `webhook/{id}` (its latest run). */
  lifecycle(webhookId: string): WorkflowHandle;
  /** The outcomes each signal to `webhook/{id}` (this run) carried, in the order received. */
  outcomeSignals(webhookId: string): Promise<boolean[][]>;
  /** An HTTPS receiver whose certificate the service trusts; closed by stop(). */
  startReceiver(options?: ReceiverOptions): Promise<Receiver>;
  /**
   * The same API with some dependencies replaced (an unreachable database, say); closed by
   * stop(). Without `access`, one of its own on the app's database, with the stack's limits.
   * Behind the front door as the service serves it, unless `frontDoor` is false: Koa alone.
   */
  startApiWith(
    overrides: Partial<AppDependencies>,
    options?: { frontDoor?: boolean },
  ): Promise<{ url: string; request: RequestFunction; close(): Promise<void> }>;
  stop(): Promise<void>;
}

export type RequestFunction = <T = any>(method: string, path: string, options?: RequestOptions) => Promise<ApiResponse<T>>;

/** Calls the API at `baseUrl` as a client would; JSON in, JSON out. */
export function requestTo(baseUrl: string): RequestFunction {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    const isJson = /json/.test(response.headers.get('content-type') ?? '');
    return { status: response.status, headers: response.headers, body: text ? (isJson ? JSON.parse(text) : text) : undefined };
  };
}

export interface TestStackOptions {
  /** The CA the service trusts for deliveries; default: one of its own. Stacks started one after another on one CA reach the same receivers. */
  ca?: Pem;
  /** The database the service runs on; default: the test run's. */
  databaseUrl?: string;
  /**
   * Resolves webhook host names for both the API's URL check and the sender's dials
   * (ServiceOptions.sender.resolve); default: the system resolver.
   */
  resolve?: Resolver;
}

/**
 * A test file's stack and one receiver on it: started before the file's first test and
 * stopped after its last. After each test the receiver answers 200 again, so that a test
 * that fails while its receiver answers with failures leaves the next one a receiver that
 * answers.
 */
export function useStackWithReceiver(env: Record<string, string> = {}): { readonly stack: TestStack; readonly receiver: Receiver } {
  const suite = {} as { stack: TestStack; receiver: Receiver };
  beforeAll(async () => {
    suite.stack = await startTestStack(env);
    suite.receiver = await suite.stack.startReceiver();
  });
  afterEach(() => suite.receiver?.reset());
  afterAll(() => suite.stack?.stop());
  return suite;
}

/**
 * Test files send many requests from one address, most with fresh accounts: limits no file
 * reaches unless it means to. A test of the limits starts a stack (or an app) with small ones.
 */
export const GENEROUS_RATE_LIMITS = {
  RATE_LIMIT_PER_SECOND: '100000',
  RATE_LIMIT_BURST: '1000000',
  RATE_LIMIT_UNAUTHENTICATED_PER_SECOND: '100000',
  RATE_LIMIT_UNAUTHENTICATED_BURST: '1000000',
};

export async function startTestStack(env: Record<string, string> = {}, options: TestStackOptions = {}): Promise<TestStack> {
  const ca = options.ca ?? (await createTestCa());
  const serverCert = await issueServerCert(ca);
  const internalApiToken = newInternalToken();
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
    DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
    SECRET_KEYS: FIXED_SECRET_KEYS,
    // Its least: tests that wait for a count wait for the hold; those of the order outcomes arrive in keep the default.
    OUTCOME_SETTLE_MS: '1000',
    ...GENEROUS_RATE_LIMITS,
    ...env,
  });
  const secretKeys = config.secretKeys!;
  const taskQueue = `test-${randomBytes(4).toString('hex')}`;
  // Process-wide, as in the service: a file that turns tracing on has it on for its whole run.
  const tracing = await startTracing(config.tracing);
  const service = await startService({
    config,
    databaseUrl: options.databaseUrl ?? inject('databaseUrl'),
    temporalAddress: inject('temporalAddress'),
    internalApiToken,
    secretKeys,
    logger: createLogger('info', logSink),
    taskQueue,
    sender: { ca: [ca.cert], resolve: options.resolve },
    sdkMetricsUrl: sdkMetricsUrl(),
    tracing,
  });
  const receivers: Receiver[] = [];
  /** What startApiWith started: each closed by stop() unless its test closed it. */
  const apis: (() => Promise<void>)[] = [];
  const request = requestTo(service.url);

  const internal = { token: internalApiToken };
  const stack: TestStack = {
    service,
    taskQueue,
    ca,
    internalApiToken,
    logs,
    request,
    async createAccount() {
      const response = await request<{ id: string; token: string }>('POST', '/internal/v3/accounts', {
        ...internal,
        body: { name: 'test account' },
      });
      if (response.status !== 201) throw new Error(`creating an account answered ${response.status}`);
      return response.body;
    },
    putList: (listId, ownerAccountId, memberAccountIds = []) =>
      request('PUT', `/internal/v3/lists/${listId}`, { ...internal, body: { ownerAccountId, memberAccountIds } }),
    async registerWebhook(token, url, body = {}) {
      const response = await request('POST', '/v3/webhooks', { token, body: { url, ...body } });
      if (response.status !== 201) throw new Error(`registering ${url} answered ${response.status}: ${JSON.stringify(response.body)}`);
      return response.body;
    },
    async setUpListWebhook(url, body) {
      const owner = await stack.createAccount();
      const webhook = await stack.registerWebhook(owner.token, url, body);
      const listId = `list-${randomBytes(6).toString('hex')}`;
      await stack.putList(listId, owner.id);
      return { owner, webhookId: webhook.id, listId };
    },
    async reportWrite(listId, writeId, changes = [{ type: 'item.added' }], extra = {}) {
      const response = await request<WriteAccepted>('POST', `/internal/v3/lists/${listId}/writes`, {
        ...internal,
        body: { writeId, changes, ...extra },
      });
      if (response.status !== 202) throw new Error(`write ${writeId} answered ${response.status}: ${JSON.stringify(response.body)}`);
      await service.client.workflow.getHandle(listWriteWorkflowId(listId, writeId)).result();
      return response.body;
    },
    waitForFailureCount: (token, webhookId, count) =>
      waitFor(
        async () => {
          const response = await request('GET', `/v3/webhooks/${webhookId}`, { token });
          return response.body.consecutiveFailures === count ? response.body : undefined;
        },
        { what: `consecutiveFailures ${count} on ${webhookId}` },
      ),
    async secretOf(webhookId) {
      const sealed = await findSealedSecret(service.sql, webhookId);
      if (sealed === null) throw new Error(`webhook ${webhookId} has no secret: it does not exist`);
      return createSecretBox(secretKeys).open(sealed, webhookId);
    },
    workflowsOn: (client) =>
      createWorkflows(client, {
        taskQueue,
        deliveryTimeoutMs: config.deliveryTimeoutMs,
        deliveriesPerBatch: config.deliveriesPerBatch,
        recoveryRatePerSecond: config.recoveryRatePerSecond,
      }),
    lifecycle: (webhookId) => service.client.workflow.getHandle(lifecycleWorkflowId(webhookId)),
    async outcomeSignals(webhookId) {
      const history = await stack.lifecycle(webhookId).fetchHistory();
      return history.events!.map(outcomesSignalled).filter((outcomes) => outcomes !== null);
    },
    async startReceiver(receiverOptions = {}) {
      const receiver = await startReceiver({ ...serverCert, ...receiverOptions });
      receivers.push(receiver);
      return receiver;
    },
    async startApiWith(overrides, { frontDoor = true } = {}) {
      const ownAccess = overrides.access ? null : createAccountAccess(overrides.sql ?? service.sql, config.rateLimits);
      await ownAccess?.start();
      const logger = createLogger('silent');
      const app = createApp({
        access: ownAccess!,
        sql: service.sql,
        secrets: createSecretBox(secretKeys),
        workflows: stack.workflowsOn(service.client),
        logger,
        internalApiToken,
        checkUrl: async (raw) => new URL(raw),
        deliveryTimeoutMs: config.deliveryTimeoutMs,
        traceUrlTemplate: config.tracing.traceUrlTemplate,
        ...overrides,
      });
      const door = frontDoor ? createFrontDoor(app, { access: overrides.access ?? ownAccess!, logger }) : null;
      const server = createServer(door?.handle ?? app.callback()).listen(0, '127.0.0.1');
      await once(server, 'listening');
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        server.close();
        server.closeAllConnections();
        await once(server, 'close');
        door?.stop();
        await ownAccess?.stop();
      };
      apis.push(close);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return { url, request: requestTo(url), close };
    },
    async stop() {
      await Promise.all([...receivers.map((receiver) => receiver.close()), ...apis.map((close) => close())]);
      await service.stop();
      await tracing.shutdown();
    },
  };
  return stack;
}

/** The stack's workflows through a Temporal frontend that resets every connection; close() stops both. */
export async function workflowsWithTemporalDown(stack: TestStack): Promise<{ workflows: Workflows; close(): Promise<void> }> {
  const temporalDown = await startResettingServer();
  const deadTemporal = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${temporalDown.port}`, connectTimeout: '1s' }) });
  return {
    workflows: stack.workflowsOn(deadTemporal),
    async close() {
      await deadTemporal.connection.close();
      await temporalDown.close();
    },
  };
}

/** The stack's API on the same database, with a Temporal frontend that resets every connection; close() stops all three. */
export async function startApiWithTemporalDown(
  stack: TestStack,
): Promise<{ url: string; request: RequestFunction; close(): Promise<void> }> {
  const temporalDown = await workflowsWithTemporalDown(stack);
  const api = await stack.startApiWith({ workflows: temporalDown.workflows });
  return {
    ...api,
    async close() {
      await api.close();
      await temporalDown.close();
    },
  };
}
