// "Recover missed deliveries" on a webhook's page, in headless Chromium against the real
// stack: the since time defaults to the start of the failure streak, the progress follows the
// recovery as it runs, cancel stops it, and a second one sends the rest. Saves the screenshot
// of a recovery in progress that docs/dashboard-and-manual-tools.md shows.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { recoveryWorkflowId } from '../../src/contract/workflows';
import { SCREENSHOTS } from './support/browser';
import { expectText, openWebhook, useDashboard } from './support/dashboard';

const suite = useDashboard();

const progress = (page: Page) => page.locator('.recovery .progress [role=status]');

describe('recovering missed deliveries in the dashboard', () => {
  it('starts at the failure streak, shows the progress live, cancels, and recovers the rest', async () => {
    const urlPath = '/ui/recover';
    const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor(urlPath));
    const { token } = owner;
    await suite.stack.reportWrite(listId, 'delivered');
    suite.receiver.respondWith((request) => ({ status: request.path === urlPath ? 503 : 200 }));
    for (let i = 1; i <= 6; i++) await suite.stack.reportWrite(listId, `missed-${i}`);
    // The receiver is fixed, and holds the third send it gets: the recovery stays under way.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const before = suite.receiver.requests.filter((request) => request.path === urlPath).length;
    suite.receiver.respondWith(async (request) => {
      if (request.path === urlPath && suite.receiver.requests.filter((r) => r.path === urlPath).indexOf(request) === before + 2)
        await released;
      return {};
    });

    const log = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event&limit=100`, { token });
    const failedFirst = log.body.data.filter((entry: { outcome: string }) => entry.outcome === 'failed').at(-1);
    const page = await suite.tabs.open(token);
    await openWebhook(page, suite.receiver.urlFor(urlPath));
    const since = page.getByLabel('Since (UTC)');
    await expect.poll(() => since.inputValue()).toBe(failedFirst.attemptedAt);

    await since.fill('2999-01-01T00:00:00Z');
    await page.getByRole('button', { name: 'Recover missed deliveries' }).click();
    await expectText(page.locator('#recovery-since-error'), /since: must be in the past/);
    await since.fill(failedFirst.attemptedAt);
    await page.getByRole('button', { name: 'Recover missed deliveries' }).click();
    await expectText(progress(page), 'Running: 3 of 6 sent, 2 delivered, 0 failed.');
    expect(await page.getByRole('progressbar', { name: 'Recovery progress' }).getAttribute('value')).toBe('3');
    await page.locator('.recovery').screenshot({ path: path.join(SCREENSHOTS, 'dashboard-recovery.png') });

    await page.getByRole('button', { name: 'Cancel the recovery' }).click();
    await expectText(progress(page), /^Cancelled: 3 of 6 sent/);
    const [first] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/recoveries`, { token })).body.data;
    expect(first.status).toBe('cancelled');
    release();
    await suite.stack.service.client.workflow.getHandle(recoveryWorkflowId(webhookId, first.id)).result();

    // The three not sent, now.
    await page.getByRole('button', { name: 'Recover missed deliveries' }).click();
    await expectText(progress(page), 'Completed: 3 of 3 sent, 3 delivered, 0 failed.');
    await expect.poll(() => page.locator('table.deliveries tbody tr', { hasText: 'redelivery' }).count()).toBe(6);
    const cursors = suite.receiver.requests
      .filter((request) => request.path === urlPath)
      .slice(before)
      .map((request) => JSON.parse(request.rawBody.toString('utf8')).cursor as number);
    expect(cursors.sort()).toEqual([2, 3, 4, 5, 6, 7]);
  });
});
