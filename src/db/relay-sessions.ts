// Relay sessions: webhooks whose deliveries go over a command line's connection (src/relay/).
// A session's connection is held by one API process at a time, which holds a PostgreSQL
// advisory lock named by the connection's key while it is open: whether a session is connected
// is whether some process holds that lock, so a process that dies disconnects its sessions.
import { randomBytes, randomInt } from 'node:crypto';
import type { PendingQuery, Row } from 'postgres';
import { MAX_RELAY_SESSIONS_PER_ACCOUNT } from '../limits';
import type { AuditActor, CreatedWebhook } from '../objects';
import { newId } from '../ids';
import type { SecretBox } from '../secret-keys';
import { hashToken, newSigningSecret } from '../secrets';
import type { Topic } from '../topics';
import { recordAudit } from './audit-log';
import type { Db, Sql } from './sql';
import { toWebhook, webhookColumns, type WebhookRow } from './webhooks';

/** How long a connection ticket may wait to be redeemed. */
const TICKET_SECONDS = 30;

/** Whether the advisory lock of the connection key `key` (an SQL expression) is held by some process. */
function lockHeld(sql: Db, key: PendingQuery<Row[]>): PendingQuery<Row[]> {
  return sql`(${key} IS NOT NULL AND EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = (${key} >> 32)::oid AND l.objid = (${key} & 4294967295)::oid))`;
}

/** A new connection's key: positive and exact as a JavaScript number. */
export function newConnectionKey(): number {
  return randomInt(1, 2 ** 48);
}

/** A new session, closed until its first connection, recorded as relay.opened; null when the account has its two already. */
export async function createRelaySession(
  sql: Sql,
  secrets: SecretBox,
  input: { accountId: string; events: Topic[]; listIds: string[] },
  actor: AuditActor,
): Promise<CreatedWebhook | null> {
  return sql.begin(async (tx) => {
    // Sessions opened at once see each other: never a third.
    await tx`SELECT 1 FROM accounts WHERE id = ${input.accountId} FOR UPDATE`;
    const [{ count }] = await tx<{ count: number }[]>`
      SELECT count(*)::int AS count FROM webhooks WHERE account_id = ${input.accountId} AND relay`;
    if (count >= MAX_RELAY_SESSIONS_PER_ACCOUNT) return null;
    const id = newId('wh');
    const secret = newSigningSecret();
    const sealed = secrets.seal(secret, id);
    const [row] = await tx<WebhookRow[]>`
      INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events, list_ids, relay, relay_closed_at)
      VALUES (${id}, ${input.accountId}, ${relaySessionUrl(id)}, ${sealed.keyId}, ${sealed.sealed}, ${input.events}, ${input.listIds}, true, now())
      RETURNING ${webhookColumns(tx)}`;
    const details = { events: input.events, listIds: input.listIds };
    await recordAudit(tx, { accountId: input.accountId, action: 'relay.opened', target: { type: 'webhook', id }, actor, details });
    return { ...toWebhook(row), secret };
  });
}

/** The `url` of a session's webhook: it names the session; the local address stays on the developer's machine. */
export function relaySessionUrl(webhookId: string): string {
  return `relay://${webhookId}`;
}

/** A single-use ticket to open a connection of the session, valid for TICKET_SECONDS. */
export async function issueRelayTicket(sql: Db, webhookId: string): Promise<{ ticket: string; expiresAt: Date }> {
  const ticket = `rt_${randomBytes(32).toString('base64url')}`;
  const [row] = await sql<{ expiresAt: Date }[]>`
    INSERT INTO relay_tickets (ticket_hash, webhook_id, expires_at)
    VALUES (${hashToken(ticket)}, ${webhookId}, now() + make_interval(secs => ${TICKET_SECONDS}))
    RETURNING expires_at AS "expiresAt"`;
  return { ticket, expiresAt: row.expiresAt };
}

/** The session a ticket opens, spending the ticket; null for one unknown, spent or expired. */
export async function redeemRelayTicket(sql: Db, ticket: string): Promise<{ webhookId: string } | null> {
  const [row] = await sql<{ webhookId: string }[]>`
    WITH spent AS (
      DELETE FROM relay_tickets WHERE ticket_hash = ${hashToken(ticket)} RETURNING webhook_id, expires_at
    )
    SELECT w.id AS "webhookId"
    FROM spent JOIN webhooks w ON w.id = spent.webhook_id
    WHERE spent.expires_at > now() AND w.relay`;
  return row ?? null;
}

/**
 * Makes the connection keyed `key` (whose lock the caller holds) the session's: from then on
 * deliveries go to it. Returns the key of the connection it replaces, or undefined when the
 * session no longer exists.
 */
export async function takeRelaySession(sql: Db, webhookId: string, key: number): Promise<{ replaced: number | null } | undefined> {
  const [row] = await sql<{ replaced: string | null }[]>`
    UPDATE webhooks w SET relay_connection = ${key}, relay_closed_at = NULL
    FROM (SELECT id, relay_connection FROM webhooks WHERE id = ${webhookId} AND relay FOR UPDATE) AS before
    WHERE w.id = before.id
    RETURNING before.relay_connection AS replaced`;
  if (!row) return undefined;
  return { replaced: row.replaced === null ? null : Number(row.replaced) };
}

/** The connection keyed `key` has closed: the session is closed from now, unless another connection holds it. */
export async function releaseRelaySession(sql: Db, webhookId: string, key: number): Promise<void> {
  await sql`UPDATE webhooks SET relay_closed_at = now() WHERE id = ${webhookId} AND relay_connection = ${key}`;
}

/** Where a session's deliveries go now: its connection's key, and whether that connection is open. */
export async function findRelayConnection(sql: Db, webhookId: string): Promise<{ key: number; open: boolean } | null> {
  const [row] = await sql<{ key: string | null; open: boolean }[]>`
    SELECT w.relay_connection AS key, ${lockHeld(sql, sql`w.relay_connection`)} AS open
    FROM webhooks w WHERE w.id = ${webhookId} AND w.relay`;
  if (!row || row.key === null) return null;
  return { key: Number(row.key), open: row.open };
}

/** The connection key each of these sessions has now (null: none yet); a deleted session is missing. */
export async function findSessionConnections(sql: Db, webhookIds: string[]): Promise<Map<string, number | null>> {
  if (webhookIds.length === 0) return new Map();
  const rows = await sql<{ webhookId: string; key: string | null }[]>`
    SELECT id AS "webhookId", relay_connection AS key FROM webhooks WHERE id = ANY(${webhookIds}) AND relay`;
  return new Map(rows.map(({ webhookId, key }) => [webhookId, key === null ? null : Number(key)]));
}

/**
 * Closes the sessions whose process died with their connections (nobody holds the lock, yet
 * they look open), and deletes those closed for `graceSeconds` or more, with what they logged,
 * each recorded as relay.closed by the service (no actor). Also drops answers no worker took.
 * Any API process may run it, as often as it likes.
 */
export function sweepRelaySessions(sql: Sql, graceSeconds: number): Promise<{ deleted: string[] }> {
  return sql.begin(async (tx) => {
    const deleted = await tx<{ id: string; accountId: string }[]>`
      WITH orphaned AS (
        UPDATE webhooks w SET relay_closed_at = now()
        WHERE w.relay AND w.relay_closed_at IS NULL AND NOT ${lockHeld(tx, tx`w.relay_connection`)}
      ), forgotten AS (
        DELETE FROM relay_answers WHERE created_at < now() - interval '5 minutes'
      ), expired_tickets AS (
        DELETE FROM relay_tickets WHERE expires_at < now()
      )
      DELETE FROM webhooks w
      WHERE w.relay AND w.relay_closed_at <= now() - make_interval(secs => ${graceSeconds})
        AND NOT ${lockHeld(tx, tx`w.relay_connection`)}
      RETURNING w.id, w.account_id AS "accountId"`;
    for (const { id, accountId } of deleted) {
      await recordAudit(tx, { accountId, action: 'relay.closed', target: { type: 'webhook', id }, actor: null });
    }
    return { deleted: deleted.map((session) => session.id) };
  });
}

/** A local server's answer, kept for the worker waiting on `channel`, which is told its id. */
export async function storeRelayAnswer(sql: Db, channel: string, id: string, answer: unknown): Promise<void> {
  await sql`
    WITH stored AS (INSERT INTO relay_answers (id, answer) VALUES (${id}, ${sql.json(answer as never)}) ON CONFLICT (id) DO NOTHING)
    SELECT pg_notify(${channel}, ${id})`;
}

/** Takes the answer stored for `id` (once); null when there is none. */
export async function takeRelayAnswer(sql: Db, id: string): Promise<unknown> {
  const [row] = await sql<{ answer: unknown }[]>`DELETE FROM relay_answers WHERE id = ${id} RETURNING answer`;
  return row?.answer ?? null;
}
