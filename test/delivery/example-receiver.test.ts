import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookReceiver, type SeenStore } from '../../receivers/typescript/index';
import { signPayload } from '../../src/delivery/signing';
// @ts-expect-error: plain JavaScript, as a receiver would write it
import { FileSeenStore, createReceiverServer, printingHandler } from '../../receivers/typescript/example-receiver.mjs';

const secret = `whsec_${'k'.repeat(43)}`;
const body = '{"event":"list.changed","listId":"l1","cursor":7,"at":"2026-11-21T10:00:00.000Z"}';
const headers = { 'svc-event': 'list.changed', 'svc-webhook': 'wh_0123456789abcdef01234567', 'svc-signature': signPayload(body, secret) };
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

async function start(store?: SeenStore) {
  const lines: any[] = [];
  const onVerdict = (line: any) => lines.push(line);
  const server = createReceiverServer({
    receiver: new WebhookReceiver({ secrets: secret, store, handler: printingHandler(onVerdict) }),
    onVerdict,
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    lines,
    post: (requestHeaders: Record<string, string>, payload = body) =>
      fetch(url, { method: 'POST', headers: requestHeaders, body: payload }),
  };
}

describe('the example receiver of docs/receiving.md', () => {
  it('accepts a delivery signed with its secret, tells its repeat, and refuses an unsigned, tampered or wrongly signed one', async () => {
    const receiver = await start();
    expect((await receiver.post(headers)).status).toBe(204);
    expect((await receiver.post(headers)).status).toBe(204);
    expect(receiver.lines.map((line) => line.outcome)).toEqual(['new', 'duplicate']);
    expect(receiver.lines[0]).toMatchObject({ ...JSON.parse(body), webhookId: headers['svc-webhook'], gap: null, via: 'push' });

    const unsigned = { 'svc-event': headers['svc-event'], 'svc-webhook': headers['svc-webhook'] };
    expect((await receiver.post(unsigned)).status).toBe(400);
    expect((await receiver.post(headers, body.replace('7', '8'))).status).toBe(401);
    expect((await receiver.post({ ...headers, 'svc-signature': signPayload(body, `${secret}x`) })).status).toBe(401);
    expect(receiver.lines.slice(2).map((line) => line.error)).toEqual(['missing_header', 'invalid_signature', 'invalid_signature']);
  });

  it('answers the registration ping before it holds the secret', async () => {
    const receiver = await start();
    const ping = await receiver.post({ 'svc-event': 'ping', 'svc-signature': 'sha256=unknown-to-the-receiver' }, '{"event":"ping"}');
    expect(ping.status).toBe(204);
    // A ping without traceparent: no trace to continue.
    expect(receiver.lines).toEqual([{ outcome: 'ping', traceId: null }]);
  });

  it('keeps what it saw in its file across a restart', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'example-receiver-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'seen.json');
    const before = await start(new FileSeenStore(file));
    await before.post(headers);

    const after = await start(new FileSeenStore(file));
    await after.post(headers);
    const later = body.replace('"cursor":7', '"cursor":10');
    await after.post({ ...headers, 'svc-signature': signPayload(later, secret) }, later);
    expect(after.lines.map((line) => [line.outcome, line.gap])).toEqual([
      ['duplicate', null],
      ['new', { first: 8, last: 9 }],
    ]);
  });
});
