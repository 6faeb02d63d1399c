// The delivery log in headless Chromium, against the real stack and a real HTTPS receiver:
// an entry's request and response (the receiver's text shown as text, never markup), the
// `skipped` filter, and a table that breaks no word mid-word at 1280 and at 375 px. Saves
// the screenshots docs/dashboard-and-manual-tools.md shows.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SCREENSHOTS } from './support/browser';
import {
  DESKTOP,
  PHONE,
  expectText,
  logRows,
  logTableOverflow,
  openFirstDetail,
  openWebhook,
  pageOverflow,
  useDashboard,
} from './support/dashboard';

const suite = useDashboard();
afterEach(() => suite.receiver.reset());

/** An account with a list it owns and a webhook on `urlPath` for every topic. */
async function webhookOn(urlPath: string) {
  const url = suite.receiver.urlFor(urlPath);
  const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(url, {
    events: ['list.changed', 'item.added', 'list.members.changed'],
  });
  return { token: owner.token, webhookId, listId, url };
}

// Run in the page (this file is type-checked for Node, without the DOM's types): the words
// of the log's cells, labels and buttons that are laid out on more than one line. Ids, URLs
// (`.mono`, `.url`) and bodies may break anywhere: they are not words.
const BROKEN_WORDS = `(() => {
  const broken = new Set();
  for (const element of document.querySelectorAll('section.log th, section.log td, section.log label, section.log button')) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('.mono, .url, .visually-hidden, .delivery-detail')) continue;
      for (const word of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)));
        if (lines.size > 1) broken.add(word[0]);
      }
    }
  }
  return [...broken];
})()`;
/** The log's cells laid out at all, so that a check of none is no check. */
const CELLS_SHOWN = `[...document.querySelectorAll('section.log tbody td')].filter((cell) => cell.getClientRects().length > 0).length`;

describe('the delivery log', () => {
  it("shows a failed delivery's request and response, the receiver's markup as literal text", async () => {
    const { token, listId, url } = await webhookOn('/ui/detail');
    const html = `<html><head><script>document.title="pwned"</script></head><body><img src=x onerror="document.title='pwned'"><b>Down for maintenance</b></body></html>`;
    suite.receiver.respondWith({ status: 503, headers: { 'content-type': 'text/html', 'x-note': '<i>retry later</i>' }, body: html });
    await suite.stack.reportWrite(listId, 'ui-detail', [{ type: 'list.updated' }]);
    suite.receiver.reset();
    const sent = suite.receiver.requests.filter((request) => request.path === '/ui/detail').at(-1)!;

    for (const [viewport, screenshot] of [
      [DESKTOP, 'delivery-detail.png'],
      [PHONE, 'delivery-detail-narrow.png'],
    ] as const) {
      const page = await suite.tabs.open(token, viewport);
      await openWebhook(page, url);
      await expect.poll(() => logRows(page).count()).toBe(1);
      const panel = await openFirstDetail(page);

      const request = panel.getByRole('region', { name: 'Request' });
      await expectText(request.locator('p.mono').first(), `POST ${url}`);
      expect(await request.getByLabel('Request body').textContent()).toBe(sent.rawBody.toString('utf8'));
      expect(await request.locator('dt').allTextContents()).toEqual([
        'svc-event',
        'svc-signature',
        'svc-delivery',
        'svc-webhook',
        'content-type',
        'user-agent',
      ]);
      expect(await request.locator('dd').nth(1).textContent()).toBe(sent.headers['svc-signature']);

      const response = panel.getByRole('region', { name: 'Response' });
      await expectText(response.locator('p').first(), 'HTTP 503');
      expect(await response.getByLabel('Response body').textContent()).toBe(html);
      const headers = await response.locator('dt').allTextContents();
      expect(headers.slice(0, 2)).toEqual(['content-type', 'x-note']);
      expect(await response.locator('dd').nth(1).textContent()).toBe('<i>retry later</i>');
      // Text, never markup: nothing of it became an element, and nothing of it ran.
      expect(await page.locator('main script, main img, main b, main i').count()).toBe(0);
      expect(await page.title()).toBe('Webhooks dashboard');

      expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
      await page.locator('section.log').screenshot({ path: path.join(SCREENSHOTS, screenshot) });
    }
  });

  it("filters by skipped: a paused webhook's writes are logged, and were never sent", async () => {
    const { token, webhookId, listId, url } = await webhookOn('/ui/skipped');
    await suite.stack.reportWrite(listId, 'ui-before-pause', [{ type: 'list.updated' }]);
    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'paused' } });
    await suite.stack.reportWrite(listId, 'ui-while-paused', [{ type: 'item.added', itemId: 'milk' }]);

    const page = await suite.tabs.open(token);
    await openWebhook(page, url);
    await expect.poll(() => logRows(page).count()).toBe(3);
    await page.getByLabel('Outcome').selectOption('skipped');
    await expect.poll(() => logRows(page).count()).toBe(2);
    for (const row of await logRows(page).all()) {
      await expectText(row.locator('td[data-label="Outcome"] .cell-value'), 'skipped');
      await expectText(row.locator('td[data-label="Error"] .cell-value'), 'paused');
      await expectText(row.locator('td[data-label="Status code"] .cell-value'), '—');
      // Without tracing the service logs no trace id.
      await expectText(row.locator('td[data-label="Trace"] .cell-value'), '—');
    }
    const panel = await openFirstDetail(page);
    await expectText(panel.locator('.facts dd'), '—');
    await expectText(panel.getByRole('region', { name: 'Request' }).locator('p'), 'Nothing was sent: the webhook was paused.');
    await expectText(panel.getByRole('region', { name: 'Response' }).locator('p'), 'None.');
    expect(
      suite.receiver.requests.filter((request) => request.path === '/ui/skipped' && request.headers['svc-event'] !== 'ping'),
    ).toHaveLength(1);
  });

  it('breaks no word of the log mid-word, at 1280 and at 375 px', async () => {
    const { token, webhookId, listId, url } = await webhookOn('/ui/words');
    // Every kind of entry, the longest words the log shows: a redelivery of a failure, a
    // ping, list.members.changed, blocked_address, skipped.
    const member = await suite.stack.createAccount();
    suite.receiver.respondWith({ status: 500 });
    await suite.stack.reportWrite(listId, 'ui-words-1', [{ type: 'member.joined', accountId: member.id }]);
    suite.receiver.reset();
    const [failed] = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?event=list.members.changed`, { token })).body
      .data;
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${failed.id}/redeliveries`, { token });
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
    await suite.stack.service.sql`UPDATE webhooks SET url = 'https://[::ffff:169.254.169.254]/hook' WHERE id = ${webhookId}`;
    await suite.stack.reportWrite(listId, 'ui-words-2', [{ type: 'item.added', itemId: 'bread' }]);
    await suite.stack.service.sql`UPDATE webhooks SET url = ${url} WHERE id = ${webhookId}`;
    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'paused' } });
    await suite.stack.reportWrite(listId, 'ui-words-3', [{ type: 'list.updated' }]);

    for (const viewport of [DESKTOP, PHONE]) {
      const page = await suite.tabs.open(token, viewport);
      await openWebhook(page, url);
      await expect.poll(() => logRows(page).count()).toBe(7);
      await expectText(
        page.locator('td[data-label="Error"] .cell-value').filter({ hasText: 'blocked_address' }).first(),
        'blocked_address',
      );
      expect(await page.evaluate<number>(CELLS_SHOWN)).toBe(7 * 10);
      expect(await page.evaluate<string[]>(BROKEN_WORDS), `${viewport.width} px`).toEqual([]);
      expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
      // At 1280 px the whole table fits its column: nothing to scroll sideways to.
      if (viewport === DESKTOP) expect(await logTableOverflow(page)).toBeLessThanOrEqual(0);
    }
  });
});
