// Many webhooks with secrets their owners know, for the tests of re-encryption: written straight
// into the database (no registration pings), each secret sealed as the service seals it; and
// the check every owner makes of what it received.
import type { Sql } from '../../src/db/sql';
import { verifySignature } from '../../src/delivery/signing';
import { newId } from '../../src/ids';
import type { SecretBox } from '../../src/secret-keys';
import { newSigningSecret } from '../../src/secrets';
import type { ReceivedRequest } from './receiver';

/** webhook id -> the secret its owner holds. */
export type OwnersSecrets = Map<string, string>;

/** `count` active webhooks of the account on `list.changed`, the i-th at `urlOf(i)`, each with a new secret sealed in `box`. */
export async function insertSealedWebhooks(
  sql: Sql,
  box: SecretBox,
  accountId: string,
  count: number,
  urlOf: (i: number) => string,
): Promise<OwnersSecrets> {
  const secrets: OwnersSecrets = new Map();
  for (let first = 0; first < count; first += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - first) }, (_, k) => {
      const id = newId('wh');
      const secret = newSigningSecret();
      secrets.set(id, secret);
      const { keyId, sealed } = box.seal(secret, id);
      return { id, url: urlOf(first + k), key_id: keyId, sealed: sealed.toString('base64') };
    });
    await sql`
      INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events)
      SELECT id, ${accountId}, url, key_id, decode(sealed, 'base64'), ${['list.changed']}
      FROM jsonb_to_recordset(${sql.json(rows)}) AS r(id text, url text, key_id text, sealed text)`;
  }
  return secrets;
}

/** The requests (from `since` on) whose signature does not verify with the secret their webhook's owner holds, as `webhook: event`. */
export function unverified(requests: readonly ReceivedRequest[], secrets: OwnersSecrets): string[] {
  return requests.flatMap((request) => {
    const webhookId = request.headers['svc-webhook'] as string;
    const secret = secrets.get(webhookId);
    const ok = secret !== undefined && verifySignature(request.rawBody, request.headers['svc-signature'] as string, secret);
    return ok ? [] : [`${webhookId}: ${String(request.headers['svc-event'])}`];
  });
}
