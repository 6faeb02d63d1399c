// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). The rules workflows read
// while they decide, and the failure types they tell apart: a workflow replaying its history
// must decide as it did, so a change here goes behind patched() in the workflow that reads it.
import type { PauseProbing, ProbePlan, ProbesInput } from './payloads';

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
 * A run of `probes/{taskQueue}/{shard}` continues-as-new once its history holds this many
 * events (a wake is about ten: its timer, the workflow tasks, the activity's three, the
 * messages to `webhook/{id}`), however long its pauses last and however short PROBE_INTERVALS.
 */
export const PROBES_RUN_EVENTS = 2_000;

/** Probes sent by one activity of `probes/{taskQueue}/{shard}`: more due at once go in several. */
export const PROBES_PER_ACTIVITY = 100;

/**
 * `probes/{taskQueue}/{shard}` wakes at most once in this share of the shortest interval of the
 * plans it follows: a probe waits that long at most for the others due soon after it, so that
 * one workflow task sends them all.
 */
export const PROBE_GATHER_SHARE = 0.05;

/** The least time between two wakes of `probes/{taskQueue}/{shard}` probing `plans` (PROBE_GATHER_SHARE). */
export function probeGatherMs(plans: Iterable<ProbePlan>): number {
  let shortest = Infinity;
  for (const plan of plans) shortest = Math.min(shortest, ...plan.intervalsMs);
  return shortest === Infinity ? 0 : Math.ceil(shortest * PROBE_GATHER_SHARE);
}

/**
 * The probes a wake sends leave one after another over this share of its gather time, not all
 * at once: many paused webhooks often share one receiver (one customer's outage pauses them
 * all), and a burst of TLS handshakes at once is what slows the other deliveries beside it. A
 * probe is then late by at most the gather time and this share of it.
 */
export const PROBE_SPREAD_SHARE = 0.5;

/** The time over which a wake of `probes/{taskQueue}/{shard}` probing `plans` spreads its probes (PROBE_SPREAD_SHARE). */
export function probeSpreadMs(plans: Iterable<ProbePlan>): number {
  return Math.floor(probeGatherMs(plans) * PROBE_SPREAD_SHARE);
}

/** How long after its activity starts each of `count` probes leaves, spread evenly over `spreadMs`. */
export function probeSendDelaysMs(count: number, spreadMs: number): number[] {
  return Array.from({ length: count }, (_, i) => Math.floor((i * spreadMs) / count));
}

/** The input of a run of `probes/{taskQueue}/{shard}` that goes on probing `pauses`: each plan once. */
export function packProbes(pauses: Iterable<PauseProbing>): Omit<ProbesInput, 'eventsPerRun'> {
  const plans: ProbePlan[] = [];
  const indexOf = new Map<string, number>();
  const packed = [...pauses].map(({ plan, ...pause }) => {
    const key = JSON.stringify(plan);
    let index = indexOf.get(key);
    if (index === undefined) {
      index = plans.push(plan) - 1;
      indexOf.set(key, index);
    }
    return { ...pause, plan: index };
  });
  return { plans, pauses: packed };
}

/** The pauses a run of `probes/{taskQueue}/{shard}` was handed (packProbes' inverse). */
export function unpackProbes({ plans, pauses }: ProbesInput): PauseProbing[] {
  return pauses.map((pause) => ({ ...pause, plan: plans[pause.plan] }));
}

/**
 * A run of `reencrypt-secrets/{taskQueue}/{keyId}` continues-as-new after this many batches of
 * `resealSecrets` (six history events each): a run stays near 600 events however many secrets.
 */
export const RESEAL_BATCHES_PER_RUN = 100;

/**
 * When probe `n` (from 0) of a pause is due, in ms since the epoch, or null once that is past
 * `plan.forMs` after `since`: the intervals add up from the pause, the last one repeating, so a
 * probe that takes long delays none after it.
 */
export function probeDueAt(plan: ProbePlan, since: number, n: number): number | null {
  const { intervalsMs, forMs } = plan;
  const listed = Math.min(n + 1, intervalsMs.length);
  let offset = 0;
  for (let i = 0; i < listed; i++) offset += intervalsMs[i];
  offset += (n + 1 - listed) * intervalsMs[intervalsMs.length - 1];
  return offset > forMs ? null : since + offset;
}
