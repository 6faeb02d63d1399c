import type { DeliveryRecord } from '../../src/db/deliveries';
import type { Db } from '../../src/db/sql';
import { newId } from '../../src/ids';
import { newSigningSecret } from '../../src/secrets';
import type { DeliveryError } from '../../src/objects';

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

/** The log row of one attempt to `webhookId`: an event of `list-1` delivered with 200, unless `error` names how it failed. */
export function attemptRecord(
  webhookId: string,
  { kind = 'event', error = null, id = newId('dlv') }: { kind?: DeliveryRecord['kind']; error?: DeliveryError | null; id?: string } = {},
): DeliveryRecord {
  return {
    id,
    webhookId,
    kind,
    event: kind === 'ping' ? 'ping' : 'list.changed',
    listId: kind === 'ping' ? null : 'list-1',
    cursor: kind === 'ping' ? null : 1,
    at: kind === 'ping' ? null : new Date().toISOString(),
    result: { delivered: error === null, statusCode: error === null ? 200 : null, durationMs: 3, error },
  };
}
