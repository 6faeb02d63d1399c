// The activity of `notice/{noticeId}`: one notice's mail, claimed against the account's
// hourly cap, then sent through SMTP_URL. It may be retried (a notice is not a delivery):
// an attempt that fails sends nothing it can know of, and the next one sends the same mail.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { NoticeMailOutcome } from '../src/contract/payloads';
import { claimNoticeMail, markNoticeMail } from '../src/db/notices';
import { composeNoticeMail } from '../src/notices/mail';
import { mailFailureOf } from '../src/notices/mailer';
import type { ActivityDependencies } from './dependencies';

export function createNoticeActivities({ sql, logger, metrics, notices }: ActivityDependencies) {
  // One Message-ID per notice, whatever the attempt: a mail sent twice (a worker lost between
  // the send and its record) is one message to the reader's client.
  const messageIdDomain = new URL(notices.dashboardUrl).hostname;

  function settled(noticeId: string, outcome: NoticeMailOutcome): NoticeMailOutcome {
    metrics.noticeMails.inc({ outcome });
    logger.info({ msg: 'notice mail', noticeId, outcome });
    return outcome;
  }

  return {
    async sendNoticeMail(noticeId: string): Promise<NoticeMailOutcome> {
      const { mailer } = notices;
      if (!mailer) {
        await markNoticeMail(sql, noticeId, 'not_configured');
        return settled(noticeId, 'not_configured');
      }
      const claim = await claimNoticeMail(sql, noticeId, notices.maxPerHour);
      if (claim.outcome !== 'send') return settled(noticeId, claim.outcome);
      try {
        await mailer.send({
          from: notices.from,
          to: claim.to,
          ...composeNoticeMail(claim.notice, notices.dashboardUrl),
          messageId: `<${noticeId}@${messageIdDomain}>`,
        });
      } catch (error) {
        // Only the client's code and the server's reply code: the message may quote the address.
        const failure = mailFailureOf(error);
        metrics.noticeMails.inc({ outcome: 'failed' });
        logger.warn({ msg: 'notice mail failed', noticeId, attempt: Context.current().info.attempt, reason: failure.reason });
        throw ApplicationFailure.create({
          type: 'NoticeMailFailed',
          message: `the mail of ${noticeId} was not sent: ${failure.reason}`,
          nonRetryable: failure.permanent,
        });
      }
      await markNoticeMail(sql, noticeId, 'sent');
      return settled(noticeId, 'sent');
    },
  };
}
