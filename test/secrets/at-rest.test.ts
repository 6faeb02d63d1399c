// No signing secret in PostgreSQL in clear: after registrations, re-registrations, rotations (a
// random secret and the owner's own), a relay session, deliveries and a ping, neither a
// dump of the database's tables nor any file under the server's data directory (tables, indexes,
// catalogs, the WAL) holds any secret the API answered with, in any form. Nor any receiver
// credential (a header's value, an OAuth2 client secret and the token it got, a client
// certificate's private key), which is in no Temporal history and no log line either.
import { createPrivateKey, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { issueClientCert } from '../../scripts/lib/tls';
import { dataDirectory, filesUnder, placesHolding, tablesDump } from '../support/postgres-files';
import { useStackWithReceiver } from '../support/stack';
import { keptWorkflows } from '../support/temporal-payloads';
import { waitFor } from '../support/wait';

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

describe('receiver credentials at rest, in Temporal and in the logs', () => {
  it('are in no dump, no file of the data directory, no history and no log line, while every request presents them', async () => {
    const { stack } = suite;
    const headerValue = `hdr-${randomBytes(16).toString('hex')}`;
    const clientSecret = `cs-${randomBytes(16).toString('hex')}`;
    const issuedTokens: string[] = [];
    const client = await issueClientCert(stack.ca, 'at-rest-sender');
    // The private key as its PEM's base64 lines and its DER: neither may be found anywhere.
    const keyLines = client.key.split('\n').filter((line) => line.length === 64);
    const keyDer = createPrivateKey(client.key).export({ format: 'der', type: 'pkcs8' });

    const headerReceiver = await stack.startReceiver();
    headerReceiver.respondWith((request) => (request.headers['x-api-key'] === headerValue ? {} : { status: 401 }));
    const tokenEndpoint = await stack.startReceiver();
    tokenEndpoint.respondWith(() => {
      const token = `at-rest-token-${randomBytes(16).toString('hex')}`;
      issuedTokens.push(token);
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ access_token: token, expires_in: 3600 }) };
    });
    const bearerReceiver = await stack.startReceiver();
    bearerReceiver.respondWith((request) => (request.headers.authorization === `Bearer ${issuedTokens.at(-1)}` ? {} : { status: 401 }));
    const mtlsReceiver = await stack.startReceiver({ clientCa: stack.ca.cert });

    const account = await stack.createAccount();
    const hooks = [
      await stack.registerWebhook(account.token, headerReceiver.urlFor('/at-rest/headers'), {
        auth: { type: 'headers', headers: { 'X-Api-Key': headerValue } },
      }),
      await stack.registerWebhook(account.token, bearerReceiver.urlFor('/at-rest/oauth2'), {
        auth: { type: 'oauth2', tokenUrl: tokenEndpoint.urlFor('/token'), clientId: 'at-rest', clientSecret },
      }),
      await stack.registerWebhook(account.token, mtlsReceiver.urlFor('/at-rest/mtls'), {
        clientCertificate: { certificate: client.cert, privateKey: client.key },
      }),
    ];
    // Registered again (pinged with what is kept), a write, a ping, and one refused: every kind of workflow.
    expect((await stack.request('POST', '/v3/webhooks', { token: account.token, body: { url: hooks[0].url } })).status).toBe(200);
    const listId = `at-rest-credentials-${account.id}`;
    await stack.putList(listId, account.id);
    await stack.reportWrite(listId, 'at-rest-credentials');
    for (const hook of hooks) {
      expect((await stack.request('POST', `/v3/webhooks/${hook.id}/pings`, { token: account.token })).body.delivered).toBe(true);
    }
    headerReceiver.respondWith({ status: 401 });
    const refused = await stack.request('POST', '/v3/webhooks', {
      token: account.token,
      body: { url: headerReceiver.urlFor('/at-rest/refused'), auth: { type: 'headers', headers: { 'X-Api-Key': headerValue } } },
    });
    expect(refused.status).toBe(422);
    // Two registrations' pings, the write's delivery, a ping, and the refused registration's ping.
    expect(headerReceiver.requests.filter((request) => request.headers['x-api-key'] === headerValue)).toHaveLength(5);
    expect(issuedTokens).toHaveLength(1);
    expect(mtlsReceiver.requests.map((request) => request.clientCommonName)).toEqual([
      'at-rest-sender',
      'at-rest-sender',
      'at-rest-sender',
    ]);

    const credentials = [headerValue, clientSecret, ...issuedTokens, ...keyLines];
    const sql = stack.service.sql;
    const files = await filesUnder(await dataDirectory(sql));
    const dump = await tablesDump(sql);
    expect(dump.includes('at-rest/oauth2')).toBe(true); // the search reads the service's rows
    expect(await placesHolding(credentials, { files, buffers: { 'dump of the tables': dump } })).toEqual([]);
    expect(dump.includes(keyDer.subarray(64, 128))).toBe(false);

    // 5 registrations (one refused), 3 webhooks' own workflows, a write and 3 pings.
    const histories = await waitFor(
      async () => {
        const found = await keptWorkflows(stack.service.client, `AccountId = '${account.id}' OR ListId = '${listId}'`);
        return found.length === 12 ? found : undefined;
      },
      { what: '12 workflows in visibility' },
    );
    for (const { type, bytes, description } of histories) {
      for (const credential of credentials) {
        expect(bytes.includes(credential), `${type} history`).toBe(false);
        expect(description, `${type} description`).not.toContain(credential);
      }
    }
    const logs = stack.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const credential of credentials) expect(logs).not.toContain(credential);
  });
});
