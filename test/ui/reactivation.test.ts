// Reactivating a paused webhook in the dashboard, in headless Chromium against the real stack
// and a real HTTPS receiver: Reactivate sends a ping and shows its answer, and only the
// confirm that follows changes anything; Cancel leaves the webhook paused. A receiver that
// answers 500 gets the warning, and can still be reactivated, by keyboard. Saves the
// screenshot docs/dashboard-and-manual-tools.md shows.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DOCS } from './support/browser';
import {
  IS_FOCUSED,
  PHONE,
  expectText,
  openWebhook,
  pageOverflow,
  reactivationQuestion,
  tabTo,
  textOf,
  useDashboard,
} from './support/dashboard';

const suite = useDashboard();

/** An account whose webhook at `urlPath` its owner paused over the API. */
async function pausedWebhook(urlPath: string) {
  const url = suite.receiver.urlFor(urlPath);
  const { owner, webhookId } = await suite.stack.setUpListWebhook(url);
  const paused = await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token: owner.token, body: { status: 'paused' } });
  expect(paused.body).toMatchObject({ status: 'paused', pausedReason: 'manual' });
  return { token: owner.token, webhookId, url };
}

const pingsTo = (urlPath: string) =>
  suite.receiver.requests.filter((request) => request.path === urlPath && request.headers['svc-event'] === 'ping').length;

const webhookOf = async (token: string, webhookId: string) =>
  (await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body;

const loggedPings = async (token: string, webhookId: string) =>
  (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=ping`, { token })).body.data;

const isFocused = (page: Page, selector: string) => page.locator(selector).evaluate(IS_FOCUSED);

describe('reactivation in the dashboard', () => {
  it('pings first and shows the answer; Cancel leaves the webhook paused, the confirm reactivates it', async () => {
    const urlPath = '/ui/reactivate/answering';
    const { token, webhookId, url } = await pausedWebhook(urlPath);
    const page = await suite.tabs.open(token);
    // The list offers no reactivation: the webhook's URL leads to its page, where the answer is shown.
    await page.getByRole('button', { name: url }).waitFor();
    expect(await page.getByRole('button', { name: 'Reactivate', exact: true }).count()).toBe(0);
    await openWebhook(page, url);

    const registrationPings = pingsTo(urlPath);
    await page.getByRole('button', { name: 'Reactivate', exact: true }).click();
    const question = reactivationQuestion(page);
    await expectText(question.locator('#reactivate-answer'), /^Ping: Delivered: HTTP 200 in \d+ ms$/);
    await expectText(question.locator('#reactivate-question'), /^The receiver answered with a 2xx\. Reactivate\?/);
    await expect.poll(() => isFocused(page, '#reactivate-answer')).toBe(true);
    expect(pingsTo(urlPath)).toBe(registrationPings + 1);
    // The ping alone changes nothing; it is logged, and the page's log shows it.
    expect(await webhookOf(token, webhookId)).toMatchObject({ status: 'paused', pausedReason: 'manual' });
    expect(await loggedPings(token, webhookId)).toMatchObject([{ outcome: 'delivered', statusCode: 200 }]);
    await expectText(page.locator('table.deliveries tbody tr').first().locator('td[data-label="Event"]'), 'ping');

    await question.getByRole('button', { name: 'Cancel', exact: true }).click();
    await question.waitFor({ state: 'detached' });
    const start = page.getByRole('button', { name: 'Reactivate', exact: true });
    await expect.poll(() => start.evaluate(IS_FOCUSED)).toBe(true);
    await expectText(page.locator('.facts .badge'), 'Paused by hand');
    expect(await webhookOf(token, webhookId)).toMatchObject({ status: 'paused', pausedReason: 'manual' });

    await start.click();
    await expectText(question.locator('#reactivate-answer'), /^Ping: Delivered/);
    await question.getByRole('button', { name: 'Reactivate', exact: true }).click();
    await expectText(page.locator('.facts .badge'), 'Active');
    await expectText(page.locator('.action [role=status]'), 'Reactivated: the failure count is 0, and the next change is delivered.');
    await expect.poll(() => isFocused(page, '.action [role=status]')).toBe(true);
    expect(await webhookOf(token, webhookId)).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 0 });
    expect(await loggedPings(token, webhookId)).toHaveLength(2);
    expect(pingsTo(urlPath)).toBe(registrationPings + 2);
  });

  it('warns when the ping gets no 2xx, and still reactivates once confirmed, by keyboard alone', async () => {
    const urlPath = '/ui/reactivate/failing';
    const { token, webhookId, url } = await pausedWebhook(urlPath);
    // Registered while it answered 200; from now on it answers 500.
    suite.receiver.respondWith((request) => ({ status: request.path === urlPath ? 500 : 200 }));
    try {
      const page = await suite.tabs.open(token);
      await openWebhook(page, url);
      await tabTo(page, page.getByRole('button', { name: 'Reactivate', exact: true }));
      await page.keyboard.press('Enter');
      const question = reactivationQuestion(page);
      const answer = question.locator('#reactivate-answer');
      await expectText(answer, /^Ping: Failed: non_2xx \(HTTP 500\) after \d+ ms$/);
      expect(await textOf(question.locator('#reactivate-question'))).toBe(
        'The receiver did not answer with a 2xx. Reactivate anyway? If deliveries keep failing, the webhook is paused again after 20 failures in a row.',
      );
      await expect.poll(() => answer.evaluate(IS_FOCUSED)).toBe(true);
      expect(await webhookOf(token, webhookId)).toMatchObject({ status: 'paused' });
      expect(await loggedPings(token, webhookId)).toMatchObject([{ outcome: 'failed', statusCode: 500, error: 'non_2xx' }]);
      await page.locator('.actions').screenshot({ path: path.join(DOCS, 'reactivate-after-ping.png') });

      // From the answer, the confirm is the next stop, then Cancel.
      await page.keyboard.press('Tab');
      const confirm = question.getByRole('button', { name: 'Reactivate', exact: true });
      expect(await confirm.evaluate(IS_FOCUSED)).toBe(true);
      await page.keyboard.press('Tab');
      expect(await question.getByRole('button', { name: 'Cancel', exact: true }).evaluate(IS_FOCUSED)).toBe(true);
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Enter');
      await expectText(page.locator('.facts .badge'), 'Active');
      await expect.poll(() => isFocused(page, '.action [role=status]')).toBe(true);
      expect(await webhookOf(token, webhookId)).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    } finally {
      suite.receiver.respondWith({});
    }
  });

  it('fits a 375 px wide screen with the answer and its buttons', async () => {
    const { token, webhookId, url } = await pausedWebhook('/ui/reactivate/narrow');
    const page = await suite.tabs.open(token, PHONE);
    await openWebhook(page, url);
    await page.getByRole('button', { name: 'Reactivate', exact: true }).click();
    const question = reactivationQuestion(page);
    await expectText(question.locator('#reactivate-answer'), /^Ping: Delivered/);
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    await question.getByRole('button', { name: 'Cancel', exact: true }).click();
    await question.waitFor({ state: 'detached' });
    expect(await webhookOf(token, webhookId)).toMatchObject({ status: 'paused' });
  });
});
