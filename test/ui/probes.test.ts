// The way back from a pause in the dashboard, in headless Chromium against the real stack, a
// real HTTPS receiver and a real SMTP server: a webhook paused by failures shows its probes in
// the log; once its receiver answers one, the page says so, the owner is mailed, and the
// webhook stays paused until its owner reactivates it (after a ping). PROBE_INTERVALS of a
// second keep it short. Saves the screenshot docs/dashboard-and-manual-tools.md shows.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait';
import { DOCS } from './support/browser';
import { expectText, logRows, openWebhook, reactivate, useDashboard } from './support/dashboard';

const suite = useDashboard({ PROBE_INTERVALS: '1s' }, { mail: true });
/** What the receiver answers everything, pings and probes included: it breaks once registered, and is fixed later. */
let receiverAnswers = 200;

beforeAll(() => {
  suite.receiver.respondWith(() => ({ status: receiverAnswers }));
});

const probesOf = async (token: string, webhookId: string) =>
  (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=probe`, { token })).body.data as { outcome: string }[];

describe('probes in the dashboard', () => {
  it('shows a paused webhook’s probes, then that it answers again, and reactivates it only when its owner says so', async () => {
    const url = suite.receiver.urlFor('/ui/probes/comes-back');
    const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(url);
    receiverAnswers = 503;
    await suite.stack.request('PATCH', '/v3/account', { token: owner.token, body: { notificationEmail: 'owner@example.com' } });
    for (let i = 0; i < 20; i++) await suite.stack.reportWrite(listId, `ui-probe-${i}`);
    await suite.stack.waitForFailureCount(owner.token, webhookId, 20);
    await waitFor(async () => ((await probesOf(owner.token, webhookId)).length >= 2 ? true : undefined), { what: 'two failed probes' });

    const page = await suite.tabs.open(owner.token);
    await openWebhook(page, url);
    const callout = page.locator('section.callout');
    await expectText(callout.getByRole('heading'), 'Paused after 20 failed deliveries in a row');
    await expectText(callout, /The service probes it with a ping now and then \(logged as probe\)/);
    await page.getByLabel('Kind').selectOption('probe');
    await expect.poll(() => logRows(page).count()).toBeGreaterThanOrEqual(2);
    expect(await logRows(page).locator('td[data-label="Kind"] .cell-value').allTextContents()).toEqual(
      expect.arrayContaining(['probe', 'probe']),
    );

    // The receiver is fixed: the next probe is answered, and the owner is told, in the page and by mail.
    receiverAnswers = 200;
    const reachable = await waitFor(
      async () =>
        (await suite.stack.request('GET', '/v3/account/notices', { token: owner.token })).body.data.find(
          (notice: { type: string }) => notice.type === 'webhook.reachable',
        ),
      { what: 'the notice webhook.reachable' },
    );
    const mail = await waitFor(
      async () => suite.smtp.mails.find((received) => received.parsed.subject === `Webhook answers again: ${url}`),
      {
        what: 'the mail of webhook.reachable',
      },
    );
    expect(mail.parsed.text).toContain(`answered a probe with a 2xx at ${reachable.createdAt}. It is still paused`);
    await page.reload();
    await openWebhook(page, url);
    await expectText(callout.getByRole('heading'), 'Paused after 20 failed deliveries in a row; the receiver answers again');
    await expectText(callout, new RegExp(`Notice ${reachable.id}, .* UTC`));
    await page.getByLabel('Kind').selectOption('probe');
    await expectText(logRows(page).first().locator('td[data-label="Outcome"] .cell-value'), 'delivered');
    await page.screenshot({ path: path.join(DOCS, 'paused-webhook-answers-again.png'), fullPage: true });
    expect((await probesOf(owner.token, webhookId)).filter((probe) => probe.outcome === 'delivered')).toHaveLength(1);

    // Still paused: the owner reactivates it, after the dashboard's ping.
    await expectText(page.locator('.facts .badge'), /^Paused/);
    expect(await reactivate(page)).toMatch(/^Ping: Delivered: HTTP 200/);
    const webhook = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token: owner.token })).body;
    expect(webhook).toMatchObject({ status: 'active', consecutiveFailures: 0 });
  });
});
