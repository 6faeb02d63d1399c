// The receiver libraries end to end: the real service delivers to the example receiver written
// with each library (TypeScript in this process; Python and Go as programs of their own), which
// accepts the secret's rotation, tells a redelivery and a replayed request as duplicates, is
// stopped while writes happen and started again, and then reports the missed cursors as a gap
// and what a recovery brings of them as late; each prints the trace id of what it receives. Given
// the service's feed, each catches up on the writes made while it was down, once it is up again,
// hands every event to its handler once, pushed or pulled, and pulls what a gap says it missed.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../../receivers/typescript/index';
import { eventPayload } from '../../src/delivery/message';
import { signPayload } from '../../src/delivery/signing';
import type { Topic } from '../../src/topics';
// @ts-expect-error: plain JavaScript, as a receiver would write it
import { FileSeenStore, createReceiverServer, printingHandler } from '../../receivers/typescript/example-receiver.mjs';
import { startTestStack, type TestStack } from '../support/stack';
import { issueServerCert, type Pem } from '../../scripts/lib/tls';
import { waitFor } from '../support/wait';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** One line an example receiver prints: a verdict with its delivery's fields, or an error. */
interface VerdictLine {
  outcome?: string;
  error?: string;
  traceId?: string | null;
  webhookId?: string;
  deliveryId?: string;
  event?: string;
  listId?: string;
  cursor?: number;
  at?: string;
  gap?: { first: number; last: number } | null;
  via?: 'push' | 'pull';
  caughtUp?: number;
}

/** Where a receiver catches up from: the service's API, a token with deliveries:read, and the webhook. */
interface FeedSetting {
  url: string;
  token: string;
  webhookId: string;
}

interface LaunchOptions {
  /** 0 for any free port. */
  port: number;
  secrets: string[];
  stateFile: string;
  /** Where the receiver's lines go, across its restarts. */
  verdicts: VerdictLine[];
  /** The feed to catch up from, once it listens. */
  feed?: FeedSetting;
}

interface RunningReceiver {
  port: number;
  stop(): Promise<void>;
}

let stack: TestStack;
let workDir: string;
let serverCert: Pem;
let certFiles: { cert: string; key: string };
let goProgram: string;

beforeAll(async () => {
  stack = await startTestStack();
  serverCert = await issueServerCert(stack.ca);
  workDir = await mkdtemp(path.join(tmpdir(), 'receivers-e2e-'));
  certFiles = { cert: path.join(workDir, 'cert.pem'), key: path.join(workDir, 'key.pem') };
  await writeFile(certFiles.cert, serverCert.cert);
  await writeFile(certFiles.key, serverCert.key);
  // Built once, from the standard library alone: nothing is downloaded.
  goProgram = path.join(workDir, 'example-receiver');
  await promisify(execFile)('go', ['build', '-o', goProgram, './cmd/example-receiver'], { cwd: path.join(root, 'receivers/go') });
});

afterAll(async () => {
  await stack?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/**
 * The Node example receiver, in this process: restarted, it reads its state back from the file as
 * a new process would, and catches up as the program does.
 */
async function launchInProcess({ port, secrets, stateFile, verdicts, feed }: LaunchOptions): Promise<RunningReceiver> {
  const onVerdict = (line: VerdictLine) => verdicts.push(line);
  const receiver = new WebhookReceiver({
    secrets,
    store: new FileSeenStore(stateFile),
    handler: printingHandler(onVerdict),
    ...(feed && { webhookId: feed.webhookId, feed: { baseUrl: feed.url, token: feed.token } }),
  });
  const server = createReceiverServer({ receiver, tls: serverCert, onVerdict });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  if (feed) void receiver.catchUp().then((caughtUp) => onVerdict({ caughtUp }));
  return {
    port: (server.address() as AddressInfo).port,
    async stop() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

/** An example receiver program, started with the environment every example reads; it prints {"listening": port} first. */
function programLauncher(command: () => string, args: string[]) {
  return async ({ port, secrets, stateFile, verdicts, feed }: LaunchOptions): Promise<RunningReceiver> => {
    const child = spawn(command(), args, {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        TLS_CERT: certFiles.cert,
        TLS_KEY: certFiles.key,
        WEBHOOK_SECRETS: secrets.join(','),
        SEEN_STATE_FILE: stateFile,
        ...(feed && { SVC_API_URL: feed.url, SVC_API_TOKEN: feed.token, WEBHOOK_ID: feed.webhookId }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const exited = once(child, 'exit');
    const listening = new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (text) => {
        const line = JSON.parse(text);
        if (typeof line.listening === 'number') resolve(line.listening);
        else verdicts.push(line);
      });
      void exited.then(([code]) => reject(new Error(`${command()} exited with ${code}: ${stderr.join('')}`)));
    });
    return {
      port: await listening,
      async stop() {
        child.kill('SIGTERM');
        await exited;
      },
    };
  };
}

const languages: [string, (options: LaunchOptions) => Promise<RunningReceiver>][] = [
  ['TypeScript', launchInProcess],
  ['Python', programLauncher(() => 'python3', ['receivers/python/example_receiver.py'])],
  ['Go', programLauncher(() => goProgram, [])],
];

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** What a verdict line says of its trace: null for a request without traceparent, which the service sends only when told to. */
const traceIdOrNull = expect.toBeOneOf([null, expect.stringMatching(/^[0-9a-f]{32}$/)]);

/** Sends a request to the receiver ourselves, as someone who captured one would replay it. */
function replay(port: number, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/hooks',
        ca: stack.ca.cert,
        headers: { ...headers, 'content-type': 'application/json' },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode!);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** The request the service sent for a verdict's delivery: the body rebuilt as the service builds it, signed with `secret`. */
function requestOf(line: VerdictLine, secret: string) {
  const body = eventPayload(line.event as Topic, line.listId!, line.cursor!, line.at!);
  const headers = {
    'svc-event': line.event!,
    'svc-webhook': line.webhookId!,
    'svc-delivery': line.deliveryId!,
    'svc-signature': signPayload(body, secret),
  };
  return { headers, body };
}

describe.each(languages)('the %s receiver, on real deliveries', (language, launch) => {
  it('verifies through a rotation, tells duplicates, and reports the writes missed while it was down as a gap, then as late', async () => {
    const [firstSecret, secondSecret] = [newSecret(), newSecret()];
    const stateFile = path.join(workDir, `${language}-seen.jsonl`);
    const verdicts: VerdictLine[] = [];
    const verdict = (index: number) => waitFor(async () => verdicts[index], { what: `verdict ${index}: ${JSON.stringify(verdicts)}` });
    // The owner's own secrets, set up in the receiver before the webhook is moved to each.
    let receiver = await launch({ port: 0, secrets: [firstSecret, secondSecret], stateFile, verdicts });
    const { owner, webhookId, listId } = await stack.setUpListWebhook(`https://127.0.0.1:${receiver.port}/hooks`);
    const token = owner.token;
    expect(await verdict(0)).toEqual({ outcome: 'ping', traceId: traceIdOrNull });

    const rotate = async (secret: string) =>
      expect((await stack.request('POST', `/v3/webhooks/${webhookId}/secret`, { token, body: { secret } })).status).toBe(200);
    const redeliver = async (deliveryId: string) => {
      const response = await stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${deliveryId}/redeliveries`, { token });
      expect(response.body).toMatchObject({ delivered: true });
      return response.body.deliveryId as string;
    };

    await rotate(firstSecret);
    await stack.reportWrite(listId, 'w1');
    const first = await verdict(1);
    await rotate(secondSecret);
    await stack.reportWrite(listId, 'w2');
    const second = await verdict(2);

    // A redelivery (the same body, signed with the current secret, under a new SVC-Delivery), and a
    // replayed request, with a traceparent of our own: the receiver prints its trace id.
    const redelivered = await redeliver(first.deliveryId!);
    expect(await verdict(3)).toMatchObject({ outcome: 'duplicate', cursor: 1, deliveryId: redelivered });
    const secondRequest = requestOf(second, secondSecret);
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    expect(await replay(receiver.port, { ...secondRequest.headers, traceparent }, secondRequest.body)).toBe(204);
    expect(await verdict(4)).toMatchObject({ outcome: 'duplicate', cursor: 2, deliveryId: second.deliveryId, traceId });

    // Down while three writes happen: three failed deliveries, not enough to pause the webhook.
    await receiver.stop();
    for (const writeId of ['w3', 'w4', 'w5']) await stack.reportWrite(listId, writeId);
    expect(await stack.waitForFailureCount(token, webhookId, 3)).toMatchObject({ status: 'active' });

    // Up again on the same port and state, the rotation finished: only the second secret now.
    receiver = await launch({ port: receiver.port, secrets: [secondSecret], stateFile, verdicts });
    await stack.reportWrite(listId, 'w6');
    expect(await verdict(5)).toMatchObject({ outcome: 'new', cursor: 6, gap: { first: 3, last: 5 } });

    // The missed deliveries, brought by a recovery since the first failure, oldest first, come late;
    // one of them redelivered by hand once more, a duplicate.
    const failed = (await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?outcome=failed`, { token })).body.data.reverse();
    expect(failed.map((entry: { cursor: number }) => entry.cursor)).toEqual([3, 4, 5]);
    const recovery = await stack.request('POST', `/v3/webhooks/${webhookId}/recoveries`, { token, body: { since: failed[0].attemptedAt } });
    expect(recovery).toMatchObject({ status: 202, body: { total: 3 } });
    const recovered = await waitFor(async () => {
      const { body } = await stack.request('GET', `/v3/webhooks/${webhookId}/recoveries/${recovery.body.id}`, { token });
      return body.status === 'completed' ? body : undefined;
    });
    expect(recovered).toMatchObject({ total: 3, sent: 3, delivered: 3, failed: 0 });
    await redeliver(failed[0].id);
    // A request signed with the retired secret is refused, however genuine it was.
    const firstRequest = requestOf(first, firstSecret);
    expect(await replay(receiver.port, firstRequest.headers, firstRequest.body)).toBe(401);
    await verdict(10);
    await receiver.stop();

    expect(verdicts.map(({ outcome, error, cursor, gap }) => (error ? { error } : { outcome, cursor, gap }))).toEqual([
      { outcome: 'ping' },
      { outcome: 'new', cursor: 1, gap: null },
      { outcome: 'new', cursor: 2, gap: null },
      { outcome: 'duplicate', cursor: 1, gap: null },
      { outcome: 'duplicate', cursor: 2, gap: null },
      { outcome: 'new', cursor: 6, gap: { first: 3, last: 5 } },
      { outcome: 'late', cursor: 3, gap: null },
      { outcome: 'late', cursor: 4, gap: null },
      { outcome: 'late', cursor: 5, gap: null },
      { outcome: 'duplicate', cursor: 3, gap: null },
      { error: 'invalid_signature' },
    ]);
    expect(new Set(verdicts.slice(1).map((line) => line.webhookId ?? webhookId))).toEqual(new Set([webhookId]));
    // Every verdict line names a trace id, or null: the service sends traceparent only when its operator turns it on.
    const verdictLines = verdicts.filter((line) => !line.error);
    expect(verdictLines.map((line) => line.traceId)).toEqual(verdictLines.map(() => traceIdOrNull));
  });

  it('catches up on the writes made while it was down, goes on with pushes, hands each event once, and pulls what a gap says it missed', async () => {
    const secret = newSecret();
    const stateFile = path.join(workDir, `${language}-catch-up.jsonl`);
    const verdicts: VerdictLine[] = [];
    const verdict = (index: number) => waitFor(async () => verdicts[index], { what: `verdict ${index}: ${JSON.stringify(verdicts)}` });
    let receiver = await launch({ port: 0, secrets: [secret], stateFile, verdicts });
    const { owner, webhookId, listId } = await stack.setUpListWebhook(`https://127.0.0.1:${receiver.port}/hooks`);
    const token = owner.token;
    await verdict(0);
    expect((await stack.request('POST', `/v3/webhooks/${webhookId}/secret`, { token, body: { secret } })).status).toBe(200);
    await stack.reportWrite(listId, 'w1');
    await verdict(1);

    // Down while three writes happen: three failed deliveries, in the feed once it shows them (a
    // write's item is read once every transaction older than it has ended).
    await receiver.stop();
    for (const writeId of ['w2', 'w3', 'w4']) await stack.reportWrite(listId, writeId);
    await stack.waitForFailureCount(token, webhookId, 3);
    await waitFor(
      async () => (await stack.request('GET', `/v3/webhooks/${webhookId}/events`, { token })).body.data.length === 4 || undefined,
      {
        what: 'the feed to show the four writes',
      },
    );

    // Up again, it catches up from the feed, then a live push.
    const feed = { url: stack.service.url, token, webhookId };
    receiver = await launch({ port: receiver.port, secrets: [secret], stateFile, verdicts, feed });
    await waitFor(async () => verdicts.find((line) => line.caughtUp !== undefined), { what: `caughtUp: ${JSON.stringify(verdicts)}` });
    await stack.reportWrite(listId, 'w5');
    await verdict(6);

    // A write while the webhook is paused is not pushed; the next push shows the gap, which the receiver pulls.
    const setStatus = async (status: string) =>
      expect((await stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status } })).status).toBe(200);
    await setStatus('paused');
    await stack.reportWrite(listId, 'w6');
    await setStatus('active');
    await stack.reportWrite(listId, 'w7');
    await verdict(8);
    await receiver.stop();

    expect(
      verdicts.map(({ outcome, cursor, gap, via, caughtUp }) => (caughtUp === undefined ? { outcome, cursor, gap, via } : { caughtUp })),
    ).toEqual([
      { outcome: 'ping', cursor: undefined, gap: undefined, via: undefined },
      { outcome: 'new', cursor: 1, gap: null, via: 'push' },
      { outcome: 'new', cursor: 2, gap: null, via: 'pull' },
      { outcome: 'new', cursor: 3, gap: null, via: 'pull' },
      { outcome: 'new', cursor: 4, gap: null, via: 'pull' },
      { caughtUp: 3 },
      { outcome: 'new', cursor: 5, gap: null, via: 'push' },
      { outcome: 'new', cursor: 7, gap: { first: 6, last: 6 }, via: 'push' },
      { outcome: 'late', cursor: 6, gap: null, via: 'pull' },
    ]);
    // A pulled event carries the delivery id of the push it stands for: the failed and the skipped ones.
    const logged = (await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event`, { token })).body.data;
    const idOf = (cursor: number) => logged.find((entry: { cursor: number }) => entry.cursor === cursor).id;
    const pulled = verdicts.filter((line) => line.via === 'pull');
    expect(pulled.map((line) => line.deliveryId)).toEqual([2, 3, 4, 6].map(idOf));
  });
});
