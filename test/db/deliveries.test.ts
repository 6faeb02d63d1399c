import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import { recordDelivery, type DeliveryRecord } from '../../src/db/deliveries';
import { claimDelivery, mirrorWebhookState } from '../../src/db/webhooks';
import { newId, newSigningSecret } from '../../src/ids';
import type { DeliveryError } from '../../src/types';
import { useMigratedDatabase } from '../support/database';

const database = useMigratedDatabase();

async function newWebhook() {
  const account = await createAccount(database.sql, 'deliveries test');
  const id = newId('wh');
  await database.sql`
    INSERT INTO webhooks (id, account_id, url, secret, events, list_ids)
    VALUES (${id}, ${account.id}, ${`https://receiver.test/${id}`}, ${newSigningSecret()}, ${['list.changed']}, ${[]})`;
  return { webhookId: id, accountId: account.id };
}

function attempt(webhookId: string, kind: DeliveryRecord['kind'], error: DeliveryError | null): Promise<{ failuresToReset: boolean }> {
  return recordDelivery(database.sql, {
    id: newId('dlv'),
    webhookId,
    kind,
    event: kind === 'ping' ? 'ping' : 'list.changed',
    listId: kind === 'ping' ? null : 'list-1',
    cursor: kind === 'ping' ? null : 1,
    at: kind === 'ping' ? null : new Date().toISOString(),
    result: { delivered: error === null, statusCode: error === null ? 200 : null, durationMs: 3, error },
  });
}

describe('recordDelivery', () => {
  it('tells a success it has failures to reset while the count is above 0 or a reported failure is not yet counted', async () => {
    const { webhookId, accountId } = await newWebhook();
    const state = { webhookId, accountId, status: 'active', pausedReason: null } as const;
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: false });

    await attempt(webhookId, 'event', 'non_2xx');
    // Reported, but the webhook's workflow has not counted it yet.
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: true });

    await mirrorWebhookState(database.sql, { ...state, consecutiveFailures: 1, failuresCounted: 1 });
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: true });

    await mirrorWebhookState(database.sql, { ...state, consecutiveFailures: 0, failuresCounted: 1 });
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: false });
  });

  it('reports no failure for a failed ping or an internal failure: neither is counted', async () => {
    const { webhookId } = await newWebhook();
    await attempt(webhookId, 'ping', 'timeout');
    await attempt(webhookId, 'event', 'internal');
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: false });
  });

  it('logs nothing for a webhook that is gone', async () => {
    const { webhookId } = await newWebhook();
    await database.sql`DELETE FROM webhooks WHERE id = ${webhookId}`;
    expect(await attempt(webhookId, 'event', 'timeout')).toEqual({ failuresToReset: false });
    expect(await database.sql`SELECT 1 FROM deliveries WHERE webhook_id = ${webhookId}`).toHaveLength(0);
  });
});

describe('claimDelivery', () => {
  it('claims an active webhook\'s attempt once: a second run of the same delivery finds it taken', async () => {
    const { webhookId } = await newWebhook();
    const deliveryId = newId('dlv');
    expect(await claimDelivery(database.sql, webhookId, deliveryId)).toMatchObject({ status: 'active', claimed: true, url: `https://receiver.test/${webhookId}` });
    expect(await claimDelivery(database.sql, webhookId, deliveryId)).toMatchObject({ status: 'active', claimed: false });
    expect(await claimDelivery(database.sql, webhookId, newId('dlv'))).toMatchObject({ claimed: true });
  });

  it('claims nothing for a paused webhook, and answers null for a deleted one', async () => {
    const { webhookId, accountId } = await newWebhook();
    await mirrorWebhookState(database.sql, { webhookId, accountId, status: 'paused', pausedReason: 'manual', consecutiveFailures: 0, failuresCounted: 0 });
    const deliveryId = newId('dlv');
    expect(await claimDelivery(database.sql, webhookId, deliveryId)).toMatchObject({ status: 'paused', claimed: false });
    expect(await database.sql`SELECT 1 FROM delivery_claims WHERE delivery_id = ${deliveryId}`).toHaveLength(0);
    await database.sql`DELETE FROM webhooks WHERE id = ${webhookId}`;
    expect(await claimDelivery(database.sql, webhookId, deliveryId)).toBeNull();
  });
});
