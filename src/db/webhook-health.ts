// A webhook's health: its event deliveries per UTC hour by outcome (webhook_health_hours,
// migration 020), counted by the statement that logs them (recordDeliveries, deliveries.ts),
// and when one was last delivered and last failed (columns of `webhooks`, set by the same
// statement). The window the API answers with is the current UTC hour and the HEALTH_HOURS - 1
// before it, by PostgreSQL's clock: an hour is in it from its first moment, so it holds between
// 23 and 24 hours of deliveries. The pruning deletes the hours before it (retention.ts).
import type { PendingQuery, Row } from 'postgres';
import { HEALTH_HOURS } from '../limits';
import type { HealthHour, WebhookHealth, WebhookHealthHours } from '../objects';
import type { Db } from './sql';

type Fragment = PendingQuery<Row[]>;

/** The start of the UTC hour the time `at` (an SQL expression) falls in: the hour it is counted in. */
export function hourOf(sql: Db, at: Fragment): Fragment {
  return sql`date_trunc('hour', ${at}, 'UTC')`;
}

/** The first hour of the window: HEALTH_HOURS - 1 before the current one. */
export function healthWindowStart(sql: Db): Fragment {
  return sql`(${hourOf(sql, sql`now()`)} - make_interval(hours => ${HEALTH_HOURS - 1}))`;
}

/** What `healthColumns` reads. */
export interface HealthRow {
  last_delivered_at: Date | null;
  last_failed_at: Date | null;
  health_sums: { delivered: number; failed: number; skipped: number };
}

/**
 * The webhook's health as columns of a statement over `webhooks` (not aliased: a SELECT, or
 * the RETURNING of an INSERT or UPDATE): its last times, and the sums of the window's hours in
 * one subquery, a range of the hour table's primary key.
 */
export function healthColumns(sql: Db): Fragment {
  return sql`last_delivered_at, last_failed_at, (
    SELECT json_build_object('delivered', coalesce(sum(h.delivered), 0), 'failed', coalesce(sum(h.failed), 0),
                             'skipped', coalesce(sum(h.skipped), 0))
    FROM webhook_health_hours h WHERE h.webhook_id = webhooks.id AND h.hour >= ${healthWindowStart(sql)}) AS health_sums`;
}

/** The health of a webhook that nothing was logged for. */
export const NO_HEALTH: WebhookHealth = { delivered24h: 0, failed24h: 0, skipped24h: 0, lastDeliveredAt: null, lastFailedAt: null };

export function toHealth(row: HealthRow): WebhookHealth {
  return {
    delivered24h: row.health_sums.delivered,
    failed24h: row.health_sums.failed,
    skipped24h: row.health_sums.skipped,
    lastDeliveredAt: row.last_delivered_at?.toISOString() ?? null,
    lastFailedAt: row.last_failed_at?.toISOString() ?? null,
  };
}

/**
 * The webhook's health and the window hour by hour, oldest first, each hour there (zeros when
 * nothing was logged in it); null once the webhook is gone. One statement reads the hours and
 * the last times, and the sums are the hours' own: they always agree.
 */
export async function findWebhookHealthHours(sql: Db, webhookId: string): Promise<WebhookHealthHours | null> {
  const rows = await sql<(Omit<HealthHour, 'hour'> & Pick<HealthRow, 'last_delivered_at' | 'last_failed_at'> & { hour: Date })[]>`
    SELECT d.hour, coalesce(h.delivered, 0) AS delivered, coalesce(h.failed, 0) AS failed, coalesce(h.skipped, 0) AS skipped,
           w.last_delivered_at, w.last_failed_at
    FROM webhooks w
    CROSS JOIN generate_series(${healthWindowStart(sql)}, ${hourOf(sql, sql`now()`)}, interval '1 hour') AS d(hour)
    LEFT JOIN webhook_health_hours h ON h.webhook_id = w.id AND h.hour = d.hour
    WHERE w.id = ${webhookId}
    ORDER BY d.hour`;
  const [first] = rows;
  if (!first) return null;
  const hours = rows.map(({ hour, delivered, failed, skipped }) => ({ hour: hour.toISOString(), delivered, failed, skipped }));
  const sum = (key: 'delivered' | 'failed' | 'skipped') => hours.reduce((total, hour) => total + hour[key], 0);
  return {
    ...toHealth({ ...first, health_sums: { delivered: sum('delivered'), failed: sum('failed'), skipped: sum('skipped') } }),
    hours,
  };
}
