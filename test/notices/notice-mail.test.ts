// Notices mailed through a real SMTP server (a process of its own, test/support/smtp.ts), on
// the whole stack: the mail's headers and body, the hourly cap, a mail held back while the
// SMTP server is down and sent once when it is back, and what is never mailed.
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookStateActivities } from '../../activities/webhook-state';
import { noticeWorkflowId } from '../../src/contract/workflows';
import { insertNotice } from '../../src/db/notices';
import { createCredentialPresenter } from '../../src/delivery/credential-presenter';
import { createHttpSender } from '../../src/delivery/sender';
import { createAddressPolicy } from '../../src/delivery/url-policy';
import { createLogger } from '../../src/logger';
import { metrics } from '../../src/metrics';
import type { Receiver } from '../support/receiver';
import { startSmtpServer, type SmtpServer } from '../support/smtp';
import { startTestStack, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { OUTCOME_SETTLE_MS } from '../../src/contract/rules';

const FROM = 'Webhook notices <notices@webhooks.example.test>';
const PUBLIC_BASE_URL = 'https://webhooks.example.test';
/** What a broken receiver answers: never to be seen in a mail. */
const RECEIVER_BODY = 'receiver-stack-trace-do-not-mail';

let smtp: SmtpServer;
let stack: TestStack;
let receiver: Receiver;
beforeAll(async () => {
  smtp = await startSmtpServer();
  stack = await startTestStack({
    SMTP_URL: smtp.url,
    NOTIFY_FROM: FROM,
    NOTIFY_MAX_PER_HOUR: '3',
    PUBLIC_BASE_URL: `${PUBLIC_BASE_URL}/`,
  });
  receiver = await stack.startReceiver();
  // Paths under /broken answer 503 to deliveries (the registration's ping gets 200).
  receiver.respondWith((request) =>
    request.path.startsWith('/broken') && request.headers['svc-event'] !== 'ping' ? { status: 503, body: RECEIVER_BODY } : {},
  );
});
afterAll(async () => {
  await stack?.stop();
  await smtp?.stop();
});

let writes = 0;

/** An account with `notificationEmail`, a list it owns and a webhook at /broken/{name}. */
async function brokenWebhook(name: string, notificationEmail: string | null) {
  const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor(`/broken/${name}`));
  const patched = await stack.request('PATCH', '/v3/account', { token: owner.token, body: { notificationEmail } });
  expect(patched.status).toBe(200);
  return { token: owner.token, accountId: owner.id, webhookId, listId, url: receiver.urlFor(`/broken/${name}`) };
}

/** Reports `count` writes to the list, each failing once at every webhook of the list, and waits until its count is `count`. */
async function fail(webhook: { token: string; webhookId: string; listId: string }, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await stack.reportWrite(webhook.listId, `failing-${writes++}`);
  await stack.waitForFailureCount(webhook.token, webhook.webhookId, count);
}

async function notices(token: string): Promise<any[]> {
  const response = await stack.request('GET', '/v3/account/notices', { token });
  expect(response.status).toBe(200);
  return response.body.data;
}

const mailsTo = (address: string) => smtp.mails.filter((mail) => mail.envelopeTo.includes(address));
const noticeWorkflow = (noticeId: string) => stack.service.client.workflow.getHandle(noticeWorkflowId(noticeId));

describe('notice mail', () => {
  it('mails webhook.failing at 10 and webhook.paused at 20: from NOTIFY_FROM, through the login of SMTP_URL, what happened and what to do', async () => {
    const address = 'owner@example.com';
    const webhook = await brokenWebhook('mailed', address);
    await fail(webhook, 20);
    const [paused, failing] = await notices(webhook.token);
    expect([failing.type, paused.type]).toEqual(['webhook.failing', 'webhook.paused']);
    expect(await noticeWorkflow(failing.id).result()).toBe('sent');
    expect(await noticeWorkflow(paused.id).result()).toBe('sent');
    await waitFor(async () => (mailsTo(address).length === 2 ? true : undefined), { what: 'two mails' });

    const bySubject = new Map(mailsTo(address).map((mail) => [mail.parsed.subject, mail]));
    const failingMail = bySubject.get(`Webhook failing: ${webhook.url}`)!;
    const pausedMail = bySubject.get(`Webhook paused: ${webhook.url}`)!;
    for (const [mail, notice] of [
      [failingMail, failing],
      [pausedMail, paused],
    ] as const) {
      expect(mail.user).toBe('notifier');
      expect(mail.envelopeFrom).toBe('notices@webhooks.example.test');
      expect(mail.parsed.from?.value).toEqual([{ name: 'Webhook notices', address: 'notices@webhooks.example.test' }]);
      expect(mail.parsed.to).toMatchObject({ value: [{ address }] });
      expect(mail.parsed.messageId).toBe(`<${notice.id}@webhooks.example.test>`);
      expect(mail.parsed.html).toBe(false);
      const text = mail.parsed.text!;
      expect(text).toContain(`Webhook: ${webhook.webhookId}`);
      expect(text).toContain('Last error: non_2xx (HTTP 503)');
      expect(text).toContain(`Dashboard: ${PUBLIC_BASE_URL}/dashboard`);
      expect(text).toContain('Fix the receiver');
      expect(text).toContain(`/v3/webhooks/${webhook.webhookId}/recoveries`);
      expect(text).toContain(notice.id);
    }
    // The count the store that crossed 10 held: outcomes are counted as they settle, a few at a time.
    expect(failing.consecutiveFailures).toBeGreaterThanOrEqual(10);
    expect(failing.consecutiveFailures).toBeLessThan(20);
    expect(failingMail.parsed.text).toContain(`Your webhook ${webhook.url} has failed ${failing.consecutiveFailures} deliveries in a row.`);
    expect(pausedMail.parsed.text).toContain(`Your webhook ${webhook.url} was paused after 20 deliveries in a row failed.`);
    expect(pausedMail.parsed.text).toContain('Reactivate the webhook');

    // Never a secret, never the receiver's answer, in the mail; nor the address or the SMTP login in Temporal.
    const secret = await stack.secretOf(webhook.webhookId);
    for (const mail of [failingMail, pausedMail]) {
      const raw = `${mail.parsed.subject} ${mail.parsed.text} ${[...mail.parsed.headers.values()].map(String).join(' ')}`;
      expect(raw).not.toContain(secret);
      expect(raw).not.toContain('whsec_');
      expect(raw).not.toContain(RECEIVER_BODY);
    }
    for (const notice of [failing, paused]) {
      const history = await noticeWorkflow(notice.id).fetchHistory();
      const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
      for (const forbidden of [address, 'smtp-test-password', 'whsec_', RECEIVER_BODY]) expect(bytes.includes(forbidden)).toBe(false);
    }
    const listed = await notices(webhook.token);
    expect(listed.map((notice) => notice.emailedAt === null)).toEqual([false, false]);
    expect(listed[1]).toMatchObject({
      consecutiveFailures: failing.consecutiveFailures,
      lastError: 'non_2xx',
      lastStatusCode: 503,
      webhookId: webhook.webhookId,
    });
  });

  it('mails at most NOTIFY_MAX_PER_HOUR (3) an account an hour; the rest are recorded, not mailed', async () => {
    const address = 'busy@example.com';
    const webhook = await brokenWebhook('capped-1', address);
    const second = await stack.registerWebhook(webhook.token, receiver.urlFor('/broken/capped-2'));
    await fail(webhook, 20);
    await stack.waitForFailureCount(webhook.token, second.id, 20);
    const made = await waitFor(async () => {
      const listed = await notices(webhook.token);
      return listed.length === 4 ? listed : undefined;
    });
    const outcomes = await Promise.all(made.map((notice) => noticeWorkflow(notice.id).result()));
    expect(outcomes.sort()).toEqual(['capped', 'sent', 'sent', 'sent']);
    await waitFor(async () => (mailsTo(address).length === 3 ? true : undefined), { what: 'three mails' });
    const after = await notices(webhook.token);
    const notMailed = after.filter((notice) => notice.emailedAt === null);
    expect(notMailed).toHaveLength(1);
    expect(mailsTo(address).map((mail) => mail.parsed.messageId)).not.toContain(`<${notMailed[0].id}@webhooks.example.test>`);
    expect(stack.logs.join('')).toMatch(new RegExp(`"msg":"notice mail","noticeId":"${notMailed[0].id}","outcome":"capped"`));
  });

  it('holds a notice made while the SMTP server is down, tries again, and mails it once when the server is back', async () => {
    const address = 'patient@example.com';
    const webhook = await brokenWebhook('smtp-down', address);
    await smtp.kill();
    try {
      await fail(webhook, 10);
      const [notice] = await notices(webhook.token);
      expect(notice.type).toBe('webhook.failing');
      const handle = noticeWorkflow(notice.id);
      // A first attempt failed and a second is scheduled.
      const description = await waitFor(
        async () => {
          const described = await handle.describe();
          return (described.raw.pendingActivities?.[0]?.attempt ?? 0) >= 2 ? described : undefined;
        },
        { what: 'a second attempt at the mail', timeoutMs: 20_000 },
      );
      expect(description.raw.pendingActivities![0].lastFailure?.message).toMatch(/was not sent: E[A-Z]+/);
      expect((await notices(webhook.token))[0].emailedAt).toBeNull();
    } finally {
      await smtp.start();
    }
    const [notice] = await notices(webhook.token);
    expect(await noticeWorkflow(notice.id).result()).toBe('sent');
    await waitFor(async () => (mailsTo(address).length > 0 ? true : undefined), { what: 'the mail' });
    expect(mailsTo(address).map((mail) => mail.parsed.messageId)).toEqual([`<${notice.id}@webhooks.example.test>`]);
    expect((await notices(webhook.token))[0].emailedAt).not.toBeNull();
    expect(stack.logs.join('')).toContain(`"msg":"notice mail failed","noticeId":"${notice.id}"`);
    expect(stack.logs.join('')).not.toContain('smtp-test-password');
  });

  it('mails a notice whose store died before starting its mail: the retried store starts it', async () => {
    const address = 'recovered@example.com';
    const webhook = await brokenWebhook('store-died', address);
    await fail(webhook, 3);
    // What a store that died between its commit and the start of the mail leaves: a pending notice, no workflow.
    const notice = await insertNotice(stack.service.sql, {
      accountId: webhook.accountId,
      webhookId: webhook.webhookId,
      type: 'webhook.failing',
      url: webhook.url,
      consecutiveFailures: 3,
      mail: 'pending',
    });
    await expect(noticeWorkflow(notice.id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // The retry of that store: the same state again, which changes nothing and makes no notice.
    const [stored] = await stack.service.sql<{ consecutiveFailures: number; failuresCounted: number }[]>`
      SELECT consecutive_failures AS "consecutiveFailures", failures_counted::float8 AS "failuresCounted"
      FROM webhooks WHERE id = ${webhook.webhookId}`;
    const http = createHttpSender({ timeoutMs: 1000, policy: createAddressPolicy([]), userAgent: 'test' });
    const activities = createWebhookStateActivities({
      sql: stack.service.sql,
      bookkeepingSql: stack.service.sql,
      http,
      credentials: createCredentialPresenter({
        dialer: http.dialer,
        secrets: fixedSecretBox(),
        userAgent: 'test',
        logger: createLogger('silent'),
        maxWebhooks: 1,
      }),
      secrets: fixedSecretBox(),
      logger: createLogger('silent'),
      metrics,
      client: stack.service.client,
      notices: { mailer: undefined, from: FROM, maxPerHour: 3, dashboardUrl: `${PUBLIC_BASE_URL}/dashboard` },
      probePlan: null,
      outcomeSettleMs: OUTCOME_SETTLE_MS,
    });
    await new MockActivityEnvironment({ taskQueue: stack.taskQueue }).run(() =>
      activities.storeWebhookState({
        webhookId: webhook.webhookId,
        accountId: webhook.accountId,
        status: 'active',
        pausedReason: null,
        ...stored,
      }),
    );
    await http.close();

    expect(await noticeWorkflow(notice.id).result()).toBe('sent');
    await waitFor(async () => (mailsTo(address).length > 0 ? true : undefined), { what: 'the mail' });
    expect(mailsTo(address).map((mail) => mail.parsed.messageId)).toEqual([`<${notice.id}@webhooks.example.test>`]);
    expect(await notices(webhook.token)).toHaveLength(1);
  });

  it('does not try again a mail the SMTP server refuses for good', async () => {
    const webhook = await brokenWebhook('refused', 'rejected@example.com');
    await fail(webhook, 10);
    const [notice] = await notices(webhook.token);
    await expect(noticeWorkflow(notice.id).result()).rejects.toBeInstanceOf(WorkflowFailedError);
    const description = await noticeWorkflow(notice.id).describe();
    expect(description.status.name).toBe('FAILED');
    expect((await notices(webhook.token))[0].emailedAt).toBeNull();
    expect(mailsTo('rejected@example.com')).toEqual([]);
  });

  it('mails nothing to an account without notificationEmail, and starts no mail for its notices', async () => {
    const webhook = await brokenWebhook('no-address', null);
    await fail(webhook, 10);
    const [notice] = await notices(webhook.token);
    expect(notice).toMatchObject({ type: 'webhook.failing', emailedAt: null });
    await expect(noticeWorkflow(notice.id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(stack.logs.join('')).toMatch(new RegExp(`"msg":"notice","noticeId":"${notice.id}".*"mail":"no_address"`));
  });
});
