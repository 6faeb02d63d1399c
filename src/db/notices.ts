// Notices and their mail: made by the store of `webhook/{id}`'s state (mirrorWebhookState in
// webhooks.ts, in its transaction), listed by the API, claimed and marked by the activity
// that mails them (activities/notices.ts).
import type { NoticeMailOutcome } from '../contract/payloads';
import { newId } from '../ids';
import type { Notice, NoticeType } from '../objects';
import type { Db, Sql } from './sql';
import { newestFirstPage, type PageQuery } from './pages';

/**
 * What became of a notice's mail (the column `mail`): `pending` until its workflow claims it,
 * `sending` once claimed against the hourly cap, `sent`; or never mailed: `capped`,
 * `no_address`, `not_configured`.
 */
export type NoticeMailState = 'pending' | 'sending' | 'sent' | 'capped' | 'no_address' | 'not_configured';

/** A notice as the queries below select it: the API's object, its times still Dates. */
type NoticeRow = Omit<Notice, 'createdAt' | 'emailedAt'> & { createdAt: Date; emailedAt: Date | null };

/** The columns of a notice, as NoticeRow names them, from the table `notices` (unaliased). */
const NOTICE_COLUMNS = `notices.id, notices.type, notices.webhook_id AS "webhookId", notices.url,
  notices.consecutive_failures AS "consecutiveFailures", notices.last_error AS "lastError",
  notices.last_status_code AS "lastStatusCode", notices.created_at AS "createdAt", notices.emailed_at AS "emailedAt"`;

const toNotice = ({ createdAt, emailedAt, ...notice }: NoticeRow): Notice => ({
  ...notice,
  createdAt: createdAt.toISOString(),
  emailedAt: emailedAt?.toISOString() ?? null,
});

/**
 * Records a notice of the webhook, with the error and status code of its last failed event
 * delivery (the receiver's own failures: not `internal`). Runs in the transaction that
 * stores the state that made it.
 */
export async function insertNotice(
  tx: Db,
  notice: { accountId: string; webhookId: string; type: NoticeType; url: string; consecutiveFailures: number; mail: NoticeMailState },
): Promise<Notice> {
  const [row] = await tx<NoticeRow[]>`
    INSERT INTO notices (id, account_id, webhook_id, type, url, consecutive_failures, last_error, last_status_code, mail)
    SELECT ${newId('ntc')}, ${notice.accountId}, ${notice.webhookId}, ${notice.type}, ${notice.url}, ${notice.consecutiveFailures},
           last.error, last.status_code, ${notice.mail}
    FROM (SELECT 1) AS one LEFT JOIN LATERAL (
      SELECT error, status_code FROM deliveries
      WHERE webhook_id = ${notice.webhookId} AND kind = 'event' AND outcome = 'failed' AND error <> 'internal'
      ORDER BY attempted_at DESC, id DESC LIMIT 1
    ) AS last ON true
    RETURNING ${tx.unsafe(NOTICE_COLUMNS)}`;
  return toNotice(row);
}

/** The account's notices, newest first; `before` is the id of the last one of the previous page. */
export async function listNotices(sql: Db, accountId: string, page: PageQuery & { webhookId?: string }): Promise<Notice[]> {
  const rows = await sql<NoticeRow[]>`
    SELECT ${sql.unsafe(NOTICE_COLUMNS)}
    ${newestFirstPage(sql, { table: 'notices', time: 'created_at', owner: 'account_id' }, accountId, page, { webhook_id: page.webhookId })}`;
  return rows.map(toNotice);
}

/** What the mail activity may do with a notice: send it (to `to`), or nothing, and why. */
export type NoticeMailClaim = { outcome: 'send'; notice: Notice; to: string } | { outcome: NoticeMailOutcome };

/**
 * Claims the sending of a notice's mail against its account's cap: at most `maxPerHour`
 * mails claimed in the last 60 minutes. The account's row lock serialises the claims of one
 * account. A notice claimed before (an attempt that failed) is sent again without counting
 * twice; one already decided answers as it was decided. The address is read now: the one
 * the account has when the mail goes.
 */
export function claimNoticeMail(sql: Sql, noticeId: string, maxPerHour: number): Promise<NoticeMailClaim> {
  return sql.begin(async (tx): Promise<NoticeMailClaim> => {
    const [found] = await tx<(NoticeRow & { mail: NoticeMailState; accountId: string; address: string | null })[]>`
      SELECT ${tx.unsafe(NOTICE_COLUMNS)}, notices.mail, notices.account_id AS "accountId", accounts.notification_email AS address
      FROM notices JOIN accounts ON accounts.id = notices.account_id
      WHERE notices.id = ${noticeId}
      FOR UPDATE OF accounts, notices`;
    if (!found) return { outcome: 'gone' };
    const { mail, accountId, address, ...row } = found;
    if (mail !== 'pending' && mail !== 'sending') return { outcome: mail };
    const decide = async (mail: 'capped' | 'no_address') => {
      await tx`UPDATE notices SET mail = ${mail} WHERE id = ${noticeId}`;
      return { outcome: mail };
    };
    if (address === null) return decide('no_address');
    if (mail === 'pending') {
      const [{ claimed }] = await tx<{ claimed: number }[]>`
        SELECT count(*)::int AS claimed FROM notices
        WHERE account_id = ${accountId} AND mail_claimed_at > now() - interval '1 hour'`;
      if (claimed >= maxPerHour) return decide('capped');
      await tx`UPDATE notices SET mail = 'sending', mail_claimed_at = now() WHERE id = ${noticeId}`;
    }
    return { outcome: 'send', notice: toNotice(row), to: address };
  });
}

/** Records that a notice's mail was sent, or will not be (no SMTP_URL), unless that was decided already. */
export async function markNoticeMail(sql: Db, noticeId: string, mail: 'sent' | 'not_configured'): Promise<void> {
  const emailedAt = mail === 'sent' ? sql`now()` : sql`NULL`;
  await sql`UPDATE notices SET mail = ${mail}, emailed_at = ${emailedAt} WHERE id = ${noticeId} AND mail IN ('pending', 'sending')`;
}
