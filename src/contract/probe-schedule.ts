// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). The arithmetic of the probes'
// schedule (`probes/{taskQueue}/{shard}`): when a pause's probes are due, how long a wake waits
// for those due soon after it and over how long it sends them, how many one activity sends, and
// how a run carries its pauses across continue-as-new. A workflow replaying its history must
// decide as it did, so a change here goes behind patched() in probePausedWebhooks.
import type { PauseProbing, ProbePlan, ProbesInput } from './payloads';

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
