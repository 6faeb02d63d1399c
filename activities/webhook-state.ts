// The activities of `webhook/{id}`: its state mirrored into PostgreSQL, and its deletion.
import type { WebhookLifecycleState } from '../src/contract/payloads';
import { deleteWebhookRow, mirrorWebhookState } from '../src/db/webhooks';
import type { ActivityDependencies } from './dependencies';

export function createWebhookStateActivities({ sql, logger, metrics }: ActivityDependencies) {
  return {
    async storeWebhookState(state: WebhookLifecycleState): Promise<void> {
      const { paused } = await mirrorWebhookState(sql, state);
      if (paused) {
        metrics.webhooksPaused.inc({ reason: state.pausedReason ?? 'manual' });
        logger.info({
          msg: 'webhook paused',
          webhookId: state.webhookId,
          reason: state.pausedReason,
          consecutiveFailures: state.consecutiveFailures,
        });
      }
    },

    deleteWebhook(webhookId: string): Promise<void> {
      return deleteWebhookRow(sql, webhookId);
    },
  };
}
