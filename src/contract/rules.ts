// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). The rules workflows read
// while they decide, and the failure types they tell apart: a workflow replaying its history
// must decide as it did, so a change here goes behind patched() in the workflow that reads it.
// The probes' schedule has a module of its own (probe-schedule.ts).

/** Consecutive failed deliveries that pause a webhook (`webhook/{id}`). */
export const MAX_CONSECUTIVE_FAILURES = 20;

/**
 * How long `webhook/{id}` holds an outcome told with its end time before counting it: the
 * bound on how late a worker tells one (its log row gathered for at most 250 ms, a statement
 * time-out of 1 s tried at most 3 times, the 100 ms spacing of signals, and the signal itself).
 * Outcomes held are counted in the order their attempts ended, whatever order they arrived in,
 * so a pause or a notice is decided only once every outcome that ended before it is known.
 */
export const OUTCOME_SETTLE_MS = 5_000;

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

// The sizes that shape workflows' commands: each decides how many activities a workflow task
// schedules, or when a run continues-as-new. A replay takes the same decisions only with the
// same value, so change one only behind patched() in the workflow that reads it.

/** Deliveries of a write scheduled together (`deliverEvents`): a workflow task may schedule at most 2,000 activities; stay well below. */
export const DELIVERIES_PER_WAVE = 500;

/**
 * Batches of a large write running at once (`deliverListWrite`): enough to keep the workers
 * busy, few enough that the pending activities stay far below Temporal's limits and other
 * writes still get their turn.
 */
export const BATCHES_AT_ONCE = 10;

/**
 * A run of `webhook/{id}` continues-as-new after this many signals (tests lower it through
 * its input). Runs are kept short: a worker that lost this workflow from its cache (a
 * restart, or a continue-as-new that Temporal refused because signals arrived meanwhile)
 * replays the whole run on its one workflow thread, holding up every
 * other workflow: measured at about 1.4 ms per history event, 5.6 s for a run of 4,100 events
 * (1,300 signals under a flood of failures).
 */
export const DEFAULT_SIGNALS_PER_RUN = 200;

/** A recovery's sends go in slots of a tenth of a second (`recoverDeliveries` says how). */
export const SLOTS_PER_SECOND = 10;

/**
 * A run of a recovery continues-as-new after this many sends: a little over one history event
 * each (its local activity's marker, and a share of the workflow task of its slot), so a run
 * stays under 1,000 events, far below Temporal's 51,200, and a worker that lost it from its
 * cache replays it in about a second. A run holds at least a second of sends, though:
 * Temporal delays a run that continues-as-new sooner than that
 * (`history.continueAsNewMinInterval`, 1 s).
 */
export const SENDS_PER_RUN = 500;

/** A recovery's send lost before any attempt claimed its item (nothing was sent) is attempted at most this often. */
export const ATTEMPTS_OF_UNCLAIMED_SEND = 3;

/**
 * A run of `reencrypt-secrets/{taskQueue}/{keyId}` continues-as-new after this many batches of
 * `resealBatch` (six history events each): a run stays near 600 events however many secrets.
 */
export const RESEAL_BATCHES_PER_RUN = 100;
