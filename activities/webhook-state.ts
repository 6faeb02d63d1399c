// The activities of `webhook/{id}`: its state mirrored into PostgreSQL with the notices and
// audit log entries it makes, and its deletion. The hand-over of a pause to its probes is in
// probes.ts.
import { Context } from '@temporalio/activity';
import type { AuditActor, WebhookLifecycleState } from '../src/contract/payloads';
import { deleteWebhookRow, mirrorWebhookState } from '../src/db/webhooks';
import { noticeCrossed } from '../src/notices/crossing';
import { startNoticeMail } from '../src/temporal/notice-client';
import type { ActivityDependencies } from './dependencies';

export function createWebhookStateActivities({ sql, logger, metrics, client, notices }: ActivityDependencies) {
  return {
    async storeWebhookState(state: WebhookLifecycleState, requester?: AuditActor): Promise<void> {
      const rules = { noticeFor: noticeCrossed, mailNotices: notices.mailer !== undefined };
      const { paused, notice, pendingMail } = await mirrorWebhookState(sql, state, rules, requester);
      if (paused) {
        metrics.webhooksPaused.inc({ reason: state.pausedReason ?? 'manual' });
        logger.info({
          msg: 'webhook paused',
          webhookId: state.webhookId,
          reason: state.pausedReason,
          consecutiveFailures: state.consecutiveFailures,
        });
      }
      if (notice) {
        metrics.notices.inc({ type: notice.type, mail: notice.mail });
        logger.info({
          msg: 'notice',
          noticeId: notice.id,
          type: notice.type,
          webhookId: state.webhookId,
          accountId: state.accountId,
          consecutiveFailures: notice.consecutiveFailures,
          lastError: notice.lastError,
          lastStatusCode: notice.lastStatusCode,
          mail: notice.mail,
        });
      }
      // The mail of every notice still pending, this store's own and any an earlier attempt
      // of it committed but died before starting: a retry of this activity starts it.
      const { taskQueue } = Context.current().info;
      for (const noticeId of pendingMail) {
        await startNoticeMail(client, taskQueue, { noticeId, accountId: state.accountId, webhookId: state.webhookId });
      }
    },

    /** `actor` absent: an Update of the release before, recorded with no actor. */
    deleteWebhook(webhookId: string, actor?: AuditActor): Promise<void> {
      return deleteWebhookRow(sql, webhookId, actor ?? null);
    },
  };
}
