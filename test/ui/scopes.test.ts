// Scopes in the dashboard, in headless Chromium on the real stack. Signed in with a token of
// deliveries:read only, the page reads a webhook's log and an entry's detail (reaching the log
// by the webhook's id, since the token may not list webhooks) and offers no control the token
// may not use: no Register, Delete, Rotate, ping, test event, redelivery or recovery, nor the
// account's pages, saying why in words; it never calls a route the API would refuse. Signed in
// with a full token, the API tokens page makes a scoped token and lists each token's scopes;
// with a narrower one, it offers only the scopes that token holds. Saves the screenshot
// docs/api.md shows.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/scopes';
import { SCREENSHOTS } from './support/browser';
import { expectText, logRows, openFirstDetail, openPage, useDashboard } from './support/dashboard';

const suite = useDashboard();

/** A token of the account with these scopes, made over the API. */
async function tokenWith(ownerToken: string, name: string, scopes: string[]): Promise<string> {
  const made = await suite.stack.request('POST', '/v3/account/tokens', { token: ownerToken, body: { name, scopes } });
  expect(made.status).toBe(201);
  return made.body.token;
}

/** The statuses of the API's answers to the page, from now on. */
function apiStatuses(page: Page): number[] {
  const statuses: number[] = [];
  page.on('response', (response) => {
    if (new URL(response.url()).pathname.startsWith('/v3/')) statuses.push(response.status());
  });
  return statuses;
}

const buttonCount = (page: Page, name: string | RegExp) => page.getByRole('button', { name }).count();

describe('a token of deliveries:read only', () => {
  it('reads a webhook log by the webhook id, and is offered no control it may not use, saying why', async () => {
    const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/ui/scopes'));
    await suite.stack.reportWrite(listId, 'w1');
    const reader = await tokenWith(owner.token, 'log reader', ['deliveries:read']);
    const page = await suite.tabs.open();
    const statuses = apiStatuses(page);
    await page.getByLabel('Account API token').fill(reader);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Your webhooks' }).waitFor();

    await expectText(page.locator('.limited'), /log reader, which holds only deliveries:read:/);
    const said = page.locator('.not-allowed');
    await expectText(said.nth(0), 'This token may not register a webhook: it lacks the scope webhooks:write.');
    await expectText(said.nth(1), 'This token may not list your webhooks: it lacks the scope webhooks:read.');
    expect(await buttonCount(page, 'Register a webhook')).toBe(0);
    for (const pageName of ['Notices', 'API tokens', 'Audit log', 'Usage']) expect(await buttonCount(page, pageName)).toBe(0);
    expect(await buttonCount(page, 'All webhooks')).toBe(1);

    await page.getByLabel('Webhook id').fill(webhookId);
    await page.getByRole('button', { name: 'Open its log' }).click();
    await page.getByRole('heading', { name: `Webhook ${webhookId}` }).waitFor();
    await expect.poll(() => logRows(page).count()).toBe(1);
    expect(await logRows(page).first().textContent()).toContain('delivered');
    const panel = await openFirstDetail(page);
    await expectText(panel.locator('pre').first(), /"event":"list.changed"/);

    await expectText(page.getByText(/may not read this webhook's URL/), /it lacks the scope webhooks:read\.$/);
    await expectText(page.getByText(/may not redeliver/), 'This token may not redeliver an entry: it lacks the scope deliveries:write.');
    await expectText(page.getByText(/may not start or cancel/), /it lacks the scope deliveries:write\.$/);
    for (const control of [
      'Delete this webhook',
      'Rotate the secret',
      'Send a ping',
      'Send a test event',
      'Pause deliveries',
      'Reactivate',
      'Save topics and lists',
      'Recover missed deliveries',
      /^Redeliver/,
    ])
      expect(await buttonCount(page, control), String(control)).toBe(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-narrow-token.png'), fullPage: true });

    // The page asked only what the token may read: nothing the API refused.
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status >= 400)).toEqual([]);
  });
});

describe('the API tokens page', () => {
  it('makes a token of the scopes chosen from a full token, and lists each token with its scopes', async () => {
    const account = await suite.stack.createAccount();
    const page = await suite.tabs.open(account.token);
    await openPage(page, 'API tokens');
    await expectText(page.getByRole('row').filter({ hasText: 'initial' }).locator('.scopes'), /All$/);
    // All six offered, each checked: the scopes of the token the tab is signed in with.
    for (const scope of SCOPES) {
      const box = page.getByRole('checkbox', { name: new RegExp(`^${scope} `) });
      expect(await box.isChecked(), scope).toBe(true);
      expect(await box.isDisabled(), scope).toBe(false);
    }

    await page.getByLabel('Name').fill('none at all');
    for (const scope of SCOPES) await page.getByRole('checkbox', { name: new RegExp(`^${scope} `) }).uncheck();
    await page.getByRole('button', { name: 'Make token' }).click();
    await expectText(page.locator('#token-scopes-error'), /scopes/);

    await page.getByLabel('Name').fill('CI reader');
    for (const scope of ['webhooks:read', 'deliveries:read']) await page.getByRole('checkbox', { name: new RegExp(`^${scope} `) }).check();
    await page.getByRole('button', { name: 'Make token' }).click();
    await page.getByRole('heading', { name: 'Token made' }).waitFor();
    const shown = await page.getByLabel('Token', { exact: true }).inputValue();
    const own = await suite.stack.request('GET', '/v3/account/token', { token: shown });
    expect(own.body).toMatchObject({ name: 'CI reader', scopes: ['webhooks:read', 'deliveries:read'] });
    await page.getByRole('button', { name: 'I have stored the token' }).click();
    await expectText(page.getByRole('row').filter({ hasText: 'CI reader' }).locator('.scopes'), /webhooks:read, deliveries:read$/);
  });

  it('offers a narrower token only the scopes it holds, the others unchecked and greyed, saying why', async () => {
    const account = await suite.stack.createAccount();
    const admin = await tokenWith(account.token, 'admin and reader', ['deliveries:read', 'account:admin']);
    const page = await suite.tabs.open(admin);
    await openPage(page, 'API tokens');
    await expectText(page.locator('#token-scopes-hint'), /lacks those unchecked and greyed/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-token-scopes.png') });
    for (const scope of SCOPES) {
      const held = scope === 'deliveries:read' || scope === 'account:admin';
      const box = page.getByRole('checkbox', { name: new RegExp(`^${scope} `) });
      expect(await box.isChecked(), scope).toBe(held);
      expect(await box.isDisabled(), scope).toBe(!held);
      if (!held) expect(await page.locator('label.check').filter({ has: box }).textContent()).toContain('this token lacks it');
    }
    await page.getByLabel('Name').fill('by default');
    await page.getByRole('button', { name: 'Make token' }).click();
    await page.getByRole('heading', { name: 'Token made' }).waitFor();
    const shown = await page.getByLabel('Token', { exact: true }).inputValue();
    expect((await suite.stack.request('GET', '/v3/account/token', { token: shown })).body.scopes).toEqual([
      'deliveries:read',
      'account:admin',
    ]);
  });
});
