// "Recover missed deliveries" on a webhook's page, in headless Chromium against the real
// stack: the since time defaults to the start of the failure streak, the progress follows the
// recovery as it runs, cancel stops it, and a second one sends the rest. Saves the screenshot
// of a recovery in progress that docs/dashboard-and-manual-tools.md shows.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoveryWorkflowId } from '../../src/contract/workflows';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';
import { SCREENSHOTS, launchChromium } from './support/browser';

let stack: TestStack;
let receiver: Receiver;
let browser: Browser;
/** What the open page printed as errors (a CSP violation is one) or threw. */
const pageProblems: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await stack.startReceiver();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function openWebhook(token: string, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (message) => {
    // The API's 4xx answers the test provokes are logged by the browser too; nothing else may be.
    if (message.type() === 'error' && !message.location().url.includes('/v3/')) pageProblems.push(message.text());
  });
  page.on('pageerror', (error) => pageProblems.push(String(error)));
  await page.goto(`${stack.service.url}/dashboard`);
  await page.getByLabel('Account API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: url }).click();
  await page.getByRole('heading', { name: url }).waitFor();
  return page;
}

const progressText = (page: Page) => page.locator('.recovery .progress [role=status]').textContent();

describe('recovering missed deliveries in the dashboard', () => {
  it('starts at the failure streak, shows the progress live, cancels, and recovers the rest', async () => {
    const urlPath = '/ui/recover';
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor(urlPath));
    const { token } = owner;
    await stack.reportWrite(listId, 'delivered');
    receiver.respondWith((request) => ({ status: request.path === urlPath ? 503 : 200 }));
    for (let i = 1; i <= 6; i++) await stack.reportWrite(listId, `missed-${i}`);
    // The receiver is fixed, and holds the third send it gets: the recovery stays under way.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const before = receiver.requests.filter((request) => request.path === urlPath).length;
    receiver.respondWith(async (request) => {
      if (request.path === urlPath && receiver.requests.filter((r) => r.path === urlPath).indexOf(request) === before + 2) await released;
      return {};
    });

    const log = await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event&limit=100`, { token });
    const failedFirst = log.body.data.filter((entry: { outcome: string }) => entry.outcome === 'failed').at(-1);
    const page = await openWebhook(token, receiver.urlFor(urlPath));
    const since = page.getByLabel('Since (UTC)');
    await expect.poll(() => since.inputValue()).toBe(failedFirst.attemptedAt);

    await since.fill('2999-01-01T00:00:00Z');
    await page.getByRole('button', { name: 'Recover missed deliveries' }).click();
    await expect.poll(() => page.locator('#recovery-since-error').textContent()).toMatch(/since: must be in the past/);
    await since.fill(failedFirst.attemptedAt);
    await page.getByRole('button', { name: 'Recover missed deliveries' }).click();
    await expect.poll(() => progressText(page), { timeout: 15_000 }).toBe('Running: 3 of 6 sent, 2 delivered, 0 failed.');
    expect(await page.getByRole('progressbar', { name: 'Recovery progress' }).getAttribute('value')).toBe('3');
    await page.locator('.recovery').screenshot({ path: path.join(SCREENSHOTS, 'dashboard-recovery.png') });

    await page.getByRole('button', { name: 'Cancel the recovery' }).click();
    await expect.poll(() => progressText(page)).toMatch(/^Cancelled: 3 of 6 sent/);
    const [first] = (await stack.request('GET', `/v3/webhooks/${webhookId}/recoveries`, { token })).body.data;
    expect(first.status).toBe('cancelled');
    release();
    await stack.service.client.workflow.getHandle(recoveryWorkflowId(webhookId, first.id)).result();

    // The three not sent, now.
    await page.getByRole('button', { name: 'Recover missed deliveries' }).click();
    await expect.poll(() => progressText(page), { timeout: 15_000 }).toBe('Completed: 3 of 3 sent, 3 delivered, 0 failed.');
    await expect.poll(() => page.locator('table.deliveries tbody tr', { hasText: 'redelivery' }).count()).toBe(6);
    const cursors = receiver.requests
      .filter((request) => request.path === urlPath)
      .slice(before)
      .map((request) => JSON.parse(request.rawBody.toString('utf8')).cursor as number);
    expect(cursors.sort()).toEqual([2, 3, 4, 5, 6, 7]);
    await page.close();
    expect(pageProblems).toEqual([]);
  });
});
