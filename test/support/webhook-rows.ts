import type { Db } from '../../src/db/sql';
import { newId, newSigningSecret } from '../../src/ids';

/**
 * A webhook row written straight into the table, for what needs one without a registration
 * (tests of `src/db`, the bookkeeping bench): active, subscribed to `list.changed`, at
 * `https://receiver.test/{id}`. No vitest here, so that the bench can import it.
 */
export async function insertWebhook(sql: Db, accountId: string): Promise<string> {
  const id = newId('wh');
  await sql`
    INSERT INTO webhooks (id, account_id, url, secret, events, list_ids)
    VALUES (${id}, ${accountId}, ${`https://receiver.test/${id}`}, ${newSigningSecret()}, ${['list.changed']}, ${[]})`;
  return id;
}
