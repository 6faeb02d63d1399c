// An operator's view: in the Temporal Web UI, filter by WebhookStatus and WebhookId, and
// find the webhook that 20 failed deliveries paused. Saves screenshots docs/operating.md shows.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  lifecycleWorkflowId,
  listWriteWorkflowId,
  recoveryWorkflowId,
  redeliveryWorkflowId,
  reencryptionWorkflowId,
} from '../../src/contract/workflows';
import { createAccount } from '../../src/db/accounts';
import { newSecretKeys } from '../../src/secret-keys';
import { FIXED_SECRET_KEYS, fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { withMigratedDatabase } from '../support/database';
import { insertSealedWebhooks } from '../support/sealed-webhooks';
import { lifecycleStateQuery } from '../../src/contract/messages';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';
import { SCREENSHOTS, launchChromium } from './support/browser';

let stack: TestStack;
let receiver: Receiver;
let browser: Browser;

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await stack.startReceiver();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/**
 * Opens the UI's list of workflows filtered by `query` and waits until it lists `workflowId`:
 * visibility is eventually consistent, so the page is reloaded until it does.
 */
/** Opens the Web UI's list for `query` once the server's visibility lists `workflowId` for it. */
async function openListed(page: Page, query: string, workflowId: string): Promise<void> {
  // Asked of the server, not by reloading the page: a loaded machine renders the page slowly.
  await waitFor(
    async () => {
      for await (const listed of stack.service.client.workflow.list({ query })) if (listed.workflowId === workflowId) return true;
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: `${workflowId} listed for ${query}` },
  );
  await page.goto(`${inject('temporalUiUrl')}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
  await page.getByRole('link', { name: workflowId }).waitFor();
}

describe('the Temporal Web UI', () => {
  it("lists a paused webhook's workflow when filtered by WebhookStatus and WebhookId, and shows why it was paused", async () => {
    const uiUrl = inject('temporalUiUrl');
    expect(uiUrl, 'the dev server runs with its UI').toMatch(/^http:/);
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/ui/failing'));
    receiver.respondWith({ status: 503 });
    for (let i = 1; i <= 20; i++) await stack.reportWrite(listId, `ui-write-${i}`);
    receiver.respondWith({});
    const webhook = await stack.waitForFailureCount(owner.token, webhookId, 20);
    expect(webhook).toMatchObject({ status: 'paused', pausedReason: 'auto_failures' });
    const lifecycle = stack.service.client.workflow.getHandle(lifecycleWorkflowId(webhookId));
    expect(await lifecycle.query(lifecycleStateQuery)).toMatchObject({ status: 'paused', consecutiveFailures: 20 });

    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    // Listed once the pause is indexed.
    await openListed(page, `WebhookStatus="paused" AND WebhookId="${webhookId}"`, lifecycleWorkflowId(webhookId));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'paused-webhook-list.png') });

    // The webhook's workflow answers the `state` query with its status and count.
    const { runId } = await lifecycle.describe();
    await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(lifecycleWorkflowId(webhookId))}/${runId}/query`);
    await page.getByRole('button', { name: 'Run Query' }).click();
    await page.getByText('"consecutiveFailures": 20').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByText('"pausedReason": "auto_failures"').count()).toBe(1);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'paused-webhook-query.png') });

    // Why: the writes' failed delivery (local) activities, with the receiver's classified failure.
    await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(listWriteWorkflowId(listId, 'ui-write-20'))}`);
    await page.getByText('deliverEvent').first().waitFor();
    // A local activity is a marker in the history: its failure shows once the event is opened.
    await page.getByText('deliverEvent').first().click();
    await expect.poll(() => page.getByText(/failed: non_2xx \(HTTP 503\)/).count(), { timeout: 15_000 }).toBeGreaterThan(0);
    await page
      .getByText(/failed: non_2xx \(HTTP 503\)/)
      .first()
      .scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'failed-delivery-activity.png'), fullPage: true });
    await page.close();
  });

  it('shows a redelivery as its own workflow, with the outcome as its result', async () => {
    const uiUrl = inject('temporalUiUrl');
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/ui/redelivered'));
    await stack.reportWrite(listId, 'ui-redelivered');
    const [logged] = (await stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token: owner.token })).body.data;
    receiver.respondWith({ status: 410 });
    const redelivery = await stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${logged.id}/redeliveries`, {
      token: owner.token,
    });
    receiver.respondWith({});
    expect(redelivery.body).toMatchObject({ delivered: false, statusCode: 410, error: 'non_2xx' });

    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await page.goto(
      `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(redeliveryWorkflowId(webhookId, redelivery.body.deliveryId))}`,
    );
    await page.getByText('redeliverEvent').first().waitFor({ timeout: 15_000 });
    // The workflow's result is what the receiver answered.
    await expect.poll(() => page.getByText('"statusCode": 410').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.getByText('"error": "non_2xx"').count()).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'redelivery-workflow.png'), fullPage: true });
    await page.close();
  });

  it('lists a recovery by its WebhookId and AccountId, and answers its progress query once it has ended', async () => {
    const uiUrl = inject('temporalUiUrl');
    const urlPath = '/ui/recovered';
    const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor(urlPath));
    const since = new Date().toISOString();
    receiver.respondWith({ status: 503 });
    for (let i = 1; i <= 3; i++) await stack.reportWrite(listId, `ui-missed-${i}`);
    receiver.respondWith({});
    const started = await stack.request('POST', `/v3/webhooks/${webhookId}/recoveries`, { token: owner.token, body: { since } });
    expect(started.body).toMatchObject({ status: 'running', total: 3 });
    const workflowId = recoveryWorkflowId(webhookId, started.body.id);
    const result = await stack.service.client.workflow.getHandle(workflowId).result();
    expect(result).toMatchObject({ status: 'completed', delivered: 3 });

    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await openListed(page, `WorkflowType="recoverDeliveries" AND WebhookId="${webhookId}" AND AccountId="${owner.id}"`, workflowId);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'recovery-workflow.png') });

    const { runId } = await stack.service.client.workflow.getHandle(workflowId).describe();
    await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/${runId}/query`);
    await page.getByRole('button', { name: 'Run Query' }).click();
    await page.getByText('"delivered": 3').waitFor({ timeout: 15_000 });
    await page.close();
  });

  it('shows the re-encryption under a new first key: its summary, each batch with what remained, and its current details', async () => {
    const uiUrl = inject('temporalUiUrl');
    // On a database of its own: it changes the key every secret there is sealed under.
    await withMigratedDatabase(async (sql, url) => {
      const account = await createAccount(sql, 'the re-encryption in the Web UI');
      await insertSealedWebhooks(sql, fixedSecretBox(), account.id, 1200, (i) => `https://receiver.test/ui/${i}`);
      const keyId = 'k2';
      const rotated = await startTestStack({ SECRET_KEYS: `${newSecretKeys(keyId)},${FIXED_SECRET_KEYS}` }, { databaseUrl: url });
      try {
        const workflowId = reencryptionWorkflowId(rotated.taskQueue, keyId);
        expect(await rotated.service.client.workflow.getHandle(workflowId).result()).toEqual({ keyId, resealed: 1200 });
        const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
        await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
        // Its history: three batches of resealBatch, and the result.
        await expect.poll(() => page.getByText('"resealed": 1200').count(), { timeout: 15_000 }).toBeGreaterThan(0);
        for (const batch of ['{"resealed":500,"remaining":700}', '{"resealed":500,"remaining":200}', '{"resealed":200,"remaining":0}']) {
          await expect.poll(() => page.getByText(batch).count(), { message: batch }).toBeGreaterThan(0);
        }
        await page.getByText('{"resealed":500,"remaining":200}').first().scrollIntoViewIfNeeded();
        await page.screenshot({ path: path.join(SCREENSHOTS, 'reencryption-workflow.png') });
        // Its summary and current details, which the UI renders (as Markdown) in frames of their own.
        await page.getByText('User Metadata').first().click();
        const shown = async () =>
          (
            await Promise.all(
              page.frames().map((frame) =>
                frame
                  .locator('body')
                  .innerText()
                  .catch(() => ''),
              ),
            )
          ).join('\n');
        await expect.poll(shown, { timeout: 15_000 }).toContain(`Re-encrypts every stored signing secret under key ${keyId}`);
        await expect.poll(shown).toContain(`1200 signing secrets re-sealed under key ${keyId}; 0 remain under other keys.`);
        await page.screenshot({ path: path.join(SCREENSHOTS, 'reencryption-details.png') });
        await page.close();
      } finally {
        await rotated.stop();
      }
    });
  });
});
