// The fair-use meter: per account and UTC day, its public API requests (added by each API
// process's coalesced flush) and the deliveries to its webhooks (added by the statement that
// logs them, recordDeliveries in deliveries.ts).
import type { UsageDay } from '../objects';
import type { Db } from './sql';

/** An account's requests counted by one API process since its last flush, on one UTC day. */
export interface RequestCount {
  accountId: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  requests: number;
}

/** Adds the counts, in one statement; rows are taken in account order, as recordDeliveries takes them. */
export async function addApiRequests(sql: Db, counts: readonly RequestCount[]): Promise<void> {
  if (counts.length === 0) return;
  const rows = counts.map((count) => ({ account_id: count.accountId, day: count.day, requests: count.requests }));
  await sql`
    INSERT INTO account_usage (account_id, day, api_requests)
    SELECT c.account_id, c.day, c.requests
    FROM jsonb_to_recordset(${sql.json(rows)}) AS c(account_id text, day date, requests bigint)
    JOIN accounts a ON a.id = c.account_id
    ORDER BY c.account_id, c.day
    ON CONFLICT (account_id, day) DO UPDATE SET api_requests = account_usage.api_requests + EXCLUDED.api_requests`;
}

/** The account's last `days` UTC days, today last; a day with nothing counted is zeros. */
export async function findUsage(sql: Db, accountId: string, days: number): Promise<UsageDay[]> {
  return sql<UsageDay[]>`
    SELECT to_char(d.day, 'YYYY-MM-DD') AS date,
           coalesce(u.api_requests, 0)::int AS "apiRequests",
           coalesce(u.deliveries, 0)::int AS deliveries
    FROM generate_series((now() AT TIME ZONE 'UTC')::date - ${days - 1}::int, (now() AT TIME ZONE 'UTC')::date, interval '1 day') AS d(day)
    LEFT JOIN account_usage u ON u.account_id = ${accountId} AND u.day = d.day
    ORDER BY d.day`;
}
