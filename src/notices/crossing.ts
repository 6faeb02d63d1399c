// When a store of `webhook/{id}`'s state makes a notice. Pure: the store compares the state
// PostgreSQL held before (mirrorWebhookState in src/db/webhooks.ts, which the activity storeWebhookState hands this rule) with the one it writes, in
// the transaction that writes it. One store may count many outcomes at once (a batch of
// outcomes can move the count from 8 to 12), and the same store may come again (a retried
// activity): only a crossing made by failures not counted before makes a notice.
import type { WebhookLifecycleState } from '../contract/payloads';
import type { NoticeType } from '../objects';

/** Consecutive failures that make a `webhook.failing` notice, once per streak (20 pause the webhook). */
export const FAILING_NOTICE_AT = 10;

/** What a store compares: the counting part of the per-webhook workflow's state, and its probes. */
export type CountedState = Pick<WebhookLifecycleState, 'status' | 'pausedReason' | 'consecutiveFailures' | 'failuresCounted' | 'probes'>;

/**
 * The notice a store from `before` to `after` makes, or null.
 * - `webhook.reachable` when a probe of the pause was answered with a 2xx (the probing is
 *   `reachable` now and was not before): once per pause, since only a reactivation forgets it.
 * - `webhook.paused` when failures paused it (`auto_failures`) and it was not so paused
 *   before; a manual pause makes none.
 * - `webhook.failing` when the streak's count reaches FAILING_NOTICE_AT while it stays active.
 *   The streak's count before the store is the stored one, unless a 2xx or a reactivation
 *   reset it within the store's batch: then the streak began at 0 (the stored count plus
 *   the failures the batch counted is not the new count).
 * - Nothing when the store counted no new failure: a repeat of the same store, a reset, a
 *   pause by hand, or outcomes arriving after the pause.
 * A pause supersedes the warning: a batch that crosses 10 and 20 at once makes only
 * `webhook.paused`.
 */
export function noticeCrossed(before: CountedState, after: CountedState): NoticeType | null {
  if (after.probes === 'reachable' && before.probes !== 'reachable') return 'webhook.reachable';
  const newFailures = after.failuresCounted - before.failuresCounted;
  if (newFailures <= 0) return null;
  if (after.status === 'paused') {
    const pausedByFailuresBefore = before.status === 'paused' && before.pausedReason === 'auto_failures';
    return after.pausedReason === 'auto_failures' && !pausedByFailuresBefore ? 'webhook.paused' : null;
  }
  const streakContinued = before.status === 'active' && before.consecutiveFailures + newFailures === after.consecutiveFailures;
  const countBefore = streakContinued ? before.consecutiveFailures : 0;
  return countBefore < FAILING_NOTICE_AT && after.consecutiveFailures >= FAILING_NOTICE_AT ? 'webhook.failing' : null;
}
