// The audit log in the dashboard, in headless Chromium on the real stack: a secret rotated in
// one tab with a token of its own is read in another tab's audit log, filtered to
// webhook.secret_rotated, naming that token, the address and never the secret; a token's name
// that looks like markup shows as text; a token without account:admin is not led there; the
// page fits 375 px. Saves the screenshot docs/api.md shows, docs/audit-log.png.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DOCS } from './support/browser';
import { PHONE, expectText, openPage, openWebhook, pageOverflow, useDashboard } from './support/dashboard';

const suite = useDashboard();

/** Rows of the audit log's table. */
const rows = (page: Page) => page.locator('table.audit tbody tr');

describe('the audit log page', () => {
  it('reads which token rotated a secret, by name and address, with the secret nowhere on the page', async () => {
    const account = await suite.stack.createAccount();
    const made = await suite.stack.request('POST', '/v3/account/tokens', { token: account.token, body: { name: 'deploy bot' } });
    expect(made.status).toBe(201);
    const webhook = await suite.stack.registerWebhook(account.token, suite.receiver.urlFor('/ui/audit/rotated'));
    const change = async (method: string, path: string, body?: unknown) =>
      expect((await suite.stack.request(method, path, { token: account.token, body })).status).toBe(200);
    await change('PATCH', `/v3/webhooks/${webhook.id}`, { events: ['list.changed', 'item.added'] });
    await change('POST', `/v3/webhooks/${webhook.id}/pings`);
    await change('PATCH', `/v3/webhooks/${webhook.id}`, { status: 'paused' });
    await change('PATCH', `/v3/webhooks/${webhook.id}`, { status: 'active' });

    // The deploy bot's own tab rotates the secret.
    const bot = await suite.tabs.open(made.body.token);
    await openWebhook(bot, webhook.url);
    await bot.getByRole('button', { name: 'Rotate the secret' }).click();
    await bot.getByRole('button', { name: 'Rotate now' }).click();
    const secret = await bot.getByLabel('Secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await bot.getByRole('button', { name: 'I have stored the secret' }).click();

    // The owner's tab reads who did it: every change newest first, each with what it set.
    const page = await suite.tabs.open(account.token);
    await openPage(page, 'Audit log');
    await expect.poll(() => rows(page).count()).toBe(7);
    const cells = (row: number, column: number) => rows(page).nth(row).locator(`td:nth-child(${column}) .cell-value`);
    expect(await rows(page).locator('td:nth-child(2) .cell-value').allTextContents()).toEqual([
      'webhook.secret_rotated',
      'webhook.reactivated',
      'webhook.paused',
      'webhook.pinged',
      'webhook.updated',
      'webhook.created',
      'token.created',
    ]);
    expect(await cells(1, 5).textContent()).toBe('previous: {status: paused, pausedReason: manual, consecutiveFailures: 0}');
    expect(await cells(4, 5).textContent()).toBe('events: list.changed, item.added');
    expect(await cells(6, 5).textContent()).toMatch(/^name: deploy botscopes: webhooks:read, /);
    expect(await cells(5, 4).textContent()).toMatch(/^the token initial tkn_[0-9a-f]{24} from 127\.0\.0\.1$/);
    await page.screenshot({ path: path.join(DOCS, 'audit-log.png'), fullPage: true });

    await page.getByLabel('Action').selectOption('webhook.secret_rotated');
    await expect.poll(() => rows(page).count()).toBe(1);
    const [when, action, target, by, details] = await rows(page).first().locator('td .cell-value').allTextContents();
    expect(when).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    expect(action).toBe('webhook.secret_rotated');
    expect(target).toBe(`webhook ${webhook.id}`);
    expect(by).toBe(`the token deploy bot ${made.body.id} from 127.0.0.1`);
    expect(details).toBe('—');
    expect(await page.content()).not.toContain(secret);

    // A webhook named in an entry opens its page.
    await rows(page).first().getByRole('button', { name: webhook.id }).click();
    await page.getByRole('heading', { name: webhook.url }).waitFor();
  });

  it('shows a name that looks like markup as text, is not offered to a token without account:admin, and fits 375 px', async () => {
    const account = await suite.stack.createAccount();
    // A name that a page rendering markup would turn into an image, and run.
    const name = '<img src=x onerror="document.title=1"> reader';
    const reader = await suite.stack.request('POST', '/v3/account/tokens', {
      token: account.token,
      body: { name, scopes: ['webhooks:read', 'account:read'] },
    });
    expect(reader.status).toBe(201);
    const narrow = await suite.tabs.open(reader.body.token);
    await narrow.getByRole('button', { name: 'Notices', exact: true }).waitFor();
    expect(await narrow.getByRole('button', { name: 'Audit log', exact: true }).count()).toBe(0);

    await suite.stack.registerWebhook(account.token, suite.receiver.urlFor(`/ui/audit/${'narrow/'.repeat(20)}end`));
    const phone = await suite.tabs.open(account.token, PHONE);
    await openPage(phone, 'Audit log');
    await expect.poll(() => rows(phone).count()).toBe(2);
    await expectText(rows(phone).nth(1).locator('td:nth-child(5) .cell-value li').first(), `name: ${name}`);
    expect(await phone.locator('table.audit img').count()).toBe(0);
    expect(await pageOverflow(phone)).toBeLessThanOrEqual(0);
  });
});
