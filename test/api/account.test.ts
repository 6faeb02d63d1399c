// The account's own routes and its notices, on the whole stack without SMTP_URL (as `npm start`
// runs): the notification email, the notices `webhook/{id}` makes (once per streak of
// failures, none for a pause by hand), their pages, and that without SMTP_URL they are
// recorded, shown and logged, and nothing is mailed.
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noticeWorkflowId } from '../../src/contract/workflows';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let receiver: Receiver;
/** Paths whose deliveries answer 503 (pings still get 200). */
const broken = new Set<string>();
beforeAll(async () => {
  stack = await startTestStack();
  receiver = await stack.startReceiver();
  receiver.respondWith((request) => (broken.has(request.path) && request.headers['svc-event'] !== 'ping' ? { status: 503 } : {}));
});
afterAll(() => stack?.stop());

const internal = () => ({ token: stack.internalApiToken });
let writes = 0;

async function webhookOnList(path: string) {
  const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor(path));
  return { token: owner.token, accountId: owner.id, webhookId, listId };
}

/** `count` writes to the list, each one delivery to the webhook; waits until its count is `expected`. */
async function deliver(webhook: { token: string; webhookId: string; listId: string }, count: number, expected: number) {
  for (let i = 0; i < count; i++) await stack.reportWrite(webhook.listId, `write-${writes++}`);
  await stack.waitForFailureCount(webhook.token, webhook.webhookId, expected);
}

async function noticeTypes(token: string, query = ''): Promise<string[]> {
  const response = await stack.request('GET', `/v3/account/notices${query}`, { token });
  expect(response.status).toBe(200);
  return response.body.data.map((notice: { type: string }) => notice.type);
}

describe('GET and PATCH /v3/account', () => {
  it('shows the account, with the notificationEmail given at creation or none', async () => {
    const created = await stack.request('POST', '/internal/v3/accounts', {
      ...internal(),
      body: { name: 'Shop', notificationEmail: 'ops@shop.example' },
    });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['id', 'token']);
    const account = await stack.request('GET', '/v3/account', { token: created.body.token });
    expect(account.status).toBe(200);
    expect(account.body).toEqual({
      id: created.body.id,
      name: 'Shop',
      notificationEmail: 'ops@shop.example',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const plain = await stack.createAccount();
    expect((await stack.request('GET', '/v3/account', { token: plain.token })).body.notificationEmail).toBeNull();
  });

  it('sets and clears the notificationEmail', async () => {
    const { token } = await stack.createAccount();
    const longest = `${'l'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(53)}.example`;
    expect(longest).toHaveLength(254);
    for (const notificationEmail of ['owner+hooks@mail.example.com', longest, null]) {
      const patched = await stack.request('PATCH', '/v3/account', { token, body: { notificationEmail } });
      expect(patched.status).toBe(200);
      expect(patched.body.notificationEmail).toBe(notificationEmail);
      expect((await stack.request('GET', '/v3/account', { token })).body.notificationEmail).toBe(notificationEmail);
    }
  });

  it.each([
    ['no @', 'owner.example.com', '/notificationEmail'],
    ['a domain of one label', 'owner@localhost', '/notificationEmail'],
    ['a space', 'the owner@example.com', '/notificationEmail'],
    ['a line break and a header', 'owner@example.com\r\nBcc: someone@example.com', '/notificationEmail'],
    ['a name and angle brackets', 'Owner <owner@example.com>', '/notificationEmail'],
    ['a local part over 64', `${'l'.repeat(65)}@example.com`, '/notificationEmail'],
    ['255 characters', `${'l'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(54)}.example`, '/notificationEmail'],
    ['a number', 42, '/notificationEmail'],
    ['nothing', undefined, '/notificationEmail'],
  ])('refuses %s with 400 VALIDATION_FAILED at the field', async (_, notificationEmail, path) => {
    const { token } = await stack.createAccount();
    const response = await stack.request('PATCH', '/v3/account', { token, body: { notificationEmail } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_FAILED');
    expect(response.body.error.details[0].path).toBe(path);
    expect((await stack.request('GET', '/v3/account', { token })).body.notificationEmail).toBeNull();
  });

  it('refuses an invalid address at creation, and any other field', async () => {
    const refused = await stack.request('POST', '/internal/v3/accounts', { ...internal(), body: { name: 'x', notificationEmail: 'nope' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].path).toBe('/notificationEmail');
    const { token } = await stack.createAccount();
    const extra = await stack.request('PATCH', '/v3/account', { token, body: { notificationEmail: null, name: 'renamed' } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details[0]).toEqual({ path: '/name', message: 'is not allowed' });
  });
});

describe('notices', () => {
  it('are recorded, shown and logged without SMTP_URL, and nothing is mailed', async () => {
    const webhook = await webhookOnList('/notices/unmailed');
    expect(
      (await stack.request('PATCH', '/v3/account', { token: webhook.token, body: { notificationEmail: 'o@example.com' } })).status,
    ).toBe(200);
    broken.add('/notices/unmailed');
    await deliver(webhook, 20, 20);
    const response = await stack.request('GET', '/v3/account/notices', { token: webhook.token });
    expect(response.body.next).toBeNull();
    const [paused, failing] = response.body.data;
    expect(failing).toEqual({
      id: expect.stringMatching(/^ntc_[0-9a-f]{24}$/),
      type: 'webhook.failing',
      webhookId: webhook.webhookId,
      url: receiver.urlFor('/notices/unmailed'),
      consecutiveFailures: expect.any(Number),
      lastError: 'non_2xx',
      lastStatusCode: 503,
      createdAt: expect.any(String),
      emailedAt: null,
    });
    // The count the store that crossed 10 held: outcomes are counted as they settle, a few at a time.
    expect(failing.consecutiveFailures).toBeGreaterThanOrEqual(10);
    expect(failing.consecutiveFailures).toBeLessThan(20);
    expect(paused).toMatchObject({ type: 'webhook.paused', consecutiveFailures: 20, emailedAt: null });
    for (const notice of [failing, paused]) {
      await expect(stack.service.client.workflow.getHandle(noticeWorkflowId(notice.id)).describe()).rejects.toBeInstanceOf(
        WorkflowNotFoundError,
      );
      expect(stack.logs.join('')).toMatch(new RegExp(`"msg":"notice","noticeId":"${notice.id}".*"mail":"not_configured"`));
    }
  });

  it('warn once per streak: again only after a 2xx or a reactivation reset the count; a pause by hand makes none', async () => {
    const webhook = await webhookOnList('/notices/streaks');
    broken.add('/notices/streaks');
    await deliver(webhook, 15, 15);
    expect(await noticeTypes(webhook.token)).toEqual(['webhook.failing']);

    broken.delete('/notices/streaks');
    await deliver(webhook, 1, 0);
    broken.add('/notices/streaks');
    await deliver(webhook, 9, 9);
    expect(await noticeTypes(webhook.token)).toEqual(['webhook.failing']);
    await deliver(webhook, 1, 10);
    expect(await noticeTypes(webhook.token)).toEqual(['webhook.failing', 'webhook.failing']);

    const pause = await stack.request('PATCH', `/v3/webhooks/${webhook.webhookId}`, { token: webhook.token, body: { status: 'paused' } });
    expect(pause.body).toMatchObject({ status: 'paused', pausedReason: 'manual' });
    const reactivate = await stack.request('PATCH', `/v3/webhooks/${webhook.webhookId}`, {
      token: webhook.token,
      body: { status: 'active' },
    });
    expect(reactivate.body.consecutiveFailures).toBe(0);
    await deliver(webhook, 20, 20);
    expect(await noticeTypes(webhook.token)).toEqual(['webhook.paused', 'webhook.failing', 'webhook.failing', 'webhook.failing']);
    // Writes after the pause reach nothing; reactivating and failing again warns again.
    await stack.request('PATCH', `/v3/webhooks/${webhook.webhookId}`, { token: webhook.token, body: { status: 'active' } });
    await deliver(webhook, 10, 10);
    expect((await noticeTypes(webhook.token)).slice(0, 2)).toEqual(['webhook.failing', 'webhook.paused']);
  });

  it("page newest first like the delivery log, filter by webhook, show no other account's, and outlive their webhook", async () => {
    const webhook = await webhookOnList('/notices/paged');
    broken.add('/notices/paged');
    await deliver(webhook, 20, 20);
    const other = await webhookOnList('/notices/other');
    broken.add('/notices/other');
    await deliver(other, 10, 10);

    const first = await stack.request('GET', '/v3/account/notices?limit=1', { token: webhook.token });
    expect(first.body.data.map((notice: { type: string }) => notice.type)).toEqual(['webhook.paused']);
    expect(first.body.next).toBe(first.body.data[0].id);
    const second = await stack.request('GET', `/v3/account/notices?limit=1&before=${first.body.next}`, { token: webhook.token });
    expect(second.body.data.map((notice: { type: string }) => notice.type)).toEqual(['webhook.failing']);
    expect(second.body.next).toBeNull();
    expect(await noticeTypes(webhook.token, `?webhookId=${other.webhookId}`)).toEqual([]);
    expect(await noticeTypes(other.token, `?webhookId=${other.webhookId}`)).toEqual(['webhook.failing']);
    expect(await noticeTypes(other.token, `?before=${first.body.next}`)).toEqual([]);

    for (const query of ['limit=0', 'limit=101', 'before=garbage', 'webhookId=wh_x', 'type=webhook.paused']) {
      const refused = await stack.request('GET', `/v3/account/notices?${query}`, { token: webhook.token });
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
    }

    expect((await stack.request('DELETE', `/v3/webhooks/${webhook.webhookId}`, { token: webhook.token })).status).toBe(204);
    expect(await noticeTypes(webhook.token)).toEqual(['webhook.paused', 'webhook.failing']);
  });
});
