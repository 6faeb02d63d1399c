// A webhook's log holding more failed deliveries than the service ever keeps (it prunes each
// webhook's log to its newest 1,000), for what measures or tests a recovery bigger than that:
// the bench's `split-recovery`, the recovery fault test and the bulk task queue's test. No API
// can leave such a log behind, so it is written straight into the table; shared here rather
// than in test/support so that the bench imports no test helper.
import { randomBytes } from 'node:crypto';
import type { Sql } from 'postgres';

/**
 * `count` failed `list.changed` deliveries to `webhookId` of the writes 1..count of `listId`,
 * logged a millisecond apart up to now, written straight into the log: the window a recovery
 * sends again. (recordDeliveries would prune the log to its newest 1,000 rows as it went.)
 */
export async function insertFailedEvents(sql: Sql, webhookId: string, listId: string, count: number): Promise<void> {
  // Ids of the usual form: 16 random hex digits, then the cursor in 8.
  const prefix = `dlv_${randomBytes(8).toString('hex')}`;
  await sql`
    INSERT INTO deliveries (id, webhook_id, kind, event, list_id, cursor, at, outcome, status_code, error, duration_ms, attempted_at)
    SELECT ${prefix} || lpad(to_hex(n), 8, '0'), ${webhookId}, 'event', 'list.changed', ${listId}, n, t, 'failed', 503, 'non_2xx', 1, t
    FROM generate_series(1, ${count}::int) AS n, LATERAL (SELECT now() - make_interval(secs => (${count} - n) / 1000.0) AS t) AS at_n`;
}
