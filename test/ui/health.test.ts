// Each webhook's last 24 hours in the dashboard, in headless Chromium against the real stack
// and a real HTTPS receiver: the hourly bars (delivered beside failed) on each webhook of the
// list and on the webhook's page, drawn from real deliveries, with the totals in words and a
// title per bar, within the page's CSP (any violation fails the test) and at 375 px. Saves
// the screenshot docs/dashboard-and-manual-tools.md shows, docs/health-bars.png.
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { HEALTH_HOURS } from '../../src/limits';
import { PHONE, expectText, openWebhook, pageOverflow, useDashboard } from './support/dashboard';

const suite = useDashboard();

/** The repository's docs/, where the screenshot goes. */
const DOCS = path.join(__dirname, '..', '..', 'docs');

/** What a bar's title says of its hour: "2026-11-22 14:00–15:00 UTC". */
function hourText(iso: string): string {
  const start = Math.floor(Date.parse(iso) / 3_600_000) * 3_600_000;
  const [from, to] = [new Date(start).toISOString(), new Date(start + 3_600_000).toISOString()];
  return `${from.slice(0, 10)} ${from.slice(11, 16)}–${to.slice(11, 16)} UTC`;
}

/** The title of the bar of `kind` for the hour `iso` falls in. */
const barTitle = (chart: Locator, kind: 'delivered' | 'failed', iso: string) =>
  chart.locator(`rect.bar.${kind} title`).filter({ hasText: hourText(iso) });

/** Heights of the chart's bars of `kind`, oldest hour first. */
const barHeights = (chart: Locator, kind: 'delivered' | 'failed') =>
  chart.locator(`rect.bar.${kind}`).evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute('height'))));

/**
 * An account with a webhook at /ui/health/busy that was sent 3 event deliveries delivered and
 * 2 failed (its receiver answering 503), and one at /ui/health/quiet that was sent none. The
 * busy one's earlier hours are given rows as the logging statement would have counted them
 * then (a test cannot wait hours): an outage 5 to 3 hours ago among steady deliveries.
 */
async function accountWithDeliveries() {
  const busyUrl = suite.receiver.urlFor('/ui/health/busy');
  const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(busyUrl);
  const quiet = await suite.stack.registerWebhook(owner.token, suite.receiver.urlFor('/ui/health/quiet'), { events: ['item.checked'] });
  for (let i = 0; i < 3; i++) await suite.stack.reportWrite(listId, `delivered-${i}`);
  suite.receiver.respondWith((request) => (request.path === '/ui/health/busy' ? { status: 503 } : {}));
  for (let i = 0; i < 2; i++) await suite.stack.reportWrite(listId, `failed-${i}`);
  suite.receiver.reset();

  const earlier = Array.from({ length: 20 }, (_, i) => {
    const ago = 20 - i;
    const outage = ago >= 3 && ago <= 5;
    return { ago, delivered: outage ? 1 : 4 + ((ago * 7) % 5), failed: outage ? 6 - (ago % 3) : 0 };
  });
  await suite.stack.service.sql`
    INSERT INTO webhook_health_hours (webhook_id, hour, delivered, failed)
    SELECT ${webhookId}, date_trunc('hour', now(), 'UTC') - make_interval(hours => e.ago), e.delivered, e.failed
    FROM jsonb_to_recordset(${suite.stack.service.sql.json(earlier)}) AS e(ago int, delivered int, failed int)`;
  const total = (key: 'delivered' | 'failed') => earlier.reduce((sum, hour) => sum + hour[key], 0);

  const log = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event`, { token: owner.token });
  const [lastFailed] = log.body.data;
  const lastDelivered = log.body.data.find((entry: { outcome: string }) => entry.outcome === 'delivered');
  expect([lastFailed.outcome, lastDelivered.outcome]).toEqual(['failed', 'delivered']);
  return {
    token: owner.token,
    busy: { id: webhookId, url: busyUrl, delivered: total('delivered') + 3, failed: total('failed') + 2, lastFailed, lastDelivered },
    quiet: { id: quiet.id, url: quiet.url },
  };
}

describe("each webhook's last 24 hours", () => {
  it('draws the hourly bars, delivered beside failed, on each webhook of the list and on its page, with the totals in words', async () => {
    const { token, busy, quiet } = await accountWithDeliveries();
    const page = await suite.tabs.open(token);
    const row = (url: string) => page.getByRole('row').filter({ has: page.getByRole('button', { name: url }) });

    // The list: each webhook's bars, small, and its totals.
    const busyCell = row(busy.url).locator('td[data-label="Last 24 hours"]');
    const busyChart = busyCell.locator('svg');
    await busyChart.waitFor();
    await expectText(busyCell.locator('.health-summary'), `Delivered ${busy.delivered}, failed ${busy.failed} in the last 24 hours`);
    expect(await busyChart.locator('rect.bar.delivered').count()).toBe(HEALTH_HOURS);
    expect(await busyChart.locator('rect.bar.failed').count()).toBe(HEALTH_HOURS);
    expect(await busyChart.getAttribute('role')).toBe('img');
    // The real deliveries are in the hour they were logged in, each bar titled with its figure.
    expect(await barTitle(busyChart, 'delivered', busy.lastDelivered.attemptedAt).textContent()).toMatch(/: 3 delivered$/);
    expect(await barTitle(busyChart, 'failed', busy.lastFailed.attemptedAt).textContent()).toMatch(/: 2 failed$/);
    const heights = await barHeights(busyChart, 'failed');
    expect(heights.filter((height) => height > 0).length).toBeGreaterThanOrEqual(4);

    const quietCell = row(quiet.url).locator('td[data-label="Last 24 hours"]');
    await quietCell.locator('svg').waitFor();
    await expectText(quietCell.locator('.health-summary'), 'Delivered 0, failed 0 in the last 24 hours');
    expect(await barHeights(quietCell.locator('svg'), 'delivered')).toEqual(Array(HEALTH_HOURS).fill(0));
    await page
      .locator('section')
      .first()
      .screenshot({ path: path.join(DOCS, 'health-bars.png') });

    // The webhook's page: the same bars with an axis, the last times, and the numbers hour by hour.
    await openWebhook(page, busy.url);
    const section = page.getByRole('region', { name: 'Last 24 hours' });
    const chart = section.locator('svg');
    await chart.waitFor();
    await expectText(section.locator('.health-summary'), `Delivered ${busy.delivered}, failed ${busy.failed} in the last 24 hours.`);
    expect(await chart.locator('rect.bar.delivered').count()).toBe(HEALTH_HOURS);
    expect(await chart.locator('rect.bar.failed title').count()).toBe(HEALTH_HOURS);
    expect(await barTitle(chart, 'failed', busy.lastFailed.attemptedAt).textContent()).toMatch(/: 2 failed$/);
    expect(await chart.locator('text').allTextContents()).toEqual(expect.arrayContaining(['0']));
    const time = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
    expect(await section.locator('dt:has-text("Last delivered") + dd').textContent()).toBe(time(busy.lastDelivered.attemptedAt));
    expect(await section.locator('dt:has-text("Last failed") + dd').textContent()).toBe(time(busy.lastFailed.attemptedAt));
    await section.getByText('The numbers, hour by hour').click();
    expect(await section.locator('table.health-hours tbody tr').count()).toBe(HEALTH_HOURS);
  });

  it('fits a 375 px screen', async () => {
    const { token, busy } = await accountWithDeliveries();
    const page = await suite.tabs.open(token, PHONE);
    await page.locator('td[data-label="Last 24 hours"] svg').first().waitFor();
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    await openWebhook(page, busy.url);
    await page.getByRole('region', { name: 'Last 24 hours' }).locator('svg').waitFor();
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
  });
});
