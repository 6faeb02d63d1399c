import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack';
import { keptWorkflows, type KeptWorkflow } from '../support/temporal-payloads';
import { waitFor } from '../support/wait';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

/** What Temporal keeps of the workflows these search attributes find, once there are `count`. */
function historiesOf(query: string, count: number): Promise<KeptWorkflow[]> {
  return waitFor(
    async () => {
      const found = await keptWorkflows(stack.service.client, query);
      return found.length === count ? found : undefined;
    },
    { what: `${count} workflows in visibility` },
  );
}

describe('no signing secret in Temporal', () => {
  it('is absent from every history, input, result, search attribute and failure', async () => {
    const account = await stack.createAccount();
    const receiver = await stack.startReceiver();
    const register = (path: string) =>
      stack.request('POST', '/v3/webhooks', { token: account.token, body: { url: receiver.urlFor(path) } });

    const created = await register('/a');
    expect(created.status).toBe(201);
    expect((await register('/a')).status).toBe(200); // re-registration: pinged with the stored secret
    receiver.respondWith({ status: 500 });
    expect((await register('/b')).status).toBe(422); // a new secret generated, then abandoned
    receiver.respondWith({});
    const secrets = [created.body.secret as string];
    // A ping, a delivered write and a failed one.
    expect((await stack.request('POST', `/v3/webhooks/${created.body.id}/pings`, { token: account.token })).status).toBe(200);
    const listId = `no-secrets-${account.id}`;
    await stack.putList(listId, account.id);
    for (const [writeId, status] of [
      ['ok', 200],
      ['fails', 500],
    ] as const) {
      receiver.respondWith({ status });
      await stack.reportWrite(listId, writeId);
    }
    receiver.respondWith({});
    const abandoned = await stack.service.sql`SELECT 1 FROM registrations WHERE account_id = ${account.id} AND secret_sealed IS NOT NULL`;
    expect(abandoned).toHaveLength(0); // registrations forget their secret once decided

    // 3 registrations, the webhook's own workflow, the ping and the two writes.
    const histories = await historiesOf(`AccountId = '${account.id}' OR ListId = '${listId}'`, 7);
    expect(histories.map((h) => h.type).sort()).toEqual([
      'deliverListWrite',
      'deliverListWrite',
      'pingWebhook',
      'registerWebhook',
      'registerWebhook',
      'registerWebhook',
      'webhookLifecycle',
    ]);

    for (const { bytes, description } of histories) {
      expect(bytes.length).toBeGreaterThan(0);
      for (const secret of secrets) expect(bytes.includes(secret)).toBe(false);
      // No secret at all, not just not this one: the prefix never appears in a history.
      expect(bytes.includes('whsec_')).toBe(false);
      expect(description).not.toContain('whsec_');
    }
  });
});

describe("no receiver's answer in Temporal", () => {
  it('keeps the body and headers a receiver answers out of every history, while the log holds them', async () => {
    const account = await stack.createAccount();
    const receiver = await stack.startReceiver();
    // Distinctive text in the body and in a header, on every answer: 2xx and failures alike.
    const body = `receiver-said-${account.id}-<script>alert(1)</script>`;
    const header = `receiver-header-${account.id}`;
    const answer = (status: number) => receiver.respondWith({ status, headers: { 'x-receiver-note': header }, body });
    answer(200);
    const webhook = await stack.registerWebhook(account.token, receiver.urlFor('/answers')); // the registration's ping
    const listId = `no-answers-${account.id}`;
    await stack.putList(listId, account.id);
    await stack.reportWrite(listId, 'delivered');
    answer(503);
    await stack.reportWrite(listId, 'failed');
    expect((await stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token: account.token })).body).toMatchObject({
      statusCode: 503,
    });
    const log = (await stack.request('GET', `/v3/webhooks/${webhook.id}/deliveries?kind=event`, { token: account.token })).body.data;
    const redelivery = await stack.request('POST', `/v3/webhooks/${webhook.id}/deliveries/${log[0].id}/redeliveries`, {
      token: account.token,
    });
    expect(redelivery.body).toMatchObject({ statusCode: 503 });
    receiver.respondWith({});

    // The log holds what came back, for each of them.
    const everything = (await stack.request('GET', `/v3/webhooks/${webhook.id}/deliveries`, { token: account.token })).body.data;
    expect(everything).toHaveLength(4);
    for (const entry of everything) {
      const detail = (await stack.request('GET', `/v3/webhooks/${webhook.id}/deliveries/${entry.id}`, { token: account.token })).body;
      expect(detail.response).toMatchObject({ body, headers: { 'x-receiver-note': header } });
    }

    // A registration, the webhook's own workflow, two writes, a ping and a redelivery.
    const histories = await historiesOf(`AccountId = '${account.id}' OR ListId = '${listId}'`, 6);
    expect(histories.map((h) => h.type).sort()).toEqual([
      'deliverListWrite',
      'deliverListWrite',
      'pingWebhook',
      'redeliverEvent',
      'registerWebhook',
      'webhookLifecycle',
    ]);
    for (const { type, bytes, description } of histories) {
      expect(bytes.length).toBeGreaterThan(0);
      for (const text of [`receiver-said-${account.id}`, header]) {
        expect(bytes.includes(text), `${type} history`).toBe(false);
        expect(description, `${type} description`).not.toContain(text);
      }
    }
  });
});
