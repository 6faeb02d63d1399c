// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). The rules workflows read
// while they decide, and the failure types they tell apart: a workflow replaying its history
// must decide as it did, so a change here goes behind patched() in the workflow that reads it.

/** Consecutive failed deliveries that pause a webhook (`webhook/{id}`). */
export const MAX_CONSECUTIVE_FAILURES = 20;

/** A write with more deliveries than this is delivered by child workflows of this many each. */
export const DEFAULT_DELIVERIES_PER_BATCH = 500;

/**
 * The failure type of a delivery activity whose receiver did not answer 2xx, already logged
 * and counted; its details hold the DeliveryResult. Any other failure of a delivery is ours.
 */
export const DELIVERY_FAILED = 'DeliveryFailed';

/** The failure type of a ping or redelivery whose webhook was deleted meanwhile. */
export const WEBHOOK_GONE = 'WebhookGone';

/** A recovery stops after this many failed sends in a row (`receiver_failing`). */
export const RECOVERY_FAILED_SENDS_TO_STOP = 5;
