// No signing secret in PostgreSQL in clear: after registrations, re-registrations, rotations (a
// random secret and the owner's own), a relay session, deliveries and a ping, neither a
// dump of the database's tables nor any file under the server's data directory (tables, indexes,
// catalogs, the WAL) holds any secret the API answered with, in any form.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { dataDirectory, filesUnder, placesHolding, tablesDump } from '../support/postgres-files';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

describe('signing secrets at rest', () => {
  it('are in no dump of the tables and no file of the data directory, WAL included, while deliveries verify with them', async () => {
    const { stack, receiver } = suite;
    // In every URL the service stores: found where the service's rows are, it shows the search reads the right bytes.
    const marker = `at-rest-${randomBytes(8).toString('hex')}`;
    const account = await stack.createAccount();
    const secrets: string[] = [];
    const webhooks = [];
    for (const name of ['a', 'b', 'c']) {
      const webhook = await stack.registerWebhook(account.token, receiver.urlFor(`/${marker}/${name}`));
      secrets.push(webhook.secret);
      webhooks.push(webhook);
    }
    // Registered again: the same secret, pinged with it, answered without it.
    const again = await stack.request('POST', '/v3/webhooks', { token: account.token, body: { url: webhooks[0].url } });
    expect(again.status).toBe(200);
    // Rotations: a new random secret, then the owner's own.
    const rotated = await stack.request('POST', `/v3/webhooks/${webhooks[1].id}/secret`, { token: account.token });
    const own = `whsec_${randomBytes(32).toString('base64url')}`;
    const chosen = await stack.request('POST', `/v3/webhooks/${webhooks[2].id}/secret`, { token: account.token, body: { secret: own } });
    expect([rotated.status, chosen.status]).toEqual([200, 200]);
    secrets.push(rotated.body.secret, own);
    const relay = await stack.request('POST', '/v3/relay-sessions', { token: account.token, body: {} });
    expect(relay.status).toBe(201);
    secrets.push(relay.body.secret);

    // Deliveries and a ping, each signed with the webhook's current secret.
    const listId = `${marker}-list`;
    await stack.putList(listId, account.id);
    await stack.reportWrite(listId, 'at-rest');
    expect((await stack.request('POST', `/v3/webhooks/${webhooks[1].id}/pings`, { token: account.token })).body.delivered).toBe(true);
    const current = [webhooks[0].secret, rotated.body.secret, own];
    webhooks.forEach((webhook, i) => {
      const received = receiver.requests.filter(
        (request) => request.headers['svc-webhook'] === webhook.id && request.headers['svc-event'] !== 'ping',
      );
      expect(received.length).toBeGreaterThan(0);
      for (const request of received)
        expect(verifySignature(request.rawBody, request.headers['svc-signature'] as string, current[i])).toBe(true);
    });

    const sql = stack.service.sql;
    const files = await filesUnder(await dataDirectory(sql));
    expect(files.some((file) => file.includes('/pg_wal/'))).toBe(true);
    const dump = await tablesDump(sql);
    expect(dump.includes(marker)).toBe(true);
    expect(await placesHolding([marker], { files })).not.toEqual([]);

    expect(secrets).toHaveLength(6);
    expect(await placesHolding(secrets, { files, buffers: { 'dump of the tables': dump } })).toEqual([]);
  });
});
