// An account owner's view: the dashboard at /dashboard in headless Chromium, against the
// real stack and a real HTTPS receiver. Every action end to end, what the page keeps of
// the token, hostile text, the keyboard and a 375 px screen. Saves the screenshots docs/api.md shows.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import type { ReceivedRequest } from '../support/receiver';
import { connectRelay } from '../support/relay-client';
import { SCREENSHOTS } from './support/browser';
import { IS_FOCUSED, expectText, openWebhook, reactivate, tabTo, textOf, useDashboard } from './support/dashboard';

const suite = useDashboard();

const received = (urlPath: string) => suite.receiver.requests.filter((request) => request.path === urlPath);

/** A new browser tab on /dashboard, signed in with `token` if given. */
const openDashboard = (token?: string, viewport?: { width: number; height: number }): Promise<Page> => suite.tabs.open(token, viewport);

/** An account with a list it owns and a webhook on `urlPath` for every topic. */
async function accountWithWebhook(urlPath: string) {
  const setUp = await suite.stack.setUpListWebhook(suite.receiver.urlFor(urlPath), { events: ['list.changed', 'item.added'] });
  return { ...setUp, token: setUp.owner.token, url: suite.receiver.urlFor(urlPath) };
}

/** Controls with no accessible name: inputs and selects without a label, buttons without text. */
const unlabelledControls = (page: Page) =>
  page.evaluate<string[]>(`[...document.querySelectorAll('input, select, textarea, button')]
    .filter((element) => !element.getAttribute('aria-label') && (element.tagName === 'BUTTON' ? !element.textContent.trim() : element.labels.length === 0))
    .map((element) => element.outerHTML)`);

const apiMessage = async (method: string, urlPath: string, token: string, body?: unknown) =>
  (await suite.stack.request(method, urlPath, { token, body })).body.error.message as string;

describe('the dashboard', () => {
  it('signs in with the account token, kept in sessionStorage only, never in a URL, cookie, localStorage or log', async () => {
    const account = await suite.stack.createAccount();
    const page = await openDashboard();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    await page.getByLabel('Account API token').fill('tok_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText(page.locator('#token-error'), await apiMessage('GET', '/v3/webhooks', 'tok_not-a-real-token'));

    await page.getByLabel('Account API token').fill(account.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText(page.locator('.empty'), /No webhooks yet/);
    expect(await page.getByText('Loading the dashboard').count()).toBe(0);

    expect(page.url()).toBe(`${suite.stack.service.url}/dashboard`);
    expect(requested.filter((url) => url.includes(account.token))).toEqual([]);
    expect(await page.context().cookies()).toEqual([]);
    const storage = await page.evaluate('({ local: localStorage.length, session: Object.values(sessionStorage) })');
    expect(storage).toEqual({ local: 0, session: [account.token] });
    expect(suite.stack.logs.join('')).not.toContain(account.token);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Account API token').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByLabel('Account API token').waitFor();
  });

  it('returns to sign-in when the API answers 401', async () => {
    const { owner, url } = await accountWithWebhook('/ui/revoked');
    const page = await openDashboard(owner.token);
    await page.getByRole('button', { name: url }).waitFor();
    // Every request of the first render answered first: one still under way when the token goes
    // would meet the 401 itself and return to sign-in before the click (seen under load).
    await page.waitForLoadState('networkidle');
    await suite.stack.service.sql`DELETE FROM account_tokens WHERE account_id = ${owner.id}`;
    await page.getByRole('button', { name: url }).click();
    await expectText(page.locator('.notice'), /no longer accepts this token/);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it("registers a webhook: the API's errors next to the URL, then the secret shown once with a copy button", async () => {
    const account = await suite.stack.createAccount();
    await suite.stack.putList('ui-register-list', account.id);
    const page = await openDashboard(account.token);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Register a webhook' }).click();
    const urlField = page.getByLabel('Endpoint URL');

    await urlField.fill('http://example.com/hook');
    await page.getByRole('button', { name: 'Register' }).click();
    await expectText(
      page.locator('#register-url-error'),
      await apiMessage('POST', '/v3/webhooks', account.token, { url: 'http://example.com/hook' }),
    );
    expect(await urlField.getAttribute('aria-invalid')).toBe('true');

    suite.receiver.respondWith((request) => ({ status: request.path === '/ui/register' ? 500 : 200 }));
    await urlField.fill(suite.receiver.urlFor('/ui/register'));
    await page.getByRole('button', { name: 'Register' }).click();
    await expectText(page.locator('#register-url-error'), /did not answer the ping with a 2xx \(non_2xx\)/);
    suite.receiver.respondWith({});

    await page.getByLabel('item.added').check();
    await page.getByLabel('List filter').fill('not-my-list');
    await page.getByRole('button', { name: 'Register' }).click();
    await expectText(page.locator('#register-list-ids-error'), /unknown or not owned/);

    await page.getByLabel('List filter').fill('ui-register-list');
    await page.getByRole('button', { name: 'Register' }).click();
    const secretField = page.getByLabel('Secret', { exact: true });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await expectText(page.locator('.secret [role=status]'), 'Copied to the clipboard.');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-register-secret.png') });
    // The registration's ping was signed with the secret shown.
    const ping = received('/ui/register').at(-1)!;
    expect(verifySignature(ping.rawBody, ping.headers['svc-signature'] as string, secret)).toBe(true);

    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    await page.getByRole('heading', { name: suite.receiver.urlFor('/ui/register') }).waitFor();
    expect(await page.content()).not.toContain(secret);
    const [webhook] = (await suite.stack.request('GET', '/v3/webhooks', { token: account.token })).body.data;
    expect(webhook).toMatchObject({ events: ['list.changed', 'item.added'], listIds: ['ui-register-list'] });
  });

  it("changes topics and the list filter, with the API's error next to the list field", async () => {
    const { token, webhookId, listId, url } = await accountWithWebhook('/ui/edit');
    const page = await openDashboard(token);
    await openWebhook(page, url);
    await page.getByLabel('item.checked').check();
    await page.getByLabel('item.added').uncheck();
    await page.getByLabel('List filter').fill(`${listId}, someone-elses-list`);
    await page.getByRole('button', { name: 'Save topics and lists' }).click();
    await expectText(page.locator('#edit-list-ids-error'), /unknown or not owned/);

    await page.getByLabel('List filter').fill(listId);
    await page.getByRole('button', { name: 'Save topics and lists' }).click();
    await expectText(page.locator('.subscription [role=status]'), 'Saved.');
    const webhook = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body;
    expect(webhook).toMatchObject({ events: ['list.changed', 'item.checked'], listIds: [listId] });
  });

  it('shows a paused webhook with its failed deliveries, redelivers one, pings, pages the log, and reactivates it so that it receives again', async () => {
    const { token, webhookId, listId, url } = await accountWithWebhook('/ui/paused');
    await suite.stack.registerWebhook(token, suite.receiver.urlFor('/ui/healthy'), {
      events: ['list.changed', 'item.added', 'item.removed'],
    });
    suite.receiver.respondWith((request) => ({ status: request.path === '/ui/paused' ? 503 : 200 }));
    for (let write = 1; write <= 10; write++)
      await suite.stack.reportWrite(listId, `ui-failing-${write}`, [{ type: 'item.added', itemId: `item-${write}` }]);
    await suite.stack.waitForFailureCount(token, webhookId, 20);
    suite.receiver.respondWith({});

    const page = await openDashboard(token);
    await expectText(page.getByRole('row', { name: new RegExp(url) }).getByText(/^Paused/), 'Paused after 20 consecutive failures');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-webhooks.png') });

    await openWebhook(page, url);
    await page.getByLabel('Outcome').selectOption('failed');
    const rows = page.locator('table.deliveries tbody tr');
    await expect.poll(() => rows.count()).toBe(20);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-paused-webhook.png'), fullPage: true });

    // Redeliver the newest failed item.added: the same body reaches the receiver again.
    await page.getByLabel('Event').selectOption('item.added');
    await expect.poll(() => rows.count()).toBe(10);
    const failedId = (await rows
      .first()
      .getByRole('button', { name: /^Redeliver/ })
      .getAttribute('aria-label'))!
      .split(' ')
      .at(-1)!;
    await rows
      .first()
      .getByRole('button', { name: /^Redeliver/ })
      .click();
    // (The log's own "Loading…" is a status too, while it reloads.)
    const redelivered = page.getByRole('status').filter({ hasText: /^Redelivered as/ });
    await expectText(redelivered, /^Redelivered as dlv_[0-9a-f]{24}: Delivered: HTTP 200 in \d+ ms$/);
    const redeliveryId = (await textOf(redelivered))!.split(' ')[2].replace(':', '');
    const original = received('/ui/paused').find((request) => request.headers['svc-delivery'] === failedId)!;
    const again = received('/ui/paused').find((request) => request.headers['svc-delivery'] === redeliveryId)!;
    expect(again.rawBody.equals(original.rawBody)).toBe(true);

    // A ping, with its result; then the log's filters and pages.
    await page.getByRole('button', { name: 'Send a ping' }).click();
    await expectText(page.locator('.action [role=status]'), /^Ping: Delivered: HTTP 200 in \d+ ms$/);
    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Event').selectOption('');
    await page.getByLabel('Kind').selectOption('ping');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel('Kind').selectOption('');
    await expect.poll(() => rows.count()).toBe(20);
    await page.getByRole('button', { name: 'Older' }).click();
    await expect.poll(() => rows.count()).toBe(2); // 20 failures, a redelivery and a ping: 22
    await page.getByRole('button', { name: 'Newer' }).click();
    await expect.poll(() => rows.count()).toBe(20);

    // Reactivate (a ping first, then the confirm): the count is 0, and the next write is delivered.
    expect(await reactivate(page)).toMatch(/^Ping: Delivered: HTTP 200 in \d+ ms$/);
    await expect
      .poll(async () => (await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body)
      .toMatchObject({ status: 'active', consecutiveFailures: 0 });
    const before = received('/ui/paused').length;
    await suite.stack.reportWrite(listId, 'ui-after-reactivation');
    expect(
      received('/ui/paused')
        .slice(before)
        .map((request) => request.headers['svc-event']),
    ).toEqual(expect.arrayContaining(['list.changed']));
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expectText(rows.first().locator('td[data-label="Outcome"]'), 'delivered');

    await page.getByRole('button', { name: 'Pause deliveries' }).click();
    await expectText(page.locator('.facts .badge'), 'Paused by hand');
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body).toMatchObject({
      status: 'paused',
      pausedReason: 'manual',
    });
  });

  it('rotates the secret after confirming: shown once, and the next delivery is signed with it', async () => {
    const { token, url } = await accountWithWebhook('/ui/rotate');
    const page = await openDashboard(token);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await openWebhook(page, url);
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.getByLabel('Your own new secret (optional)').fill('whsec_short');
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await expectText(page.locator('#own-secret-error'), /secret: must match pattern/);

    await page.getByLabel('Your own new secret (optional)').fill('');
    await page.getByRole('button', { name: 'Rotate now' }).click();
    const secret = await page.getByLabel('Secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: 'Send a ping' }).click();
    await expectText(page.locator('.action [role=status]'), /^Ping: Delivered/);
    const ping: ReceivedRequest = received('/ui/rotate').at(-1)!;
    expect(verifySignature(ping.rawBody, ping.headers['svc-signature'] as string, secret)).toBe(true);
  });

  it('sends a test event of the topic chosen, signed and marked SVC-Test, logged as a test that is not redelivered', async () => {
    const { token, url, webhookId } = await accountWithWebhook('/ui/test-event');
    const page = await openDashboard(token);
    await openWebhook(page, url);
    await page.getByLabel('Topic', { exact: true }).selectOption('item.checked');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await expectText(
      page.locator('.action [role=status]').filter({ hasText: 'Test event' }),
      /^Test event: Delivered: HTTP 200 in \d+ ms$/,
    );
    const sent: ReceivedRequest = received('/ui/test-event').at(-1)!;
    expect(sent.headers).toMatchObject({ 'svc-event': 'item.checked', 'svc-test': '1' });
    expect(JSON.parse(sent.rawBody.toString('utf8'))).toMatchObject({ event: 'item.checked', listId: 'test', cursor: 0 });

    await page.getByLabel('Kind').selectOption('test');
    const row = page.locator('tbody tr').filter({ hasText: 'item.checked' });
    await expectText(row.locator('td').nth(1), /test$/);
    await expect.poll(() => row.getByRole('button', { name: /^Redeliver/ }).count()).toBe(0);
    const [logged] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=test`, { token })).body.data;
    expect(logged).toMatchObject({ id: sent.headers['svc-delivery'], kind: 'test', event: 'item.checked' });
  });

  it('shows a relay session as such, with no pause or reactivation, and the test event its listen forwarded', async () => {
    const owner = await suite.stack.createAccount();
    const { body: session } = await suite.stack.request('POST', '/v3/relay-sessions', { token: owner.token });
    const connection = await connectRelay(
      (method, urlPath, options) => suite.stack.request(method, urlPath, options),
      suite.stack.service.url,
      owner.token,
      session.id,
    );
    const page = await openDashboard(owner.token);
    await expectText(page.locator('tbody tr').filter({ hasText: session.url }).locator('.badge'), 'Relay session');
    await openWebhook(page, session.url);
    await expectText(page.getByRole('heading', { name: 'Relay session' }).locator('..').locator('p'), /^Opened by svc-webhooks listen/);
    await expect.poll(() => page.getByRole('button', { name: /Pause deliveries|Reactivate/ }).count()).toBe(0);

    await page.getByLabel('Topic', { exact: true }).selectOption('item.checked');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await expectText(
      page.locator('.action [role=status]').filter({ hasText: 'Test event' }),
      /^Test event: Delivered: HTTP 200 in \d+ ms$/,
    );
    expect(connection.requests.map((request) => request.headers['svc-event'])).toEqual(['item.checked']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-relay-session.png'), fullPage: true });
    await connection.close();
  });

  it('deletes a webhook only after confirmation', async () => {
    const { token, webhookId, url } = await accountWithWebhook('/ui/delete');
    const page = await openDashboard(token);
    await openWebhook(page, url);
    await page.getByRole('button', { name: 'Delete this webhook' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).status).toBe(200);

    await page.getByRole('button', { name: 'Delete this webhook' }).click();
    await page.getByRole('button', { name: 'Yes, delete it' }).click();
    await expectText(page.getByRole('status').filter({ hasText: 'was deleted' }), `${url} was deleted.`);
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).status).toBe(404);
    await expectText(page.locator('.empty'), /No webhooks yet/);
  });

  it('renders what the API returns as text, never as markup', async () => {
    const { token, webhookId } = await accountWithWebhook('/ui/hostile');
    const hostileUrl = 'https://x.test/<img src=x onerror="document.title=`pwned`">';
    const hostileList = '<script>document.title="pwned"</script>';
    await suite.stack.service.sql`UPDATE webhooks SET url = ${hostileUrl}, list_ids = ${[hostileList]} WHERE id = ${webhookId}`;
    await suite.stack.service.sql`
      INSERT INTO deliveries (id, webhook_id, kind, event, list_id, cursor, at, outcome, error, duration_ms)
      VALUES ('dlv_0123456789abcdef01234567', ${webhookId}, 'event', '<b>list.changed</b>', ${hostileList}, 1, now(), 'failed', '<i>boom</i>', 1)`;
    const page = await openDashboard(token);
    await expectText(page.getByRole('button', { name: hostileUrl }), hostileUrl);
    await openWebhook(page, hostileUrl);
    await page.getByText('<b>list.changed</b>').waitFor();
    expect(await page.getByText('<i>boom</i>').count()).toBe(1);
    expect(await page.locator('main img, main script, main b, main i').count()).toBe(0);
    expect(await page.title()).toBe('Webhooks dashboard');
  });

  it('can be used with the keyboard alone, every control labelled', async () => {
    const account = await suite.stack.createAccount();
    const page = await openDashboard();
    // The token field has the focus on arrival.
    const tokenField = page.getByLabel('Account API token');
    await expect.poll(() => tokenField.evaluate(IS_FOCUSED)).toBe(true);
    await page.keyboard.type(account.token);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your webhooks' }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);

    await tabTo(page, page.getByRole('button', { name: 'Register a webhook' }));
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByLabel('Endpoint URL'));
    await page.keyboard.type(suite.receiver.urlFor('/ui/keyboard'));
    await tabTo(page, page.getByLabel('item.removed'));
    await page.keyboard.press('Space');
    expect(await unlabelledControls(page)).toEqual([]);
    await tabTo(page, page.getByRole('button', { name: 'Register' }));
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('button', { name: 'I have stored the secret' }));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: suite.receiver.urlFor('/ui/keyboard') }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);

    await tabTo(page, page.getByRole('button', { name: 'Send a ping' }));
    await page.keyboard.press('Enter');
    await expectText(page.locator('.action [role=status]'), /^Ping: Delivered/);
    await tabTo(
      page,
      page
        .getByRole('button', { name: /^Redeliver/ })
        .or(page.getByLabel('Outcome'))
        .first(),
    );
    const [webhook] = (await suite.stack.request('GET', '/v3/webhooks', { token: account.token })).body.data;
    expect(webhook.events).toEqual(['list.changed', 'item.removed']);
  });

  it('fits a 375 px wide screen: nothing wider than the screen', async () => {
    const { token, url, listId } = await accountWithWebhook('/ui/narrow');
    await suite.stack.reportWrite(listId, 'ui-narrow', [{ type: 'item.added' }]);
    const page = await openDashboard(token, { width: 375, height: 812 });
    const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    await page.getByRole('button', { name: url }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await openWebhook(page, url);
    await expect.poll(() => page.locator('table.deliveries tbody tr').count()).toBe(2);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-narrow.png'), fullPage: true });
    await page.getByRole('button', { name: 'All webhooks' }).click();
    await page.getByRole('button', { name: 'Register a webhook' }).click();
    await page.getByLabel('Endpoint URL').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
  });
});
