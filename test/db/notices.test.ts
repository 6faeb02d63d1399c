// Notices in PostgreSQL: made in the transaction that stores `webhook/{id}`'s state, never
// twice for one store, with the last failure's error; and their mail claimed against the
// account's hourly cap.
import { describe, expect, it } from 'vitest';
import type { WebhookLifecycleState } from '../../src/contract/payloads';
import { createAccount, setNotificationEmail } from '../../src/db/accounts';
import { recordDeliveries } from '../../src/db/deliveries';
import { claimNoticeMail, insertNotice, listNotices, markNoticeMail } from '../../src/db/notices';
import { mirrorWebhookState } from '../../src/db/webhooks';
import { TEST_ACTOR, useMigratedDatabase } from '../support/database';
import { attemptRecord, insertWebhook } from '../../scripts/lib/webhook-rows';
import { initialLifecycleState, storeRules } from '../support/lifecycle-state';

const database = useMigratedDatabase({ connections: 4 });

async function newWebhook(notificationEmail: string | null = 'owner@example.com') {
  const account = await createAccount(database.sql, 'notices test', notificationEmail);
  const webhookId = await insertWebhook(database.sql, account.id);
  return { accountId: account.id, webhookId, state: initialLifecycleState(webhookId, account.id) };
}

const failing = (state: WebhookLifecycleState, count: number): WebhookLifecycleState => ({
  ...state,
  consecutiveFailures: count,
  failuresCounted: count,
});
const paused = (state: WebhookLifecycleState): WebhookLifecycleState => ({
  ...state,
  status: 'paused',
  pausedReason: 'auto_failures',
  consecutiveFailures: 20,
  failuresCounted: 20,
});

describe('mirrorWebhookState', () => {
  it('makes webhook.failing when the stored count crosses 10, with the last failure of the receiver, and never twice for one store', async () => {
    const { webhookId, accountId, state } = await newWebhook();
    await recordDeliveries(database.sql, [
      { ...attemptRecord(webhookId, { error: 'non_2xx' }), result: { delivered: false, statusCode: 503, durationMs: 4, error: 'non_2xx' } },
    ]);
    // Ours, not the receiver's: not the notice's last error.
    await recordDeliveries(database.sql, [attemptRecord(webhookId, { error: 'internal' })]);
    expect((await mirrorWebhookState(database.sql, failing(state, 8), storeRules(true))).notice).toBeNull();

    const stored = await mirrorWebhookState(database.sql, failing(state, 12), storeRules(true));
    expect(stored.notice).toMatchObject({
      type: 'webhook.failing',
      webhookId,
      url: `https://receiver.test/${webhookId}`,
      consecutiveFailures: 12,
      lastError: 'non_2xx',
      lastStatusCode: 503,
      emailedAt: null,
      mail: 'pending',
    });
    expect(stored.pendingMail).toEqual([stored.notice!.id]);

    // The same store again (a retried activity): no second notice, the pending mail named again.
    const repeated = await mirrorWebhookState(database.sql, failing(state, 12), storeRules(true));
    expect(repeated).toEqual({ paused: false, notice: null, pendingMail: [stored.notice!.id] });
    expect(await listNotices(database.sql, accountId, { limit: 10 })).toHaveLength(1);
  });

  it('makes webhook.paused at the automatic pause, once, and none at a pause by hand', async () => {
    const auto = await newWebhook();
    await mirrorWebhookState(database.sql, failing(auto.state, 19), storeRules());
    const pausing = await mirrorWebhookState(database.sql, paused(auto.state), storeRules());
    expect(pausing.paused).toBe(true);
    expect(pausing.notice).toMatchObject({ type: 'webhook.paused', consecutiveFailures: 20, lastError: null, mail: 'not_configured' });
    expect(await mirrorWebhookState(database.sql, paused(auto.state), storeRules())).toEqual({
      paused: false,
      notice: null,
      pendingMail: [],
    });

    const manual = await newWebhook();
    const byHand = await mirrorWebhookState(
      database.sql,
      { ...failing(manual.state, 3), status: 'paused', pausedReason: 'manual' },
      storeRules(),
    );
    expect(byHand).toEqual({ paused: true, notice: null, pendingMail: [] });
  });

  it('marks a notice for mailing only when the worker mails and the account has an address', async () => {
    const withAddress = await newWebhook();
    const withoutAddress = await newWebhook(null);
    expect((await mirrorWebhookState(database.sql, failing(withAddress.state, 10), storeRules())).notice?.mail).toBe('not_configured');
    expect((await mirrorWebhookState(database.sql, failing(withoutAddress.state, 10), storeRules(true))).notice?.mail).toBe('no_address');
  });

  it('stores one state at a time when two stores race, making one notice', async () => {
    const { accountId, state } = await newWebhook();
    const results = await Promise.all([
      mirrorWebhookState(database.sql, failing(state, 10), storeRules(true)),
      mirrorWebhookState(database.sql, failing(state, 10), storeRules(true)),
    ]);
    expect(results.filter((result) => result.notice !== null)).toHaveLength(1);
    expect(await listNotices(database.sql, accountId, { limit: 10 })).toHaveLength(1);
  });
});

describe('listNotices', () => {
  it('pages newest first, filters by webhook, and shows nothing of another account', async () => {
    const first = await newWebhook();
    const second = await newWebhook();
    const other = await newWebhook();
    await mirrorWebhookState(database.sql, failing(first.state, 10), storeRules());
    await mirrorWebhookState(database.sql, paused(first.state), storeRules());
    await mirrorWebhookState(database.sql, failing(other.state, 10), storeRules());
    const secondOfSameAccount = await insertWebhook(database.sql, first.accountId);
    await mirrorWebhookState(
      database.sql,
      failing({ ...second.state, webhookId: secondOfSameAccount, accountId: first.accountId }, 10),
      storeRules(),
    );

    const all = await listNotices(database.sql, first.accountId, { limit: 10 });
    expect(all.map((notice) => [notice.webhookId, notice.type])).toEqual([
      [secondOfSameAccount, 'webhook.failing'],
      [first.webhookId, 'webhook.paused'],
      [first.webhookId, 'webhook.failing'],
    ]);
    const [page1, page2] = [
      await listNotices(database.sql, first.accountId, { limit: 2 }),
      await listNotices(database.sql, first.accountId, { limit: 2, before: all[1].id }),
    ];
    expect(page1.map((notice) => notice.id)).toEqual(all.slice(0, 2).map((notice) => notice.id));
    expect(page2.map((notice) => notice.id)).toEqual([all[2].id]);
    expect((await listNotices(database.sql, first.accountId, { limit: 10, webhookId: first.webhookId })).map((n) => n.type)).toEqual([
      'webhook.paused',
      'webhook.failing',
    ]);
    expect(await listNotices(database.sql, first.accountId, { limit: 10, webhookId: other.webhookId })).toEqual([]);
  });
});

describe('claimNoticeMail', () => {
  const pendingNotice = (accountId: string, webhookId: string) =>
    insertNotice(database.sql, {
      accountId,
      webhookId,
      type: 'webhook.failing',
      url: `https://receiver.test/${webhookId}`,
      consecutiveFailures: 10,
      mail: 'pending',
    });

  it('claims at most maxPerHour mails an account in any hour; the rest are capped for good', async () => {
    const { accountId, webhookId } = await newWebhook();
    const notices = [];
    for (let i = 0; i < 3; i++) notices.push(await pendingNotice(accountId, webhookId));
    const claims = await Promise.all(notices.map((notice) => claimNoticeMail(database.sql, notice.id, 2)));
    expect(claims.map((claim) => claim.outcome).sort()).toEqual(['capped', 'send', 'send']);
    const capped = notices[claims.findIndex((claim) => claim.outcome === 'capped')];
    expect(await claimNoticeMail(database.sql, capped.id, 100)).toEqual({ outcome: 'capped' });

    // Claimed more than an hour ago: outside the window.
    await database.sql`UPDATE notices SET mail_claimed_at = now() - interval '61 minutes' WHERE account_id = ${accountId}`;
    const later = await pendingNotice(accountId, webhookId);
    expect((await claimNoticeMail(database.sql, later.id, 2)).outcome).toBe('send');
  });

  it('sends a claimed notice again without counting it twice, and answers a sent one as sent', async () => {
    const { accountId, webhookId } = await newWebhook('first@example.com');
    const notice = await pendingNotice(accountId, webhookId);
    expect(await claimNoticeMail(database.sql, notice.id, 1)).toMatchObject({ outcome: 'send', to: 'first@example.com' });
    // A retry after a failed send, to the address the account has now.
    await setNotificationEmail(database.sql, accountId, 'second@example.com', TEST_ACTOR);
    expect(await claimNoticeMail(database.sql, notice.id, 1)).toMatchObject({ outcome: 'send', to: 'second@example.com' });
    await markNoticeMail(database.sql, notice.id, 'sent');
    expect(await claimNoticeMail(database.sql, notice.id, 1)).toEqual({ outcome: 'sent' });
    const [listed] = await listNotices(database.sql, accountId, { limit: 1 });
    expect(listed.emailedAt).not.toBeNull();
    // Settled: a later mark changes nothing.
    await markNoticeMail(database.sql, notice.id, 'not_configured');
    expect((await listNotices(database.sql, accountId, { limit: 1 }))[0].emailedAt).toBe(listed.emailedAt);
  });

  it('sends nothing to an account without an address, nor for a notice that is gone', async () => {
    const { accountId, webhookId } = await newWebhook();
    const notice = await pendingNotice(accountId, webhookId);
    await setNotificationEmail(database.sql, accountId, null, TEST_ACTOR);
    expect(await claimNoticeMail(database.sql, notice.id, 5)).toEqual({ outcome: 'no_address' });
    expect(await claimNoticeMail(database.sql, 'ntc_000000000000000000000000', 5)).toEqual({ outcome: 'gone' });
  });
});
