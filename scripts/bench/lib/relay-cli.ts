// What the relay scenarios share: an account owning a list, a real `svc-webhooks listen` on its
// token, and the plain-http server in the bench it forwards to.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { once } from 'node:events';
import { type AddressInfo } from 'node:net';
import { verifySignature } from '../../../src/delivery/signing';
import { SERVICE_DIST, SERVICE_ROOT, log } from './config';
import { createAccount } from './http';
import * as stack from './stack';
import { nowMs } from './stats';
import { type Account, type Context, type ServiceTarget } from './types';

/** How long `svc-webhooks listen` has to open its session and connect, and to stop on SIGINT. */
const LISTEN_READY_MS = 30_000;
const LISTEN_STOP_MS = 10_000;

export type LocalServer = Awaited<ReturnType<typeof startLocalServer>>;
export type Listen = Awaited<ReturnType<typeof startListen>>;

/** A new account owning a new list `listId`, without members. */
export async function accountWithList(target: ServiceTarget, listId: string): Promise<Account> {
  const account = await createAccount(target.internal);
  const put = await target.internal('PUT', `/internal/v3/lists/${listId}`, { ownerAccountId: account.id, memberAccountIds: [] });
  if (put.status !== 201 && put.status !== 200) throw new Error(`PUT list answered ${put.status}`);
  return account;
}

/**
 * The local server `svc-webhooks listen` forwards to: plain http on 127.0.0.1, recording the
 * arrival of each event by the cursor in its body (and checking its signature once the
 * session's secret is known).
 */
export async function startLocalServer() {
  const byCursor = new Map<number, number[]>();
  const state = { secret: undefined as string | undefined, badSignatures: 0 };
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const t = nowMs();
      const body = Buffer.concat(chunks);
      res.writeHead(200).end();
      if (req.headers['svc-event'] !== 'list.changed') return; // the session's ping
      let cursor: number;
      try {
        cursor = Number((JSON.parse(body.toString('utf8')) as { cursor?: unknown }).cursor);
      } catch {
        state.badSignatures++; // not a delivery of ours
        return;
      }
      byCursor.set(cursor, [...(byCursor.get(cursor) ?? []), t]);
      if (state.secret === undefined || !verifySignature(body, req.headers['svc-signature'] as string | undefined, state.secret))
        state.badSignatures++;
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const stopServer = stack.onStop('relay local server', async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/relay-local`, byCursor, state, close: stopServer };
}

/**
 * `node dist/src/cli/main.js listen` (of the service's build) on the account's token,
 * forwarding list.changed (of the lists `listIds`, when given) to the local server; waits for its Ready line. Its settings are
 * its flags alone: no SVC_WEBHOOKS_* variable of the bench's environment, no saved login (a
 * config directory of its own).
 */
export async function startListen(ctx: Context, target: ServiceTarget, token: string, forwardTo: string, listIds: string[] = []) {
  const configDir = fs.mkdtempSync(path.join(ctx.runDir, 'relay-cli-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_WEBHOOKS_')));
  const args = ['listen', '--forward-to', forwardTo, '--api-url', target.baseUrl, '--token', token, '--events', 'list.changed'];
  if (listIds.length) args.push('--list', listIds.join(','));
  const started = stack.spawnNode({
    name: 'svc-webhooks listen',
    // The command line released with the service (BENCH_SERVICE_ROOT): its relay protocol is the service's.
    args: [path.join(SERVICE_DIST, 'src/cli/main.js'), ...args],
    env: { ...env, XDG_CONFIG_HOME: configDir },
    logFile: path.join(configDir, 'listen.log'),
    cwd: SERVICE_ROOT,
  });
  const { child, logFile } = started;
  const { sessionId, secret } = await stack.waitUntil(
    async () => {
      const text = await fs.promises.readFile(logFile, 'utf8');
      const ready = /^Ready\. Signing secret: (whsec_\S+)$/m.exec(text);
      const session = /^Relay session (wh_\S+):/m.exec(text);
      return ready && session ? { sessionId: session[1], secret: ready[1] } : null;
    },
    { what: 'svc-webhooks listen ready', timeoutMs: LISTEN_READY_MS, child, logFile },
  );
  return {
    sessionId,
    secret,
    pid: started.pid,
    /** SIGINT, as a developer stops it; SIGTERM (then SIGKILL) if it does not end. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGINT');
        await stack
          .withTimeout(exited, LISTEN_STOP_MS, 'svc-webhooks listen on SIGINT')
          .catch((error: Error) => log(`relay: ${error.message}`));
      }
      await started.stop();
    },
  };
}
