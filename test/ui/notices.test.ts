// Notices in the dashboard, in headless Chromium against the real stack, a real HTTPS
// receiver and a real SMTP server: a failing and a paused webhook say so with their notice,
// the Notices page lists the account's notices and edits the notification email. Saves the
// screenshot docs/dashboard-and-manual-tools.md shows.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait';
import { SCREENSHOTS } from './support/browser';
import { PHONE, expectText, openWebhook, reactivate, useDashboard } from './support/dashboard';

const suite = useDashboard({}, { mail: true });

beforeAll(() => {
  // Deliveries to paths under /broken answer 503; pings and everything else 200.
  suite.receiver.respondWith((request) =>
    request.path.startsWith('/broken') && request.headers['svc-event'] !== 'ping' ? { status: 503 } : {},
  );
});

let writes = 0;

/** An account (mailed at `notificationEmail`) whose webhook at /broken/{name} has failed `failures` deliveries in a row. */
async function failingWebhook(name: string, failures: number, notificationEmail: string | null = null) {
  const url = suite.receiver.urlFor(`/broken/${name}`);
  const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(url);
  await suite.stack.request('PATCH', '/v3/account', { token: owner.token, body: { notificationEmail } });
  for (let i = 0; i < failures; i++) await suite.stack.reportWrite(listId, `ui-notice-${writes++}`);
  await suite.stack.waitForFailureCount(owner.token, webhookId, failures);
  return { token: owner.token, webhookId, url };
}

/** Controls with no accessible name: inputs without a label, buttons without text. */
const unlabelledControls = (page: Page) =>
  page.evaluate<string[]>(`[...document.querySelectorAll('input, select, textarea, button')]
    .filter((element) => !element.getAttribute('aria-label') && (element.tagName === 'BUTTON' ? !element.textContent.trim() : element.labels.length === 0))
    .map((element) => element.outerHTML)`);

describe('notices in the dashboard', () => {
  it('shows a paused webhook with its notice, mailed, and the same notice in the account’s list', async () => {
    const { token, webhookId, url } = await failingWebhook('paused', 20, 'owner@example.com');
    const notices = (await suite.stack.request('GET', '/v3/account/notices', { token })).body.data;
    const paused = notices[0];
    expect(paused.type).toBe('webhook.paused');
    await waitFor(
      async () => ((await suite.stack.request('GET', '/v3/account/notices', { token })).body.data[0].emailedAt ? true : undefined),
      {
        what: 'the paused notice mailed',
      },
    );

    const page = await suite.tabs.open(token);
    await openWebhook(page, url);
    const callout = page.locator('section.callout');
    await expectText(callout.getByRole('heading'), 'Paused after 20 failed deliveries in a row');
    await expectText(callout, new RegExp(`Notice ${paused.id}, .* UTC: last error non_2xx \\(HTTP 503\\)\\. Mailed .* UTC\\.`));
    await expectText(
      callout,
      /The service probes it with a ping now and then \(logged as probe\) and tells you when it answers\. Fix the receiver, then reactivate\./,
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-paused-notice.png') });

    await page.getByRole('button', { name: 'Notices', exact: true }).click();
    await page.getByRole('heading', { name: 'Notices', level: 1 }).waitFor();
    const rows = page.locator('table.notices tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.locator('td[data-label="Notice"] .cell-value').allTextContents()).toEqual(['Paused', 'Failing']);
    // The failing notice holds the count of the store that crossed 10 (outcomes settle a few at a time).
    const failingCount = String(notices[1].consecutiveFailures);
    expect(await rows.locator('td[data-label="Failures in a row"] .cell-value').allTextContents()).toEqual(['20', failingCount]);
    expect(await rows.first().locator('td[data-label="Last error"] .cell-value').textContent()).toBe('non_2xx (HTTP 503)');
    await expectText(rows.first().locator('td[data-label="Mail"] .cell-value'), /^Mailed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await unlabelledControls(page)).toEqual([]);

    // The webhook's URL leads back to it; reactivated, it no longer says it is paused.
    await rows.first().getByRole('button', { name: url }).click();
    await page.getByRole('heading', { name: url }).waitFor();
    await reactivate(page);
    expect(await callout.count()).toBe(0);
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body.consecutiveFailures).toBe(0);
  });

  it('says a webhook is failing from 10 failures in a row, with its notice; not before', async () => {
    const { token, url } = await failingWebhook('failing', 12);
    const quiet = await failingWebhook('quiet', 9);
    const page = await suite.tabs.open(token);
    await openWebhook(page, url);
    const callout = page.locator('section.callout');
    await expectText(callout.getByRole('heading'), 'Failing: 12 deliveries in a row failed');
    await expectText(callout, /last error non_2xx \(HTTP 503\)\. Not mailed\./);

    const quietPage = await suite.tabs.open(quiet.token);
    await quietPage.getByRole('button', { name: quiet.url }).click();
    await quietPage.getByRole('heading', { name: quiet.url }).waitFor();
    expect(await quietPage.locator('section.callout').count()).toBe(0);
    await quietPage.getByRole('button', { name: 'Notices', exact: true }).click();
    await expectText(quietPage.locator('.empty'), /^No notices/);
  });

  it("edits the notification email, with the API's error beside the field", async () => {
    const { token } = await suite.stack.createAccount();
    const page = await suite.tabs.open(token);
    await page.getByRole('button', { name: 'Notices', exact: true }).click();
    const field = page.getByLabel('Mail notices to');
    await expect.poll(() => field.isEnabled()).toBe(true);

    await field.fill('not an address');
    await page.getByRole('button', { name: 'Save the email' }).click();
    await expectText(page.locator('#notification-email-error'), /notificationEmail: must match pattern/);
    expect((await suite.stack.request('GET', '/v3/account', { token })).body.notificationEmail).toBeNull();

    await field.fill('owner@example.com');
    await page.getByRole('button', { name: 'Save the email' }).click();
    await expectText(page.getByRole('status'), 'Notices are mailed to owner@example.com.');
    expect((await suite.stack.request('GET', '/v3/account', { token })).body.notificationEmail).toBe('owner@example.com');
    await page.reload();
    await page.getByLabel('Account API token').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Notices', exact: true }).click();
    await expect.poll(() => page.getByLabel('Mail notices to').inputValue()).toBe('owner@example.com');

    await page.getByLabel('Mail notices to').fill('');
    await page.getByRole('button', { name: 'Save the email' }).click();
    await expectText(page.getByRole('status'), 'Notices are not mailed.');
    expect((await suite.stack.request('GET', '/v3/account', { token })).body.notificationEmail).toBeNull();
  });

  it('fits a 375 px wide screen', async () => {
    const { token, url } = await failingWebhook('narrow', 20);
    const page = await suite.tabs.open(token, PHONE);
    const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    await page.getByRole('button', { name: url }).click();
    await page.locator('section.callout').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: 'Notices', exact: true }).click();
    await expect.poll(() => page.locator('table.notices tbody tr').count()).toBe(2);
    expect(await overflow()).toBeLessThanOrEqual(0);
  });
});
