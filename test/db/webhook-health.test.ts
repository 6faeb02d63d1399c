// A webhook's health in PostgreSQL: its event deliveries counted per UTC hour by the statement
// that logs them, its last delivered and failed times, the window the API sums and the pruning
// of the hours before it. Tests about hours run in a transaction, whose now() stands still: an
// hour that turns during the test changes nothing.
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import { recordDeliveries, type DeliveryRecord } from '../../src/db/deliveries';
import { deleteRecordsOlderThan } from '../../src/db/retention';
import type { Db } from '../../src/db/sql';
import { findWebhookHealthHours } from '../../src/db/webhook-health';
import { findWebhook } from '../../src/db/webhooks';
import { HEALTH_HOURS } from '../../src/limits';
import { useMigratedDatabase } from '../support/database';
import { attemptRecord, insertWebhook } from '../../scripts/lib/webhook-rows';

const database = useMigratedDatabase({ connections: 4 });

async function newWebhook() {
  const account = await createAccount(database.sql, 'health test');
  return { webhookId: await insertWebhook(database.sql, account.id), accountId: account.id };
}

const skipped = (webhookId: string): DeliveryRecord => ({ ...attemptRecord(webhookId), result: 'skipped', request: null, response: null });

/** The webhook's hour rows, as hours before the current UTC hour (by the caller's now()), newest first. */
async function hoursKept(sql: Db, webhookId: string) {
  return sql<{ ago: number; delivered: number; failed: number; skipped: number }[]>`
    SELECT (extract(epoch FROM date_trunc('hour', now(), 'UTC') - hour) / 3600)::int AS ago, delivered, failed, skipped
    FROM webhook_health_hours WHERE webhook_id = ${webhookId} ORDER BY hour DESC`;
}

/** Gives the webhook an hour row `ago` hours before the current UTC hour (by the caller's now()). */
const insertHour = (sql: Db, webhookId: string, ago: number, delivered: number, failed = 0) => sql`
  INSERT INTO webhook_health_hours (webhook_id, hour, delivered, failed)
  VALUES (${webhookId}, date_trunc('hour', now(), 'UTC') - make_interval(hours => ${ago}), ${delivered}, ${failed})`;

/** When the log row of `deliveryId` was logged. */
async function attemptedAt(deliveryId: string): Promise<string> {
  const [row] = await database.sql<{ attemptedAt: Date }[]>`SELECT attempted_at AS "attemptedAt" FROM deliveries WHERE id = ${deliveryId}`;
  return row.attemptedAt.toISOString();
}

describe('counting in recordDeliveries', () => {
  it('counts the event deliveries a call logs in the UTC hour they are logged, by outcome, our own failures in none; a log row written again counts once', async () => {
    const { webhookId } = await newWebhook();
    await database.sql.begin(async (tx) => {
      const delivered = attemptRecord(webhookId);
      await recordDeliveries(tx, [
        delivered,
        attemptRecord(webhookId, { error: 'non_2xx' }),
        attemptRecord(webhookId, { error: 'internal' }),
        skipped(webhookId),
        // The same delivery twice in one call: one row.
        delivered,
      ]);
      // And again in a later call, as a retried activity logs it.
      await recordDeliveries(tx, [delivered, attemptRecord(webhookId)]);
      expect(await hoursKept(tx, webhookId)).toEqual([{ ago: 0, delivered: 2, failed: 1, skipped: 1 }]);
    });
  });

  it('counts only event deliveries: no ping, redelivery or test event', async () => {
    const { webhookId, accountId } = await newWebhook();
    await recordDeliveries(database.sql, [
      attemptRecord(webhookId, { kind: 'ping' }),
      attemptRecord(webhookId, { kind: 'redelivery', error: 'timeout' }),
      attemptRecord(webhookId, { kind: 'test' }),
      attemptRecord(webhookId, { kind: 'ping', error: 'non_2xx' }),
    ]);
    expect(await hoursKept(database.sql, webhookId)).toEqual([]);
    expect((await findWebhook(database.sql, accountId, webhookId))?.health).toEqual({
      delivered24h: 0,
      failed24h: 0,
      skipped24h: 0,
      lastDeliveredAt: null,
      lastFailedAt: null,
    });
  });

  it('keeps when an event delivery was last delivered and last failed, from the rows it logs, past the window', async () => {
    const { webhookId, accountId } = await newWebhook();
    const health = async () => (await findWebhook(database.sql, accountId, webhookId))!.health;
    const first = attemptRecord(webhookId);
    await recordDeliveries(database.sql, [first]);
    expect(await health()).toMatchObject({ delivered24h: 1, lastDeliveredAt: await attemptedAt(first.id), lastFailedAt: null });

    const failed = attemptRecord(webhookId, { error: 'timeout' });
    await recordDeliveries(database.sql, [failed]);
    expect(await health()).toMatchObject({ lastDeliveredAt: await attemptedAt(first.id), lastFailedAt: await attemptedAt(failed.id) });

    // Logged later, none of these is a newly logged event delivery delivered or failed: the times stay.
    await recordDeliveries(database.sql, [first, skipped(webhookId), attemptRecord(webhookId, { kind: 'ping' })]);
    await recordDeliveries(database.sql, [attemptRecord(webhookId, { kind: 'redelivery', error: 'non_2xx' })]);
    expect(await health()).toEqual({
      delivered24h: 1,
      failed24h: 1,
      skipped24h: 1,
      lastDeliveredAt: await attemptedAt(first.id),
      lastFailedAt: await attemptedAt(failed.id),
    });

    // Two days on, the hours are out of the window; the times are kept.
    await database.sql`UPDATE webhook_health_hours SET hour = hour - interval '2 days' WHERE webhook_id = ${webhookId}`;
    expect(await health()).toEqual({
      delivered24h: 0,
      failed24h: 0,
      skipped24h: 0,
      lastDeliveredAt: await attemptedAt(first.id),
      lastFailedAt: await attemptedAt(failed.id),
    });
  });

  it('counts each delivery once when two calls log the same ones at once, for webhooks named in different orders', async () => {
    const webhooks = [(await newWebhook()).webhookId, (await newWebhook()).webhookId, (await newWebhook()).webhookId];
    const records = webhooks.flatMap((webhookId) => [
      attemptRecord(webhookId),
      attemptRecord(webhookId),
      attemptRecord(webhookId, { error: 'non_2xx' }),
    ]);
    await Promise.all([recordDeliveries(database.sql, records), recordDeliveries(database.sql, [...records].reverse())]);
    for (const webhookId of webhooks) {
      const hours = await hoursKept(database.sql, webhookId);
      expect(hours.reduce((sum, hour) => sum + hour.delivered, 0)).toBe(2);
      expect(hours.reduce((sum, hour) => sum + hour.failed, 0)).toBe(1);
    }
  });

  it('goes with its webhook', async () => {
    const { webhookId } = await newWebhook();
    await recordDeliveries(database.sql, [attemptRecord(webhookId)]);
    expect(await hoursKept(database.sql, webhookId)).toHaveLength(1);
    await database.sql`DELETE FROM webhooks WHERE id = ${webhookId}`;
    expect(await hoursKept(database.sql, webhookId)).toEqual([]);
    expect(await findWebhookHealthHours(database.sql, webhookId)).toBeNull();
  });
});

describe('the window', () => {
  it('is the current UTC hour and the 23 before it, oldest first, every hour there; the totals sum them', async () => {
    const { webhookId, accountId } = await newWebhook();
    await database.sql.begin(async (tx) => {
      await insertHour(tx, webhookId, 0, 3, 1);
      await insertHour(tx, webhookId, 5, 7);
      await insertHour(tx, webhookId, 23, 11, 2);
      // An hour earlier: out of the window.
      await insertHour(tx, webhookId, 24, 100, 100);
      const [{ now }] = await tx<{ now: Date }[]>`SELECT date_trunc('hour', now(), 'UTC') AS now`;
      const hourAgo = (ago: number) => new Date(now.getTime() - ago * 3_600_000).toISOString();

      const health = (await findWebhookHealthHours(tx, webhookId))!;
      expect(health.hours).toHaveLength(HEALTH_HOURS);
      expect(health.hours.map((hour) => hour.hour)).toEqual(Array.from({ length: HEALTH_HOURS }, (_, i) => hourAgo(HEALTH_HOURS - 1 - i)));
      expect(health.hours[0]).toEqual({ hour: hourAgo(23), delivered: 11, failed: 2, skipped: 0 });
      expect(health.hours[18]).toEqual({ hour: hourAgo(5), delivered: 7, failed: 0, skipped: 0 });
      expect(health.hours[23]).toEqual({ hour: hourAgo(0), delivered: 3, failed: 1, skipped: 0 });
      expect(health.hours.filter((hour) => hour.delivered + hour.failed + hour.skipped > 0)).toHaveLength(3);
      const totals = { delivered24h: 21, failed24h: 3, skipped24h: 0, lastDeliveredAt: null, lastFailedAt: null };
      expect(health).toEqual({ ...totals, hours: health.hours });
      // The webhook's own `health` sums the same hours.
      expect((await findWebhook(tx, accountId, webhookId))?.health).toEqual(totals);
    });
  });

  it('is pruned of the hours before it, and only those, whatever the retention', async () => {
    const { webhookId } = await newWebhook();
    await database.sql.begin(async (tx) => {
      for (const ago of [0, 22, 23, 24, 25, 48]) await insertHour(tx, webhookId, ago, 1);
      const pruned = await deleteRecordsOlderThan(tx, 30);
      expect(pruned.webhookHealthHours).toBeGreaterThanOrEqual(3);
      expect((await hoursKept(tx, webhookId)).map((hour) => hour.ago)).toEqual([0, 22, 23]);
      expect((await findWebhookHealthHours(tx, webhookId))?.delivered24h).toBe(3);
    });
  });
});
