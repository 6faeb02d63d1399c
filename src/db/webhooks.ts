import type { PendingQuery, Row } from 'postgres';
import type { Topic } from '../topics';
import type { AuditActor, ClientCertificateView, Notice, NoticeType, ReceiverAuthView, Webhook } from '../objects';
import {
  applyChange,
  auditedCredentials,
  changed,
  isChange,
  openCredentials,
  storedCredentials,
  type CredentialsChange,
  type StoredCredentials,
} from '../delivery/receiver-credentials';
import type { WebhookLifecycleState } from '../contract/payloads';
import type { SealedSecret, SecretBox } from '../secret-keys';
import { recordAudit, type AuditRecord } from './audit-log';
import { storedFailureCount, storeFailureCount } from './failure-count';
import { sealedCredentialsOf, sealedSecretOf, type SealedColumns, type SealedCredentialsColumns } from './sealed-secrets';
import { insertNotice, type NoticeMailState } from './notices';
import type { Db, Sql } from './sql';
import { healthColumns, toHealth, type HealthRow } from './webhook-health';

type Fragment = PendingQuery<Row[]>;

export interface WebhookRow extends HealthRow {
  id: string;
  url: string;
  events: Topic[];
  list_ids: string[];
  status: Webhook['status'];
  paused_reason: Webhook['pausedReason'];
  consecutive_failures: number;
  relay: boolean;
  created_at: Date;
  updated_at: Date;
  auth: ReceiverAuthView;
  client_certificate: ClientCertificateView;
}

// Every column but the sealed secret and credentials, which only the activities (to sign, to
// present) and the registration reply read; `auth` and `client_certificate` hold no credential.
const STORED_COLUMNS = [
  'id',
  'url',
  'events',
  'list_ids',
  'status',
  'paused_reason',
  'consecutive_failures',
  'relay',
  'created_at',
  'updated_at',
  'auth',
  'client_certificate',
];

/** What toWebhook reads, in a SELECT from `webhooks` or the RETURNING of a write to it: the columns and the health. */
export function webhookColumns(sql: Db): Fragment {
  return sql`${sql(STORED_COLUMNS)}, ${healthColumns(sql)}`;
}

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    listIds: row.list_ids,
    status: row.status,
    pausedReason: row.paused_reason,
    consecutiveFailures: row.consecutive_failures,
    relay: row.relay,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    health: toHealth(row),
    auth: row.auth,
    clientCertificate: row.client_certificate,
  };
}

/** An account's webhook; another account's id gives null, as an unknown one does. */
export async function findWebhook(sql: Db, accountId: string, webhookId: string): Promise<Webhook | null> {
  const [row] = await sql<WebhookRow[]>`
    SELECT ${webhookColumns(sql)} FROM webhooks WHERE id = ${webhookId} AND account_id = ${accountId}`;
  return row ? toWebhook(row) : null;
}

export async function listWebhooks(sql: Db, accountId: string): Promise<Webhook[]> {
  const rows = await sql<WebhookRow[]>`
    SELECT ${webhookColumns(sql)} FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at, id`;
  return rows.map(toWebhook);
}

export async function findWebhookByUrl(sql: Db, accountId: string, url: string): Promise<Webhook | null> {
  const [row] = await sql<WebhookRow[]>`
    SELECT ${webhookColumns(sql)} FROM webhooks WHERE account_id = ${accountId} AND url = ${url}`;
  return row ? toWebhook(row) : null;
}

/** The account's webhooks that count against MAX_WEBHOOKS_PER_ACCOUNT: relay sessions do not. */
export async function countWebhooks(sql: Db, accountId: string): Promise<number> {
  const [row] = await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM webhooks WHERE account_id = ${accountId} AND NOT relay`;
  return row.count;
}

/** The webhook's signing secret, sealed; null for a webhook that is gone. */
export async function findSealedSecret(sql: Db, webhookId: string): Promise<SealedSecret | null> {
  const [row] = await sql<SealedColumns[]>`SELECT secret_key_id, secret_sealed FROM webhooks WHERE id = ${webhookId}`;
  return row ? sealedSecretOf(row) : null;
}

/** What a PATCH sets besides the status (which belongs to the per-webhook workflow). */
export interface WebhookSettings {
  events?: Topic[];
  listIds?: string[];
  credentials: CredentialsChange;
}

/**
 * PATCH of events, listIds and the receiver's credentials, recorded as webhook.updated with the
 * fields set (of credentials, only that they changed: the kind, the header names, the
 * certificate's view). Credentials are read, changed and sealed again under the row's lock, so
 * that two changes of them never lose one another. A webhook deleted meanwhile is left so.
 */
export function updateWebhookSettings(
  sql: Sql,
  secrets: SecretBox,
  webhookId: string,
  { events, listIds, credentials: change }: WebhookSettings,
  actor: AuditActor,
): Promise<void> {
  return sql.begin(async (tx) => {
    const [row] = await tx<(SealedCredentialsColumns & { accountId: string })[]>`
      SELECT account_id AS "accountId", credentials_key_id, credentials_sealed FROM webhooks WHERE id = ${webhookId} FOR UPDATE`;
    if (!row) return;
    const stored = isChange(change)
      ? storedCredentials(secrets, applyChange(openCredentials(secrets, sealedCredentialsOf(row), webhookId), change), webhookId)
      : null;
    await tx`
      UPDATE webhooks SET events = COALESCE(${events ?? null}, events),
                          list_ids = COALESCE(${listIds ?? null}, list_ids),
                          ${stored ? tx`${credentialColumns(tx, stored)},` : tx``}
                          updated_at = now()
      WHERE id = ${webhookId}`;
    const details = { ...(events && { events }), ...(listIds && { listIds }), ...(stored && auditedCredentials(stored, changed(change))) };
    await recordAudit(tx, { accountId: row.accountId, action: 'webhook.updated', target: webhookTarget(webhookId), actor, details });
  });
}

/** The SET of a webhook's (or a registration's) four credential columns. */
export function credentialColumns(sql: Db, { auth, clientCertificate, sealed }: StoredCredentials): Fragment {
  return sql`auth = ${jsonOrNull(sql, auth)}, client_certificate = ${jsonOrNull(sql, clientCertificate)},
             credentials_key_id = ${sealed?.keyId ?? null}, credentials_sealed = ${sealed?.sealed ?? null}`;
}

/** A jsonb value, or SQL's NULL for null (sql.json(null) would store JSON's null). */
export function jsonOrNull(sql: Db, value: ReceiverAuthView | ClientCertificateView) {
  return value === null ? null : sql.json(value);
}

/**
 * Replaces the signing secret, recorded as webhook.secret_rotated (which never holds it); the
 * old one is gone. Every attempt reads the secret as it starts, so one that starts after this
 * commits signs with the new one.
 */
export function replaceWebhookSecret(sql: Sql, webhookId: string, secret: SealedSecret, actor: AuditActor): Promise<void> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ accountId: string }[]>`
      UPDATE webhooks SET secret_key_id = ${secret.keyId}, secret_sealed = ${secret.sealed}, updated_at = now()
      WHERE id = ${webhookId} RETURNING account_id AS "accountId"`;
    if (row) await recordAudit(tx, { accountId: row.accountId, action: 'webhook.secret_rotated', target: webhookTarget(webhookId), actor });
  });
}

const webhookTarget = (id: string) => ({ type: 'webhook', id }) as const;

/** The counting part of the per-webhook workflow's state, and its probes, as the mirror held them before a store. */
export type StoredCount = Pick<WebhookLifecycleState, 'status' | 'pausedReason' | 'consecutiveFailures' | 'failuresCounted' | 'probes'>;

/** How a store decides: which notice the change calls for, and whether this worker mails notices. */
export interface StoreRules {
  /** The notice a change from `before` to `after` makes, or null (noticeCrossed in src/notices/crossing.ts). */
  noticeFor: (before: StoredCount, after: WebhookLifecycleState) => NoticeType | null;
  /** Whether this worker mails notices (SMTP_URL); a notice is `pending` when it does and the account has a notificationEmail. */
  mailNotices: boolean;
}

/** What one store of the per-webhook workflow's state did. */
export interface MirroredState {
  /** This store paused the webhook (a repeat of the same store: false). */
  paused: boolean;
  /** The notice this store made (as `rules.noticeFor` decided), if any. */
  notice: (Notice & { mail: NoticeMailState }) | null;
  /** The webhook's notices whose mail is `pending`, this store's own included: their workflows are to be started. */
  pendingMail: string[];
}

/**
 * What a store of the per-webhook workflow's state records in the audit log: a pause (by hand,
 * or by failures with no actor), or a reactivation, of a paused webhook or of an active one
 * whose count it reset; nothing for the counting and the probes. `requester`: who asked for
 * the status change the store holds, if one does.
 */
function statusChangeOf(
  before: StoredCount,
  after: WebhookLifecycleState,
  requester: AuditActor | undefined,
): Pick<AuditRecord, 'action' | 'actor' | 'details'> | null {
  if (before.status === 'active' && after.status === 'paused') {
    return after.pausedReason === 'auto_failures'
      ? {
          action: 'webhook.paused',
          actor: null,
          details: { pausedReason: 'auto_failures', consecutiveFailures: after.consecutiveFailures },
        }
      : { action: 'webhook.paused', actor: requester ?? null, details: { pausedReason: 'manual' } };
  }
  const reactivated =
    after.status === 'active' &&
    (before.status === 'paused' || (requester !== undefined && before.consecutiveFailures > 0 && after.consecutiveFailures === 0));
  if (!reactivated) return null;
  const { status, pausedReason, consecutiveFailures } = before;
  return { action: 'webhook.reactivated', actor: requester ?? null, details: { previous: { status, pausedReason, consecutiveFailures } } };
}

/**
 * Mirrors the per-webhook workflow's state, which only that workflow changes, and makes the
 * notice and the audit log's entry the change calls for, in one transaction: a notice or an
 * entry exists if and only if the state that made it is stored, and a repeat of the same store
 * changes nothing and makes none. The webhook's row lock orders the stores of one webhook.
 */
export function mirrorWebhookState(
  sql: Sql,
  state: WebhookLifecycleState,
  { noticeFor, mailNotices }: StoreRules,
  requester?: AuditActor,
): Promise<MirroredState> {
  return sql.begin(async (tx): Promise<MirroredState> => {
    const [before] = await tx<(StoredCount & { accountId: string; url: string; hasAddress: boolean; pendingMail: string[] })[]>`
      SELECT w.status, w.paused_reason AS "pausedReason", ${storedFailureCount(tx)}, w.probe_state AS probes,
             w.account_id AS "accountId", w.url,
             a.notification_email IS NOT NULL AS "hasAddress",
             ARRAY(SELECT id FROM notices n WHERE n.webhook_id = w.id AND n.mail = 'pending' ORDER BY n.created_at, n.id) AS "pendingMail"
      FROM webhooks w JOIN accounts a ON a.id = w.account_id
      WHERE w.id = ${state.webhookId}
      FOR UPDATE OF w`;
    if (!before) return { paused: false, notice: null, pendingMail: [] };
    const probes = state.probes ?? null;
    const unchanged =
      before.status === state.status &&
      before.pausedReason === state.pausedReason &&
      before.consecutiveFailures === state.consecutiveFailures &&
      before.failuresCounted === state.failuresCounted &&
      before.probes === probes;
    if (unchanged) return { paused: false, notice: null, pendingMail: before.pendingMail };
    await tx`
      UPDATE webhooks SET status = ${state.status}, paused_reason = ${state.pausedReason}, ${storeFailureCount(tx, state)},
                          probe_state = ${probes}, updated_at = now()
      WHERE id = ${state.webhookId}`;
    const statusChange = statusChangeOf(before, state, requester);
    if (statusChange) await recordAudit(tx, { accountId: before.accountId, target: webhookTarget(state.webhookId), ...statusChange });
    const paused = before.status === 'active' && state.status === 'paused';
    const type = noticeFor(before, state);
    if (!type) return { paused, notice: null, pendingMail: before.pendingMail };
    const mail: NoticeMailState = !mailNotices ? 'not_configured' : before.hasAddress ? 'pending' : 'no_address';
    const notice = await insertNotice(tx, {
      accountId: before.accountId,
      webhookId: state.webhookId,
      type,
      url: before.url,
      consecutiveFailures: state.consecutiveFailures,
      mail,
    });
    return {
      paused,
      notice: { ...notice, mail },
      pendingMail: mail === 'pending' ? [...before.pendingMail, notice.id] : before.pendingMail,
    };
  });
}

/** The webhooks paused by failures whose pause has no probes: paused by a release before probes, or while probing was off. */
export async function pausesWithoutProbes(sql: Db): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM webhooks WHERE status = 'paused' AND paused_reason = 'auto_failures' AND probe_state IS NULL ORDER BY id`;
  return rows.map((row) => row.id);
}

/**
 * Deletes the webhook, recorded as webhook.deleted, or for a relay session relay.closed; one
 * already gone is left so, and recorded once.
 */
export function deleteWebhookRow(sql: Sql, webhookId: string, actor: AuditActor | null): Promise<void> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ accountId: string; url: string; relay: boolean }[]>`
      DELETE FROM webhooks WHERE id = ${webhookId} RETURNING account_id AS "accountId", url, relay`;
    if (!row) return;
    const deleted = row.relay ? ({ action: 'relay.closed' } as const) : ({ action: 'webhook.deleted', details: { url: row.url } } as const);
    await recordAudit(tx, { accountId: row.accountId, target: webhookTarget(webhookId), actor, ...deleted });
  });
}
