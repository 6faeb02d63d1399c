// Rows for what works on the database below the API (the tests of `src/db` and of the delivery
// batcher, the bookkeeping bench): a webhook without a registration, an attempt's log row.
// Shared here rather than in test/support so that the bench imports no test helper.
import type { DeliveryRecord } from '../../src/db/deliveries';
import type { Db } from '../../src/db/sql';
import { eventPayload, pingPayload } from '../../src/delivery/message';
import { signPayload } from '../../src/delivery/signing';
import { newId } from '../../src/ids';
import { newSigningSecret } from '../../src/secrets';
import type { DeliveryError } from '../../src/objects';
import { fixedSecretBox } from './fixed-secret-keys';

/**
 * A webhook row written straight into the table, for what needs one without a registration
 * (tests of `src/db`, the bookkeeping bench): active, subscribed to `list.changed`, at
 * `https://receiver.test/{id}`, its secret sealed under the fixed test key.
 */
export async function insertWebhook(sql: Db, accountId: string): Promise<string> {
  const id = newId('wh');
  const secret = fixedSecretBox().seal(newSigningSecret(), id);
  await sql`
    INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events, list_ids)
    VALUES (${id}, ${accountId}, ${`https://receiver.test/${id}`}, ${secret.keyId}, ${secret.sealed}, ${['list.changed']}, ${[]})`;
  return id;
}

/**
 * The log row of one attempt to `webhookId`: an event of `list-1` delivered with 200, unless
 * `error` names how it failed (then no response came back). It holds what a real attempt
 * sends and gets back, so that the bookkeeping bench writes rows of their real size.
 */
export function attemptRecord(
  webhookId: string,
  { kind = 'event', error = null, id = newId('dlv') }: { kind?: DeliveryRecord['kind']; error?: DeliveryError | null; id?: string } = {},
): DeliveryRecord {
  const now = new Date().toISOString();
  // A ping's and a probe's rows name no list.
  const { body, ...names } =
    kind === 'ping' || kind === 'probe'
      ? { event: 'ping', listId: null, cursor: null, at: null, body: pingPayload(webhookId) }
      : { event: 'list.changed', listId: 'list-1', cursor: 1, at: now, body: eventPayload('list.changed', 'list-1', 1, now) };
  return {
    id,
    webhookId,
    kind,
    ...names,
    result: { delivered: error === null, statusCode: error === null ? 200 : null, durationMs: 3, error },
    request: {
      url: `https://receiver.test/${webhookId}`,
      headers: {
        'svc-event': names.event,
        'svc-signature': signPayload(body, 'whsec_test-rows'),
        'svc-delivery': id,
        'svc-webhook': webhookId,
        'content-type': 'application/json',
        'user-agent': 'svc-webhooks/test-rows',
      },
      body,
    },
    response:
      error === null
        ? { statusCode: 200, headers: { 'content-type': 'text/plain', date: new Date().toUTCString() }, body: 'ok', bodyTruncated: false }
        : null,
  };
}
