import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

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
    const abandoned = await stack.service.sql`SELECT secret FROM registrations WHERE account_id = ${account.id} AND secret IS NOT NULL`;
    expect(abandoned).toHaveLength(0); // registrations forget their secret once decided

    // 3 registrations, the webhook's own workflow, the ping and the two writes.
    const client = stack.service.client;
    const executions = await waitFor(
      async () => {
        const found = [];
        const query = `AccountId = '${account.id}' OR ListId = '${listId}'`;
        for await (const execution of client.workflow.list({ query })) found.push(execution);
        return found.length === 7 ? found : undefined;
      },
      { what: 'seven workflows in visibility' },
    );
    expect(executions.map((e) => e.type).sort()).toEqual([
      'deliverListWrite',
      'deliverListWrite',
      'pingWebhook',
      'registerWebhook',
      'registerWebhook',
      'registerWebhook',
      'webhookLifecycle',
    ]);

    for (const execution of executions) {
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
      expect(bytes.length).toBeGreaterThan(0);
      for (const secret of secrets) expect(bytes.includes(secret)).toBe(false);
      // No secret at all, not just not this one: the prefix never appears in a history.
      expect(bytes.includes('whsec_')).toBe(false);
      const description = await client.workflow.getHandle(execution.workflowId, execution.runId).describe();
      expect(JSON.stringify(description.raw)).not.toContain('whsec_');
    }
  });
});
