import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import {
  claimDeliveries,
  DELIVERY_LOG_KEPT,
  DELIVERY_LOG_PRUNE_EVERY,
  recordDeliveries,
  type DeliveryRecord,
} from '../../src/db/deliveries';
import { mirrorWebhookState } from '../../src/db/webhooks';
import { newId } from '../../src/ids';
import type { DeliveryError } from '../../src/objects';
import { useMigratedDatabase } from '../support/database';
import { attemptRecord, insertWebhook } from '../../scripts/lib/webhook-rows';
import { storeRules } from '../support/lifecycle-state';

const database = useMigratedDatabase();

async function newWebhook() {
  const account = await createAccount(database.sql, 'deliveries test');
  return { webhookId: await insertWebhook(database.sql, account.id), accountId: account.id };
}

async function attempt(
  webhookId: string,
  kind: DeliveryRecord['kind'],
  error: DeliveryError | null,
): Promise<{ failuresToReset: boolean }> {
  const [{ failuresToReset }] = await recordDeliveries(database.sql, [attemptRecord(webhookId, { kind, error })]);
  return { failuresToReset };
}

/** The webhook's counters and last times, as recordDeliveries keeps them. */
async function countersOf(webhookId: string) {
  const [row] = await database.sql<{ logged: number; reported: number; lastDeliveredAt: Date | null; lastFailedAt: Date | null }[]>`
    SELECT deliveries_logged::int AS logged, failures_reported::int AS reported, last_delivered_at AS "lastDeliveredAt",
           last_failed_at AS "lastFailedAt"
    FROM webhooks WHERE id = ${webhookId}`;
  return row;
}

async function claimDelivery(webhookId: string, deliveryId: string) {
  const [claimed] = await claimDeliveries(database.sql, [{ webhookId, deliveryId }]);
  return claimed;
}

describe('recordDeliveries', () => {
  it('tells a success it has failures to reset while the count is above 0 or a reported failure is not yet counted', async () => {
    const { webhookId, accountId } = await newWebhook();
    const state = { webhookId, accountId, status: 'active', pausedReason: null } as const;
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: false });

    await attempt(webhookId, 'event', 'non_2xx');
    // Reported, but the webhook's workflow has not counted it yet.
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: true });

    await mirrorWebhookState(database.sql, { ...state, consecutiveFailures: 1, failuresCounted: 1 }, storeRules());
    expect(await attempt(webhookId, 'event', null)).toEqual({ failuresToReset: true });

    await mirrorWebhookState(database.sql, { ...state, consecutiveFailures: 0, failuresCounted: 1 }, storeRules());
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

  it("deletes a webhook's log with the webhook, and with its account", async () => {
    const deleted = await newWebhook();
    const ofDeletedAccount = await newWebhook();
    const kept = await newWebhook();
    const webhookIds = [deleted.webhookId, ofDeletedAccount.webhookId, kept.webhookId];
    await recordDeliveries(
      database.sql,
      webhookIds.map((webhookId) => attemptRecord(webhookId)),
    );
    await database.sql`DELETE FROM webhooks WHERE id = ${deleted.webhookId}`;
    await database.sql`DELETE FROM accounts WHERE id = ${ofDeletedAccount.accountId}`;
    const logged = await database.sql<{ webhookId: string }[]>`
      SELECT webhook_id AS "webhookId" FROM deliveries WHERE webhook_id IN ${database.sql(webhookIds)}`;
    expect(logged).toEqual([{ webhookId: kept.webhookId }]);
  });

  it('logs the attempts of several webhooks in one call, each answered for its own webhook', async () => {
    const failing = await newWebhook();
    const succeeding = await newWebhook();
    const gone = await newWebhook();
    await database.sql`DELETE FROM webhooks WHERE id = ${gone.webhookId}`;
    const records = [
      attemptRecord(failing.webhookId),
      attemptRecord(succeeding.webhookId),
      attemptRecord(failing.webhookId, { error: 'non_2xx' }),
      attemptRecord(gone.webhookId),
      attemptRecord(succeeding.webhookId, { kind: 'ping', error: 'timeout' }),
    ];
    // A success beside a failure of its webhook counts as after it: it has a failure to reset.
    const recorded = await recordDeliveries(database.sql, records);
    expect(recorded.map(({ logged, failuresToReset }) => ({ logged, failuresToReset }))).toEqual([
      { logged: true, failuresToReset: true },
      { logged: true, failuresToReset: false },
      { logged: true, failuresToReset: true },
      { logged: false, failuresToReset: false },
      { logged: true, failuresToReset: false },
    ]);
    const logged = await database.sql<
      { id: string }[]
    >`SELECT id FROM deliveries WHERE webhook_id IN ${database.sql([failing.webhookId, succeeding.webhookId, gone.webhookId])}`;
    expect(logged.map((row) => row.id).sort()).toEqual([records[0].id, records[1].id, records[2].id, records[4].id].sort());
    const counters = await database.sql<{ id: string; logged: number; reported: number }[]>`
      SELECT id, deliveries_logged::int AS logged, failures_reported::int AS reported FROM webhooks WHERE id IN ${database.sql([failing.webhookId, succeeding.webhookId])}`;
    expect(Object.fromEntries(counters.map((row) => [row.id, [row.logged, row.reported]]))).toEqual({
      [failing.webhookId]: [2, 1],
      [succeeding.webhookId]: [2, 0],
    });
  });

  it("logs each attempt at the time it ended, and the webhook's last times and latest success follow those times", async () => {
    const { webhookId } = await newWebhook();
    const endedAt = Date.parse('2026-11-29T10:00:00.250Z');
    const failure = { ...attemptRecord(webhookId, { error: 'non_2xx' }), attemptedAt: endedAt + 100 };
    const success = { ...attemptRecord(webhookId), attemptedAt: endedAt };
    const [told] = await recordDeliveries(database.sql, [success]);
    expect(told).toEqual({ logged: true, failuresToReset: false, lastDeliveredAt: endedAt });
    // A failure that ended after the success but is logged later: the success stays the latest.
    const [failed] = await recordDeliveries(database.sql, [failure, { ...attemptRecord(webhookId), attemptedAt: endedAt - 5000 }]);
    expect(failed).toMatchObject({ logged: true, lastDeliveredAt: endedAt });
    const rows = await database.sql<{ id: string; attemptedAt: Date }[]>`
      SELECT id, attempted_at AS "attemptedAt" FROM deliveries WHERE id IN ${database.sql([failure.id, success.id])}`;
    expect(Object.fromEntries(rows.map((row) => [row.id, row.attemptedAt.getTime()]))).toEqual({
      [success.id]: endedAt,
      [failure.id]: endedAt + 100,
    });
    expect(await countersOf(webhookId)).toMatchObject({ lastDeliveredAt: new Date(endedAt), lastFailedAt: new Date(endedAt + 100) });
  });

  it('logs an id once: a row of another outcome already there is not its own, and reports nothing; the same outcome again is', async () => {
    const { webhookId, accountId } = await newWebhook();
    // The workflow logged a delivery whose local activity timed out as our own failure first.
    const lateRun = attemptRecord(webhookId, { error: 'non_2xx' });
    await recordDeliveries(database.sql, [{ ...lateRun, ...attemptRecord(webhookId, { error: 'internal', id: lateRun.id }) }]);
    expect(await recordDeliveries(database.sql, [lateRun])).toMatchObject([{ logged: false }]);
    // A statement tried again after its answer was lost finds its own row.
    const retried = attemptRecord(webhookId, { error: 'non_2xx' });
    await recordDeliveries(database.sql, [retried]);
    expect(await recordDeliveries(database.sql, [retried])).toMatchObject([{ logged: true }]);
    // One failure reported, two rows logged; neither our own failure nor the repeats metered twice.
    expect(await countersOf(webhookId)).toMatchObject({ logged: 2, reported: 1 });
    const [usage] = await database.sql<
      { deliveries: number }[]
    >`SELECT deliveries::int AS deliveries FROM account_usage WHERE account_id = ${accountId}`;
    expect(usage.deliveries).toBe(1);
  });

  it('logs a skipped delivery as skipped, error paused, never counted: it neither reports a failure nor resets one', async () => {
    const { webhookId, accountId } = await newWebhook();
    await attempt(webhookId, 'event', 'non_2xx');
    await mirrorWebhookState(
      database.sql,
      {
        webhookId,
        accountId,
        status: 'paused',
        pausedReason: 'manual',
        consecutiveFailures: 1,
        failuresCounted: 1,
      },
      storeRules(),
    );
    const skipped: DeliveryRecord = { ...attemptRecord(webhookId), result: 'skipped', request: null, response: null };
    await recordDeliveries(database.sql, [skipped]);
    const [row] = await database.sql`
      SELECT outcome, status_code, error, duration_ms, request, response FROM deliveries WHERE id = ${skipped.id}`;
    expect(row).toEqual({ outcome: 'skipped', status_code: null, error: 'paused', duration_ms: 0, request: null, response: null });
    const [counters] = await database.sql<{ reported: number; count: number }[]>`
      SELECT failures_reported::int AS reported, consecutive_failures AS count FROM webhooks WHERE id = ${webhookId}`;
    expect(counters).toEqual({ reported: 1, count: 1 });
  });

  it('keeps what was sent and what came back with the row, its headers in their order and its text as it was', async () => {
    const { webhookId } = await newWebhook();
    const record = attemptRecord(webhookId, { error: 'non_2xx' });
    // Names in an order no sort gives, a value with quotes and markup, text beyond ASCII.
    const headers = { 'x-zeta': '1', 'content-type': 'text/html', 'x-alpha': '"quoted" <b>', etag: 'W/"ü"' };
    const response = { statusCode: 503, headers, body: '<script>alert(1)</script> ünïcödé \uFFFD', bodyTruncated: true };
    await recordDeliveries(database.sql, [
      { ...record, result: { delivered: false, statusCode: 503, durationMs: 5, error: 'non_2xx' }, response },
    ]);
    const [row] = await database.sql`SELECT request, response FROM deliveries WHERE id = ${record.id}`;
    expect(row.request).toEqual(record.request);
    expect(Object.keys(row.request.headers)).toEqual(Object.keys(record.request!.headers));
    expect(row.response).toEqual(response);
    expect(Object.keys(row.response.headers)).toEqual(['x-zeta', 'content-type', 'x-alpha', 'etag']);
  });

  it("prunes a webhook's log when a call crosses a multiple of the pruning interval", async () => {
    const { webhookId } = await newWebhook();
    const batch = () => Array.from({ length: DELIVERY_LOG_PRUNE_EVERY - 1 }, () => attemptRecord(webhookId));
    const calls = 13;
    for (let call = 0; call < calls; call++) await recordDeliveries(database.sql, batch());
    const [{ count }] = await database.sql<
      { count: number }[]
    >`SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = ${webhookId}`;
    // The last call took the log from 1188 to 1287 attempts, across 1200: pruned to what is kept.
    expect(count).toBe(DELIVERY_LOG_KEPT);
  });
});

describe('claimDeliveries', () => {
  it("claims an active webhook's attempt once: a second run of the same delivery finds it taken", async () => {
    const { webhookId } = await newWebhook();
    const deliveryId = newId('dlv');
    expect(await claimDelivery(webhookId, deliveryId)).toMatchObject({
      status: 'active',
      claimed: true,
      url: `https://receiver.test/${webhookId}`,
    });
    expect(await claimDelivery(webhookId, deliveryId)).toMatchObject({ status: 'active', claimed: false });
    expect(await claimDelivery(webhookId, newId('dlv'))).toMatchObject({ claimed: true });
  });

  it("claims a paused webhook's attempt too (as skipped: a run after a reactivation sends nothing), and answers null for a deleted one", async () => {
    const { webhookId, accountId } = await newWebhook();
    const state = { webhookId, accountId, pausedReason: null, consecutiveFailures: 0, failuresCounted: 0 };
    await mirrorWebhookState(database.sql, { ...state, status: 'paused', pausedReason: 'manual' }, storeRules());
    const deliveryId = newId('dlv');
    expect(await claimDelivery(webhookId, deliveryId)).toMatchObject({ status: 'paused', claimed: true, skipped: true });
    await mirrorWebhookState(database.sql, { ...state, status: 'active' }, storeRules());
    // The run after a crash is told the first one skipped it, and logs it skipped again.
    expect(await claimDelivery(webhookId, deliveryId)).toMatchObject({ status: 'active', claimed: false, skipped: true });
    const sent = newId('dlv');
    expect(await claimDelivery(webhookId, sent)).toMatchObject({ claimed: true, skipped: false });
    expect(await claimDelivery(webhookId, sent)).toMatchObject({ claimed: false, skipped: false });
    await database.sql`DELETE FROM webhooks WHERE id = ${webhookId}`;
    expect(await claimDelivery(webhookId, newId('dlv'))).toBeNull();
  });

  it('claims many deliveries in one call, the same delivery only once however often it is asked', async () => {
    const active = await newWebhook();
    const paused = await newWebhook();
    await mirrorWebhookState(
      database.sql,
      {
        ...paused,
        status: 'paused',
        pausedReason: 'manual',
        consecutiveFailures: 0,
        failuresCounted: 0,
      },
      storeRules(),
    );
    const taken = newId('dlv');
    expect(await claimDelivery(active.webhookId, taken)).toMatchObject({ claimed: true });
    const twice = newId('dlv');
    const claims = [
      { webhookId: active.webhookId, deliveryId: twice },
      { webhookId: paused.webhookId, deliveryId: newId('dlv') },
      { webhookId: active.webhookId, deliveryId: taken },
      { webhookId: newId('wh'), deliveryId: newId('dlv') },
      { webhookId: active.webhookId, deliveryId: twice },
      { webhookId: active.webhookId, deliveryId: newId('dlv') },
    ];
    const answers = await claimDeliveries(database.sql, claims);
    expect(answers.map((answer) => answer && { status: answer.status, claimed: answer.claimed })).toEqual([
      { status: 'active', claimed: true },
      { status: 'paused', claimed: true },
      { status: 'active', claimed: false },
      null,
      { status: 'active', claimed: false },
      { status: 'active', claimed: true },
    ]);
    expect(answers[0]).toMatchObject({ url: `https://receiver.test/${active.webhookId}` });
  });
});
