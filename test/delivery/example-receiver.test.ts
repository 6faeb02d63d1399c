import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/delivery/signing';
// @ts-expect-error: plain JavaScript, as a receiver would write it
import { createReceiver } from '../../scripts/example-receiver.mjs';

const secret = `whsec_${'k'.repeat(43)}`;
const body = '{"event":"item.added","listId":"l1","cursor":7,"at":"2026-11-21T10:00:00.000Z"}';
let close: () => void = () => {};
afterEach(() => close());

async function start() {
  const events: unknown[] = [];
  const server = createReceiver(secret, (event: unknown) => events.push(event));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  close = () => server.close();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { events, post: (headers: Record<string, string>, payload = body) => fetch(url, { method: 'POST', headers, body: payload }) };
}

describe('the example receiver of docs/api.md', () => {
  it('accepts a delivery signed with its secret, and refuses an unsigned, tampered or wrongly signed one', async () => {
    const receiver = await start();
    const signed = await receiver.post({ 'svc-event': 'item.added', 'svc-signature': signPayload(body, secret) });
    expect(signed.status).toBe(204);
    expect(receiver.events).toEqual([JSON.parse(body)]);

    expect((await receiver.post({ 'svc-event': 'item.added' })).status).toBe(401);
    expect(
      (await receiver.post({ 'svc-event': 'item.added', 'svc-signature': signPayload(body, secret) }, body.replace('7', '8'))).status,
    ).toBe(401);
    expect((await receiver.post({ 'svc-event': 'item.added', 'svc-signature': signPayload(body, `${secret}x`) })).status).toBe(401);
    expect(receiver.events).toHaveLength(1);
  });

  it('answers the registration ping before it holds the secret', async () => {
    const receiver = await start();
    const ping = await receiver.post({ 'svc-event': 'ping', 'svc-signature': 'sha256=unknown-to-the-receiver' }, '{"event":"ping"}');
    expect(ping.status).toBe(204);
    expect(receiver.events).toEqual([]);
  });
});
