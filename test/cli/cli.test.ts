// The command line end to end: `svc-webhooks` as a child process with its real stdout and
// stderr, against the real service, its test events checked by the TypeScript receiver library.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { WebhookReceiver, type Verdict } from '../../receivers/typescript/index';
import { issueClientCert } from '../../scripts/lib/tls';
import { SCOPES } from '../../src/scopes';
import { useStackWithReceiver } from '../support/stack';
import { writeTerminalPicture } from '../support/terminal-picture';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();

// The command line's source, bundled as `npm run build` would compile it (its packages stay
// in node_modules), so that the test needs no build first.
const CLI = path.resolve('node_modules/.cache/svc-webhooks-test/svc-webhooks.cjs');
let home: string;

beforeAll(async () => {
  await build({
    entryPoints: ['src/cli/main.ts'],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    packages: 'external',
    outfile: CLI,
    logLevel: 'warning',
  });
  home = mkdtempSync(path.join(os.tmpdir(), 'svc-webhooks-cli-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** The command line's environment: its own config folder, no API settings but those given. */
function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
  delete clean.SVC_WEBHOOKS_API_URL;
  delete clean.SVC_WEBHOOKS_TOKEN;
  return { ...clean, ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env = environment()): { child: ChildProcess; output: Run; done: Promise<Run> } {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: Run = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString('utf8')));
  const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ ...output, code })));
  return { child, output, done };
}

const run = (args: string[], env?: NodeJS.ProcessEnv) => start(args, env).done;

describe('svc-webhooks', () => {
  let token: string;
  let webhookId: string;
  let secret: string;
  const url = () => suite.receiver.urlFor('/cli/receiver');

  it('login saves the API URL and token in a file only its owner can read, after checking the token', async () => {
    const account = await suite.stack.createAccount();
    token = account.token;
    const refused = await run(['login', '--api-url', suite.stack.service.url, '--token', 'tok_not-a-real-token']);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^Error UNAUTHORIZED \(HTTP 401\): /) });

    const loggedIn = await run(['login', '--api-url', suite.stack.service.url, '--token', token]);
    expect(loggedIn.code, loggedIn.stderr).toBe(0);
    expect(loggedIn.stdout).toContain(`with the token initial (${SCOPES.join(', ')})`);
    const file = path.join(home, 'config', 'svc-webhooks', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ apiUrl: suite.stack.service.url, token });
  });

  it('creates a webhook (--json: the API object) and lists it as a table', async () => {
    const created = await run(['webhooks', 'create', url(), '--events', 'item.checked,list.changed', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const webhook = JSON.parse(created.stdout);
    expect(webhook).toMatchObject({ url: url(), events: ['item.checked', 'list.changed'], secret: expect.stringMatching(/^whsec_/) });
    webhookId = webhook.id;
    secret = webhook.secret;

    const listed = await run(['webhooks', 'list']);
    const [heading, row] = listed.stdout.trimEnd().split('\n');
    expect(heading.split(/\s+/)).toEqual(['ID', 'URL', 'STATUS', 'FAILURES', 'TOPICS', 'LISTS']);
    expect(row.split(/\s+/)).toEqual([webhookId, url(), 'active', '0', 'item.checked,list.changed', 'all']);
  });

  it('triggers a test event that the receiver library verifies, and the log shows it', async () => {
    const triggered = await run(['trigger', 'item.checked', '--webhook', webhookId]);
    expect(triggered.code, triggered.stderr).toBe(0);
    const [, deliveryId] = /^Test event (dlv_[0-9a-f]{24}) delivered: HTTP 200 in \d+ ms\n$/.exec(triggered.stdout) ?? [];
    expect(deliveryId, triggered.stdout).toBeDefined();

    const arrived = suite.receiver.requests.find((request) => request.headers['svc-delivery'] === deliveryId)!;
    const verdict = await new WebhookReceiver({ secrets: secret, webhookId }).receive(arrived.headers, arrived.rawBody);
    expect(verdict).toMatchObject({ outcome: 'test', delivery: { event: 'item.checked', listId: 'test', cursor: 0, deliveryId } });

    const log = await run(['deliveries', 'list', '--webhook', webhookId, '--kind', 'test', '--json']);
    expect(JSON.parse(log.stdout).data).toEqual([expect.objectContaining({ id: deliveryId, kind: 'test', outcome: 'delivered' })]);
  });

  it('deliveries tail prints each new entry of the log as it comes, until Ctrl-C', async () => {
    const tail = start(['deliveries', 'tail', '--webhook', webhookId]);
    await waitFor(async () => (tail.output.stdout.startsWith('ATTEMPTED') ? true : undefined), { what: 'the tail to print its heading' });
    const { body: sent } = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/test-events`, {
      token,
      body: { event: 'list.changed' },
    });
    await waitFor(async () => (tail.output.stdout.includes(sent.deliveryId) ? true : undefined), {
      what: 'the tail to print the new entry',
    });
    const line = tail.output.stdout.split('\n').find((entry) => entry.includes(sent.deliveryId))!;
    expect(line.split(/\s+/).slice(1, 5)).toEqual([sent.deliveryId, 'test', 'list.changed', 'delivered']);
    tail.child.kill('SIGINT');
    expect((await tail.done).code).toBe(0);
  });

  it('listen forwards a test event and a real write to a local http server, which the receiver library verifies', async () => {
    const owner = await suite.stack.createAccount();
    const env = environment({ SVC_WEBHOOKS_API_URL: suite.stack.service.url, SVC_WEBHOOKS_TOKEN: owner.token });
    // The developer's server: plain http on this machine, verifying each delivery with the secret listen printed.
    const developer: { receiver?: WebhookReceiver } = {};
    const verdicts: Verdict[] = [];
    const local = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void developer.receiver!.receive(request.headers, Buffer.concat(chunks)).then((verdict) => {
          verdicts.push(verdict);
          response.writeHead(200, { 'content-type': 'text/plain' }).end('verified');
        });
      });
    });
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    const forwardTo = `http://localhost:${(local.address() as AddressInfo).port}/hook`;

    const listening = start(['listen', '--forward-to', forwardTo, '--events', 'item.checked,item.added'], env);
    const ready = await waitFor(async () => /^Ready\. Signing secret: (whsec_\S+)$/m.exec(listening.output.stdout) ?? undefined, {
      what: 'listen to print its Ready line',
    });
    const [, sessionId] = /^Relay session (wh_[0-9a-f]{24}): forwarding item\.checked, item\.added to /m.exec(listening.output.stdout)!;
    developer.receiver = new WebhookReceiver({ secrets: ready[1], webhookId: sessionId });
    const [, row] = (await run(['webhooks', 'list'], env)).stdout.trimEnd().split('\n');
    expect(row.split(/\s+/).slice(0, 3)).toEqual([sessionId, `relay://${sessionId}`, 'relay']);
    const tail = start(['deliveries', 'tail', '--webhook', sessionId], env);
    await waitFor(async () => (tail.output.stdout.startsWith('ATTEMPTED') ? true : undefined), { what: 'the tail to print its heading' });

    const triggered = await run(['trigger', 'item.checked', '--webhook', sessionId], env);
    expect(triggered.stdout).toMatch(/^Test event dlv_[0-9a-f]{24} delivered: HTTP 200 in \d+ ms\n$/);
    const listId = `cli-${sessionId}`;
    await suite.stack.putList(listId, owner.id);
    await suite.stack.reportWrite(listId, 'cli-write', [{ type: 'item.added' }]);
    expect(verdicts).toEqual([
      expect.objectContaining({ outcome: 'test', delivery: expect.objectContaining({ event: 'item.checked', cursor: 0 }) }),
      expect.objectContaining({ outcome: 'new', delivery: expect.objectContaining({ event: 'item.added', listId, cursor: 1 }) }),
    ]);
    const forwarded = listening.output.stdout.split('\n').filter((line) => line.includes(' -> '));
    expect(forwarded.map((line) => line.split(/\s+/).slice(1, 5))).toEqual([
      ['item.checked', expect.stringMatching(/^dlv_/), '->', '200'],
      ['item.added', expect.stringMatching(/^dlv_/), '->', '200'],
    ]);

    const log = await run(['deliveries', 'list', '--webhook', sessionId, '--json'], env);
    const entries = JSON.parse(log.stdout).data;
    expect(entries).toEqual([
      expect.objectContaining({ kind: 'event', event: 'item.added', outcome: 'delivered', statusCode: 200 }),
      expect.objectContaining({ kind: 'test', event: 'item.checked', outcome: 'delivered', statusCode: 200 }),
    ]);
    await waitFor(async () => (entries.every(({ id }: { id: string }) => tail.output.stdout.includes(id)) ? true : undefined), {
      what: 'the tail to print both deliveries',
    });
    for (const { child } of [listening, tail]) child.kill('SIGINT');
    expect((await listening.done).code).toBe(0);
    expect((await tail.done).code).toBe(0);
    local.close();
    // docs/receiving.md shows this run.
    writeTerminalPicture('docs/listen-and-tail.png', [
      { command: `npx svc-webhooks listen --forward-to ${forwardTo} --events item.checked,item.added`, output: listening.output.stdout },
      { command: `npx svc-webhooks trigger item.checked --webhook ${sessionId}`, output: triggered.stdout },
      { command: `npx svc-webhooks deliveries tail --webhook ${sessionId}`, output: tail.output.stdout },
    ]);
  });

  it('listen forwards to a local https server it trusts (NODE_EXTRA_CA_CERTS), and says when it cannot reach one', async () => {
    const owner = await suite.stack.createAccount();
    const caFile = path.join(home, 'local-ca.pem');
    writeFileSync(caFile, suite.stack.ca.cert);
    const env = environment({
      SVC_WEBHOOKS_API_URL: suite.stack.service.url,
      SVC_WEBHOOKS_TOKEN: owner.token,
      NODE_EXTRA_CA_CERTS: caFile,
    });
    const listening = start(['listen', '--forward-to', suite.receiver.urlFor('/cli/listen-https'), '--json'], env);
    await waitFor(async () => (listening.output.stdout.includes('Ready. Signing secret: whsec_') ? true : undefined), {
      what: 'listen to print its Ready line',
    });
    const [, sessionId] = /^Relay session (wh_[0-9a-f]{24})/m.exec(listening.output.stdout)!;
    const sent = await run(['trigger', 'item.removed', '--webhook', sessionId, '--json'], env);
    expect(JSON.parse(sent.stdout)).toMatchObject({ delivered: true, statusCode: 200 });
    const arrived = suite.receiver.requests.filter((request) => request.path === '/cli/listen-https');
    expect(arrived.map((request) => request.headers['svc-event'])).toEqual(['item.removed']);
    listening.child.kill('SIGINT');
    expect((await listening.done).code).toBe(0);

    const unreachable = start(['listen', '--forward-to', 'http://127.0.0.1:1/nothing'], env);
    await waitFor(async () => (unreachable.output.stdout.includes('Ready.') ? true : undefined), { what: 'the second Ready line' });
    const [, otherId] = /^Relay session (wh_[0-9a-f]{24})/m.exec(unreachable.output.stdout)!;
    const failed = await run(['trigger', 'item.added', '--webhook', otherId, '--json'], env);
    expect(JSON.parse(failed.stdout)).toMatchObject({ delivered: false, statusCode: null, error: 'connection' });
    unreachable.child.kill('SIGINT');
    expect((await unreachable.done).code).toBe(0);
  });

  it("events prints the feed a line an event, --json the API's objects, and --follow a new write's events as they are recorded", async () => {
    const {
      owner,
      webhookId: hook,
      listId,
    } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/cli/events'), {
      events: ['list.changed', 'item.added'],
    });
    const env = environment({ SVC_WEBHOOKS_API_URL: suite.stack.service.url, SVC_WEBHOOKS_TOKEN: owner.token });
    await suite.stack.reportWrite(listId, 'cli-1', [{ type: 'item.added' }]);
    const items = await waitFor(
      async () => {
        const page = await suite.stack.request('GET', `/v3/webhooks/${hook}/events`, { token: owner.token });
        return page.body.data.length === 2 ? page.body.data : undefined;
      },
      { what: "the write's two items in the feed" },
    );

    const printed = await run(['events', '--webhook', hook], env);
    expect(printed.code, printed.stderr).toBe(0);
    expect(
      printed.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('  ')),
    ).toEqual(
      items.map((item: Record<string, unknown>) => [item.at, item.event, listId, String(item.cursor), item.deliveryId, item.position]),
    );
    const json = await run(['events', '--webhook', hook, '--after', items[0].position, '--json'], env);
    expect(
      json.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([items[1]]);

    const follow = start(['events', '--webhook', hook, '--after', items[1].position, '--follow'], env);
    // item.checked fires list.changed alone for this webhook: one event, cursor 2.
    await suite.stack.reportWrite(listId, 'cli-2', [{ type: 'item.checked' }]);
    await waitFor(async () => (follow.output.stdout.includes(`  list.changed  ${listId}  2  dlv_`) ? true : undefined), {
      what: "--follow to print the new write's event",
    });
    follow.child.kill('SIGINT');
    expect((await follow.done).code).toBe(0);
    expect(follow.output.stdout.trimEnd().split('\n')).toHaveLength(1);
  });

  it("prints the API's error code and message and exits 1; a command used wrongly prints its usage and exits 2", async () => {
    const missing = await run(['webhooks', 'get', 'wh_000000000000000000000000']);
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: 'Error WEBHOOK_NOT_FOUND (HTTP 404): No such webhook.\n' });
    const badTopic = await run(['trigger', 'item.renamed', '--webhook', webhookId]);
    expect(badTopic).toMatchObject({ code: 1, stderr: expect.stringMatching(/^Error VALIDATION_FAILED \(HTTP 400\): /) });
    const noWebhook = await run(['trigger', 'item.checked']);
    expect(noWebhook).toMatchObject({
      code: 2,
      stderr: 'missing --webhook\nUsage: svc-webhooks trigger <topic> --webhook <webhook-id> [--list <list-id>]\n',
    });
  });

  it('takes the API URL and token from the environment over the saved ones', async () => {
    const other = await suite.stack.createAccount();
    const listed = await run(['webhooks', 'list', '--json'], environment({ SVC_WEBHOOKS_TOKEN: other.token }));
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it("sets a receiver's credentials: headers, OAuth2 and a client certificate, each proven by a receiver that demands it, and removes them; never printing one", async () => {
    const owner = await suite.stack.createAccount();
    const env = environment({ SVC_WEBHOOKS_API_URL: suite.stack.service.url, SVC_WEBHOOKS_TOKEN: owner.token });
    const [apiKey, clientSecret, accessToken] = ['cli-api-key-3e9a01', 'cli-client-secret-c7d215', 'cli-access-token-52fb8e'];
    const urlPath = '/cli/gateway';
    // The receiver demands the key, then the bearer token the token endpoint gives for the client secret.
    let demanded: [header: string, value: string] = ['x-api-key', apiKey];
    suite.receiver.respondWith((request) => ({
      status: request.path !== urlPath || request.headers[demanded[0]] === demanded[1] ? 200 : 401,
    }));
    const tokenEndpoint = await suite.stack.startReceiver();
    const basic = `Basic ${Buffer.from(`cli-client:${clientSecret}`).toString('base64')}`;
    tokenEndpoint.respondWith((request) =>
      request.headers.authorization === basic
        ? {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 600 }),
          }
        : { status: 401 },
    );
    const printed: string[] = [];
    const runAs = async (args: string[]) => {
      const result = await run(args, env);
      printed.push(result.stdout, result.stderr);
      return result;
    };

    const created = await runAs([
      'webhooks',
      'create',
      suite.receiver.urlFor(urlPath),
      '--header',
      `X-Api-Key: ${apiKey}`,
      '--header',
      'X-Tenant:cli',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const webhook = JSON.parse(created.stdout);
    expect(webhook.auth).toEqual({ type: 'headers', headerNames: ['X-Api-Key', 'X-Tenant'] });
    expect(suite.receiver.requests.filter((request) => request.path === urlPath).at(-1)?.headers).toMatchObject({
      'x-api-key': apiKey,
      'x-tenant': 'cli',
    });

    const tokenUrl = tokenEndpoint.urlFor('/token');
    const oauth2 = await runAs([
      'webhooks',
      'update',
      webhook.id,
      '--oauth2-token-url',
      tokenUrl,
      '--oauth2-client-id',
      'cli-client',
      '--oauth2-client-secret',
      clientSecret,
      '--oauth2-audience',
      'hooks',
    ]);
    expect(oauth2.code, oauth2.stderr).toBe(0);
    expect(oauth2.stdout).toContain(`auth:`);
    expect(JSON.parse((await runAs(['webhooks', 'get', webhook.id, '--json'])).stdout).auth).toEqual({
      type: 'oauth2',
      tokenUrl,
      clientId: 'cli-client',
      scope: null,
      audience: 'hooks',
    });
    demanded = ['authorization', `Bearer ${accessToken}`];
    expect((await runAs(['webhooks', 'ping', webhook.id])).stdout).toMatch(/^Ping delivered: HTTP 200/);

    const removed = JSON.parse((await runAs(['webhooks', 'update', webhook.id, '--no-auth', '--json'])).stdout);
    expect(removed.auth).toBeNull();
    expect((await runAs(['webhooks', 'ping', webhook.id])).stdout).toMatch(/^Ping failed \(non_2xx\): HTTP 401/);

    // A receiver that requires a client certificate: registered with one read from files, then without it.
    const mutualTls = await suite.stack.startReceiver({ clientCa: suite.stack.ca.cert });
    const client = await issueClientCert(suite.stack.ca, 'cli-sender');
    const [certFile, keyFile] = [path.join(home, 'client.crt'), path.join(home, 'client.key')];
    writeFileSync(certFile, client.cert);
    writeFileSync(keyFile, client.key, { mode: 0o600 });
    const mtlsCreated = await runAs([
      'webhooks',
      'create',
      mutualTls.urlFor('/cli/mtls'),
      '--client-cert',
      certFile,
      '--client-key',
      keyFile,
      '--json',
    ]);
    expect(mtlsCreated.code, mtlsCreated.stderr).toBe(0);
    const mtlsWebhook = JSON.parse(mtlsCreated.stdout);
    expect(mtlsWebhook.clientCertificate).toMatchObject({
      subject: 'CN=cli-sender',
      fingerprintSha256: new X509Certificate(client.cert).fingerprint256,
    });
    expect(mutualTls.requests.map((request) => request.clientCommonName)).toEqual(['cli-sender']);
    const withoutCertificate = JSON.parse((await runAs(['webhooks', 'update', mtlsWebhook.id, '--no-client-cert', '--json'])).stdout);
    expect(withoutCertificate.clientCertificate).toBeNull();
    expect((await runAs(['webhooks', 'ping', mtlsWebhook.id])).stdout).toMatch(/^Ping failed \((tls|connection)\)/);

    const printedAll = printed.join('');
    for (const credential of [apiKey, clientSecret, accessToken, client.key.split('\n')[2]]) expect(printedAll).not.toContain(credential);
  });

  it('refuses credentials flags used wrongly, with the usage, never echoing a value', async () => {
    const usage =
      'Usage: svc-webhooks webhooks update <webhook-id> [--events t1,t2] [--lists l1,l2] [--status active|paused] [receiver credentials: see --help]\n';
    const id = 'wh_000000000000000000000000';
    expect(await run(['webhooks', 'update', id, '--header', 'X-Api-Key=secret-value'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `--header takes "Name: value"\n${usage}`,
    });
    expect(await run(['webhooks', 'update', id, '--header', 'X-Key: a', '--header', 'X-Key: b'])).toMatchObject({
      code: 2,
      stderr: `--header X-Key is given twice\n${usage}`,
    });
    expect(await run(['webhooks', 'update', id, '--header', 'X-Key: a', '--no-auth'])).toMatchObject({
      code: 2,
      stderr: `--header, --oauth2-* and --no-auth exclude each other\n${usage}`,
    });
    expect(await run(['webhooks', 'update', id, '--oauth2-token-url', 'https://auth.example.com/token'])).toMatchObject({
      code: 2,
      stderr: `missing --oauth2-client-id\n${usage}`,
    });
    expect(await run(['webhooks', 'update', id, '--client-cert', 'client.crt'])).toMatchObject({
      code: 2,
      stderr: `--client-cert and --client-key go together\n${usage}`,
    });
    const help = await run(['--help']);
    expect(help.stdout).toContain('--no-auth and');
  });

  it('makes a token of the scopes asked for, lists each token with its scopes, and logs in with it, which needs no scope', async () => {
    const created = await run(['tokens', 'create', 'cli reader', '--scopes', 'deliveries:read,webhooks:read', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const made = JSON.parse(created.stdout);
    expect(made.scopes).toEqual(['webhooks:read', 'deliveries:read']);
    const listed = (await run(['tokens', 'list'])).stdout.trimEnd().split('\n');
    expect(listed[0].split(/\s+/).slice(0, 4)).toEqual(['ID', 'NAME', 'PREFIX', 'SCOPES']);
    expect(listed.find((row) => row.includes('cli reader'))).toContain('webhooks:read,deliveries:read');
    const loggedIn = await run(['login', '--api-url', suite.stack.service.url, '--token', made.token]);
    expect(loggedIn.stdout).toContain('with the token cli reader (webhooks:read, deliveries:read)');
    const refused = await run(['tokens', 'list']);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^Error INSUFFICIENT_SCOPE \(HTTP 403\): /) });
  });
});
