// The service's parts as separate processes (`node dist/src/main.js api|worker`) on a Temporal
// server and a PostgreSQL database the test provides, so that a test can kill one with
// SIGKILL or restart it, as a machine failure or a deploy would; and the ledger that proves
// every accepted write's delivery was received once or recorded as failed.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createSql, type Sql } from '../../src/db/sql';
import { listWriteWorkflowId } from '../../src/contract/workflows';
import type { Topic } from '../../src/topics';
import { freePort } from './ports';
import { startReceiver, type Receiver } from './receiver';
import { requestTo, type RequestFunction } from './stack';
import { createTestCa, issueServerCert } from '../../scripts/lib/tls';
import { FIXED_SECRET_KEYS } from '../../scripts/lib/fixed-secret-keys';
import { waitFor } from './wait';

const MAIN = path.resolve(__dirname, '../../dist/src/main.js');
const INTERNAL_TOKEN = `int_${'p'.repeat(40)}`;

export interface PartProcess {
  readonly url: string;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts one part and waits until its /healthz answers. Its output is kept for a failure message. */
export async function startPart(part: 'api' | 'worker', env: Record<string, string>, port: number): Promise<PartProcess> {
  const child: ChildProcess = spawn(process.execPath, [MAIN, part], {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`${part} exited (${child.exitCode}): ${output.slice(-2000)}`);
      const response = await fetch(`${url}/healthz`).catch(() => null);
      return response?.ok ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `the ${part} process to answer /healthz` },
  );
  const exited = () => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit').then(() => {}));
  return {
    url,
    async kill() {
      child.kill('SIGKILL');
      await exited();
    },
    async stop() {
      child.kill('SIGTERM');
      await exited();
    },
  };
}

export interface WriteAnswer {
  status: number;
  cursor?: number;
}

export interface Ledger {
  /** Accepted writes whose delivery was neither received nor recorded as failed. */
  lost: number[];
  /** Cursors received more than once. */
  duplicates: number[];
  /** Deliveries recorded as our own failure (lost with a worker). */
  internal: number;
  /** Other failures: the receiver always answers 2xx, so there must be none. */
  failedOtherwise: string[];
}

/** What the parts share, and the test's side of them: a receiver, the API, the ledger. */
export interface ServiceProcesses {
  /** The environment every part starts with (PORT is set per part). */
  env: Record<string, string>;
  /** The API's port: an API started on it again answers at the same address. */
  apiPort: number;
  /** The internal API's Bearer token, as request options. */
  internal: { token: string };
  receiver: Receiver;
  request: RequestFunction;
  /** The service's database, for what the API does not show. */
  sql: Sql;
  /** Registers a webhook at the receiver's `path` for the account of `token` (expecting 201), on `events` (default: list.changed). */
  registerWebhook(token: string, path: string, events?: readonly Topic[]): Promise<{ id: string; secret: string }>;
  /** An account with a list and a webhook at `/{name}` on it, registered through the API (with the secret it answered). */
  setUp(name: string): Promise<{ accountId: string; listId: string; webhookId: string; secret: string; path: string; token: string }>;
  /** Reports the writes, `concurrency` at a time; `answers` fills as they come, for a test that acts part-way. */
  report(listId: string, writeIds: string[], concurrency?: number, answers?: Map<string, WriteAnswer>): Promise<Map<string, WriteAnswer>>;
  /** Waits until every write's workflow has finished (through restarts). */
  settle(listId: string, writeIds: string[]): Promise<void>;
  /** Every accepted write's delivery (by cursor), received or recorded as failed; lost and duplicates listed. */
  ledger(scenario: { listId: string; path: string }, cursors: number[]): Promise<Ledger>;
  close(): Promise<void>;
}

export async function prepareServiceProcesses(options: {
  databaseUrl: string;
  temporalAddress: string;
  dir: string;
}): Promise<ServiceProcesses> {
  const ca = await createTestCa();
  const receiver = await startReceiver(await issueServerCert(ca));
  const caFile = path.join(options.dir, 'ca.pem');
  await writeFile(caFile, ca.cert);
  const apiPort = await freePort();
  const sql: Sql = createSql(options.databaseUrl, { max: 2 });
  const client = new Client({ connection: Connection.lazy({ address: options.temporalAddress }) });
  const request = requestTo(`http://127.0.0.1:${apiPort}`);
  const internal = { token: INTERNAL_TOKEN };
  async function registerWebhook(token: string, path: string, events?: readonly Topic[]) {
    const webhook = await request('POST', '/v3/webhooks', { token, body: { url: receiver.urlFor(path), events } });
    if (webhook.status !== 201) throw new Error(`registering ${path} answered ${webhook.status}: ${JSON.stringify(webhook.body)}`);
    return { id: webhook.body.id as string, secret: webhook.body.secret as string };
  }

  return {
    env: {
      DATABASE_URL: options.databaseUrl,
      TEMPORAL_ADDRESS: options.temporalAddress,
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      SECRET_KEYS: FIXED_SECRET_KEYS,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: caFile,
      DELIVERY_TIMEOUT_MS: '2000',
    },
    apiPort,
    internal,
    receiver,
    request,
    sql,
    registerWebhook,
    async setUp(name) {
      const account = (await request('POST', '/internal/v3/accounts', { ...internal, body: { name } })).body;
      const listId = `processes-${name}`;
      const list = await request('PUT', `/internal/v3/lists/${listId}`, { ...internal, body: { ownerAccountId: account.id } });
      if (list.status !== 201) throw new Error(`creating list ${listId} answered ${list.status}`);
      const webhook = await registerWebhook(account.token, `/${name}`);
      return {
        accountId: account.id as string,
        listId,
        webhookId: webhook.id,
        secret: webhook.secret,
        path: `/${name}`,
        token: account.token as string,
      };
    },
    async report(listId, writeIds, concurrency = 20, answers = new Map()) {
      const queue = [...writeIds];
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let writeId = queue.shift(); writeId; writeId = queue.shift()) {
            const body = { writeId, changes: [{ type: 'list.updated' }] };
            const answer = await request('POST', `/internal/v3/lists/${listId}/writes`, { ...internal, body }).catch(() => ({
              status: 0,
              body: null,
            }));
            answers.set(writeId, { status: answer.status, cursor: answer.body?.cursor });
          }
        }),
      );
      return answers;
    },
    async settle(listId, writeIds) {
      for (const writeId of writeIds) {
        await waitFor(
          () =>
            client.workflow
              .getHandle(listWriteWorkflowId(listId, writeId))
              .result()
              .then(() => true),
          {
            timeoutMs: 120_000,
            intervalMs: 250,
            what: `${listWriteWorkflowId(listId, writeId)} to finish`,
          },
        );
      }
    },
    async ledger(scenario, cursors) {
      const received = new Map<number, number>();
      for (const delivery of receiver.requests.filter((r) => r.path === scenario.path && r.headers['svc-event'] !== 'ping')) {
        const { cursor } = JSON.parse(delivery.rawBody.toString('utf8'));
        received.set(cursor, (received.get(cursor) ?? 0) + 1);
      }
      const failedRows = await sql<{ cursor: string; error: string }[]>`
        SELECT cursor, error FROM deliveries WHERE list_id = ${scenario.listId} AND outcome = 'failed'`;
      const failed = new Map(failedRows.map((row) => [Number(row.cursor), row.error]));
      return {
        lost: cursors.filter((cursor) => !received.has(cursor) && !failed.has(cursor)),
        duplicates: [...received].filter(([, count]) => count > 1).map(([cursor]) => cursor),
        internal: [...failed.values()].filter((error) => error === 'internal').length,
        failedOtherwise: [...failed.values()].filter((error) => error !== 'internal'),
      };
    },
    async close() {
      await receiver.close();
      await client.connection.close();
      await sql.end({ timeout: 1 });
    },
  };
}

/** `prefix-0` … `prefix-(count-1)`. */
export const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
