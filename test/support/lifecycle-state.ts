// What the database tests of `webhook/{id}`'s mirror store, as its activity would.
import type { WebhookLifecycleState } from '../../src/contract/payloads';
import type { StoreRules } from '../../src/db/webhooks';
import { noticeCrossed } from '../../src/notices/crossing';

/** The state a webhook's workflow starts with (active, nothing counted), as its mirror stores it. */
export function initialLifecycleState(webhookId: string, accountId: string): WebhookLifecycleState {
  return { webhookId, accountId, status: 'active', pausedReason: null, consecutiveFailures: 0, failuresCounted: 0 };
}

/** The rules the activity storeWebhookState stores by; `mailNotices` as the worker has SMTP_URL or not. */
export function storeRules(mailNotices = false): StoreRules {
  return { noticeFor: noticeCrossed, mailNotices };
}
