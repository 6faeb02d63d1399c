// Trace ids in the delivery log, in headless Chromium, on a stack that traces its deliveries
// (TRACE_RECEIVERS=on) and links trace ids to a trace viewer (TRACE_URL_TEMPLATE): the log's
// short id and the detail's whole id open the viewer in a new tab, and an API served without
// the template shows them as text. Saves the screenshot docs/dashboard-and-manual-tools.md shows.
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { SCREENSHOTS } from './support/browser';
import {
  DESKTOP,
  PHONE,
  dashboardTabs,
  expectText,
  logRows,
  logTableOverflow,
  openFirstDetail,
  openWebhook,
  pageOverflow,
  useDashboard,
} from './support/dashboard';

const TRACE_URL_TEMPLATE = 'http://localhost:16686/trace/{traceId}';
const suite = useDashboard({ TRACE_RECEIVERS: 'on', TRACE_URL_TEMPLATE });

/** A webhook on `urlPath` that a write was delivered to, and that delivery's trace id as the API logged it. */
async function deliveredWrite(urlPath: string) {
  const url = suite.receiver.urlFor(urlPath);
  const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(url);
  await suite.stack.reportWrite(listId, `write${urlPath.replaceAll('/', '-')}`, [{ type: 'list.updated' }]);
  const [entry] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token: owner.token })).body.data;
  expect(entry).toMatchObject({ kind: 'event', outcome: 'delivered', traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  return { token: owner.token, url, traceId: entry.traceId as string };
}

const traceCell = (row: Locator) => row.locator('td[data-label="Trace"] .cell-value');

const linkAttributes = async (link: Locator) => ({
  href: await link.getAttribute('href'),
  target: await link.getAttribute('target'),
  rel: await link.getAttribute('rel'),
});

describe('trace ids in the delivery log', () => {
  it("links the log's first 8 digits and the detail's whole id to the trace viewer, in a new tab", async () => {
    const { token, url, traceId } = await deliveredWrite('/ui/traced');
    const opensViewer = { href: TRACE_URL_TEMPLATE.replace('{traceId}', traceId), target: '_blank', rel: 'noopener noreferrer' };

    for (const viewport of [DESKTOP, PHONE]) {
      const page = await suite.tabs.open(token, viewport);
      await openWebhook(page, url);
      await expect.poll(() => logRows(page).count()).toBe(1);
      const short = traceCell(logRows(page).first()).getByRole('link');
      await expectText(short, traceId.slice(0, 8));
      expect(await short.getAttribute('title')).toBe(traceId);
      expect(await linkAttributes(short)).toEqual(opensViewer);

      const panel = await openFirstDetail(page);
      const whole = panel.locator('.facts dd').getByRole('link');
      await expectText(whole, traceId);
      expect(await linkAttributes(whole)).toEqual(opensViewer);

      expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
      if (viewport === DESKTOP) {
        expect(await logTableOverflow(page)).toBeLessThanOrEqual(0);
        await page.locator('section.log').screenshot({ path: path.join(SCREENSHOTS, 'delivery-detail-trace.png') });
      }
    }
  });

  it('shows the trace id as text where the API has no template', async () => {
    const { token, url, traceId } = await deliveredWrite('/ui/untemplated');
    const api = await suite.stack.startApiWith({ traceUrlTemplate: undefined });
    const untemplatedTabs = dashboardTabs(suite.browser, () => `${api.url}/dashboard`);
    try {
      const page = await untemplatedTabs.open(token);
      await openWebhook(page, url);
      await expect.poll(() => logRows(page).count()).toBe(1);
      const short = traceCell(logRows(page).first());
      await expectText(short, traceId.slice(0, 8));
      expect(await short.locator('[title]').getAttribute('title')).toBe(traceId);

      const panel = await openFirstDetail(page);
      await expectText(panel.locator('.facts dd'), traceId);
      expect(await page.locator('section.log a').count()).toBe(0);
      expect(untemplatedTabs.problems).toEqual([]);
    } finally {
      await untemplatedTabs.closeAll();
      await api.close();
    }
  });
});
