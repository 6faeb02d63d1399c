// The dashboard's tenant pages in headless Chromium, on the real stack: API tokens (make
// one, shown once; revoke the one the tab is signed in with, refused at once), a 429 shown
// as a message on a page that keeps working, and the usage chart drawn from the meter's
// numbers. Saves the screenshots docs/api.md shows.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createAccountAccess } from '../../src/api/account-access';
import { SCREENSHOTS } from './support/browser';
import { PHONE, dashboardTabs, useDashboard } from './support/dashboard';

const suite = useDashboard();

const overflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

describe('the API tokens page', () => {
  it('makes a second token, shown once, then revokes the first: refused at once, and the tab signs in again with the second', async () => {
    const account = await suite.stack.createAccount();
    const page = await suite.tabs.open(account.token);
    await page.getByRole('button', { name: 'API tokens', exact: true }).click();
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    const initialRow = page.getByRole('row').filter({ hasText: 'initial' });
    await expect.poll(() => initialRow.textContent()).toContain(account.token.slice(0, 8));
    expect(await initialRow.textContent()).toContain('this dashboard');

    // The API's own message next to the name it is about.
    await page.getByLabel('Name').fill('n'.repeat(101));
    await page.getByRole('button', { name: 'Make token' }).click();
    await expect.poll(() => page.locator('#token-name-error').textContent()).toMatch(/name/);

    await page.getByLabel('Name').fill('CI');
    await page.getByLabel('Expires').selectOption({ label: '30 days' });
    await page.getByRole('button', { name: 'Make token' }).click();
    await page.getByRole('heading', { name: 'Token made' }).waitFor();
    const shown = await page.getByLabel('Token', { exact: true }).inputValue();
    expect(shown).toMatch(/^tok_/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-token-made.png') });
    expect((await suite.stack.request('GET', '/v3/webhooks', { token: shown })).status).toBe(200);
    await page.getByRole('button', { name: 'I have stored the token' }).click();

    const ciRow = page.getByRole('row').filter({ hasText: 'CI' });
    await ciRow.waitFor();
    expect(await ciRow.textContent()).toContain(shown.slice(0, 8));
    expect(await page.content()).not.toContain(shown);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-tokens.png') });

    await page.getByRole('button', { name: 'Revoke initial' }).click();
    await expect.poll(() => initialRow.textContent()).toContain('you will be signed out');
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/no longer accepts this token/);
    expect((await suite.stack.request('GET', '/v3/webhooks', { token: account.token })).status).toBe(401);

    await page.getByLabel('Account API token').fill(shown);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'API tokens', exact: true }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'initial' }).count()).toBe(0);
    expect(await page.getByRole('row').filter({ hasText: 'CI' }).textContent()).toContain('this dashboard');
  });

  it('fits a 375 px wide screen', async () => {
    const account = await suite.stack.createAccount();
    const page = await suite.tabs.open(account.token, PHONE);
    await page.getByRole('button', { name: 'API tokens', exact: true }).click();
    await page.getByRole('row').filter({ hasText: 'initial' }).waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: 'Usage', exact: true }).click();
    await page.locator('.chart svg').waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
  });
});

describe('the usage page', () => {
  it("draws the last 30 days' requests beside deliveries from the meter's numbers", async () => {
    const { owner, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/ui/usage'));
    for (const writeId of ['u1', 'u2', 'u3']) await suite.stack.reportWrite(listId, writeId);
    const page = await suite.tabs.open(owner.token);
    await page.getByRole('button', { name: 'Usage', exact: true }).click();
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    await page.locator('.chart svg').waitFor();

    const [today] = (await suite.stack.request('GET', '/v3/account/usage', { token: owner.token })).body.data.slice(-1);
    expect(today.deliveries).toBe(3);
    expect(await page.locator('.chart rect.bar.requests').count()).toBe(30);
    expect(await page.locator('.chart rect.bar.deliveries').count()).toBe(30);
    // The page's reading came before the one above: one request fewer.
    expect(await page.locator('.chart g.day title').last().textContent()).toBe(
      `${today.date}: ${today.apiRequests - 1} API requests, ${today.deliveries} deliveries`,
    );
    const heights = await page
      .locator('.chart g.day')
      .last()
      .locator('rect')
      .evaluateAll((rects) =>
        rects.map((rect) => Number((rect as unknown as { getAttribute(name: string): string }).getAttribute('height'))),
      );
    expect(heights.every((height) => height > 0)).toBe(true);
    expect(await page.getByText(`${today.deliveries} deliveries`).first().textContent()).toContain('API requests');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-usage.png') });
    await page.getByText('The numbers, day by day').click();
    expect(await page.getByRole('row').filter({ hasText: today.date }).textContent()).toContain(String(today.deliveries));
  });
});

describe('a 429 in the dashboard', () => {
  it("shows the API's message beside what was refused, on a page that keeps working, and loads once the window is over", async () => {
    // An API of its own whose accounts may make 10 requests per 10 s.
    const access = createAccountAccess(suite.stack.service.sql, {
      account: { perSecond: 1, burst: 10 },
      address: { perSecond: 1, burst: 10 },
      accountInFlight: 4,
    });
    await access.start();
    const api = await suite.stack.startApiWith({ access });
    const limitedTabs = dashboardTabs(suite.browser, () => `${api.url}/dashboard`);
    try {
      const account = await suite.stack.createAccount();
      // Two requests: signing in checks the token, then the list loads.
      const page = await limitedTabs.open(account.token);
      for (let spent = false; !spent;) spent = (await api.request('GET', '/v3/webhooks', { token: account.token })).status === 429;
      await page.getByRole('button', { name: 'Usage', exact: true }).click();
      await page.getByRole('heading', { name: 'Usage' }).waitFor();
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toMatch(/^This account is over its rate limit: try again in \d+ seconds?\.$/);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-rate-limited.png') });

      await page.getByRole('button', { name: 'API tokens', exact: true }).click();
      await page.getByRole('heading', { name: 'API tokens' }).waitFor();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^This account is over its rate limit/);
      await page.getByRole('button', { name: 'Usage', exact: true }).click();
      await expect
        .poll(
          async () => {
            if ((await page.getByRole('button', { name: 'Try again' }).count()) > 0)
              await page.getByRole('button', { name: 'Try again' }).click();
            return page.locator('.chart svg').count();
          },
          { timeout: 20_000, interval: 1000 },
        )
        .toBe(1);
      expect(limitedTabs.problems).toEqual([]);
    } finally {
      await limitedTabs.closeAll();
      await api.close();
      await access.stop();
    }
  });
});
