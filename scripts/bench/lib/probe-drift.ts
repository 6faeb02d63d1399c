// The probes' schedule as the receivers saw it (`split-probes`): each probe's arrival against
// the time it was due, `since` plus the intervals of PROBE_INTERVALS (the service's own
// probeDueAt), as a fraction of its interval.
import type { ProbePlan } from '../../../src/contract/payloads';
import { probeDueAt } from '../../../src/contract/probe-schedule';

/** Probes as the receivers got them, column-wise: when, and the webhook its URL's path names. */
export interface ProbeReceipts {
  t: number[];
  webhook: string[];
  /** 1 when signed with the webhook's secret as a ping, its `svc-webhook` header the path's webhook. */
  sigOk: number[];
}
export function emptyProbeReceipts(): ProbeReceipts {
  return { t: [], webhook: [], sigOk: [] };
}

/** One pause's probing: the webhook, and the `since` its probes count from. */
export interface ProbeSchedule {
  webhookId: string;
  since: number;
}

/** What the probes due within a window came to. */
export interface ProbeDrift {
  /** Probes whose due time falls within the window. */
  due: number;
  /** Of those, the ones received (at any time until the receipts were taken). */
  received: number;
  /**
   * Per probe due: its arrival less its due time, ms; for one not received, the time the
   * receipts were taken less its due time, the least it is late by.
   */
  lateMs: number[];
  /** The same, in percent of its interval (the wait from the probe before it, or from `since`). */
  driftPercent: number[];
  /** Received before their due time: none should be (it would mean a probe lost ahead of it). */
  early: number;
}

/** Each webhook's arrival times, in order. */
export function arrivalsByWebhook(receipts: ProbeReceipts): Map<string, number[]> {
  const byWebhook = new Map<string, number[]>();
  for (let j = 0; j < receipts.t.length; j++) {
    const times = byWebhook.get(receipts.webhook[j]);
    if (times) times.push(receipts.t[j]);
    else byWebhook.set(receipts.webhook[j], [receipts.t[j]]);
  }
  for (const times of byWebhook.values()) times.sort((a, b) => a - b);
  return byWebhook;
}

/**
 * The drift of each probe due within [from, to]. A pause's probes go one after the other, each
 * after the one before has ended, so none overtakes another: the n-th arrival at a webhook's
 * receiver (from 0, counted from the pause's first probe) is its probe n. `arrivals` holds every
 * arrival of these pauses since they began, in order, until `takenAt`.
 */
export function probeDrift(
  plan: ProbePlan,
  schedules: ProbeSchedule[],
  arrivals: Map<string, number[]>,
  { from, to, takenAt }: { from: number; to: number; takenAt: number },
): ProbeDrift {
  const drift: ProbeDrift = { due: 0, received: 0, lateMs: [], driftPercent: [], early: 0 };
  for (const { webhookId, since } of schedules) {
    const times = arrivals.get(webhookId) ?? [];
    let previous = since;
    for (let n = 0; ; n++) {
      const dueAt = probeDueAt(plan, since, n);
      if (dueAt === null || dueAt > to) break;
      const interval = dueAt - previous;
      previous = dueAt;
      if (dueAt < from) continue;
      drift.due++;
      const received = times[n] !== undefined;
      const at = times[n] ?? takenAt;
      if (received) drift.received++;
      drift.lateMs.push(at - dueAt);
      drift.driftPercent.push(((at - dueAt) / interval) * 100);
      if (at < dueAt) drift.early++;
    }
  }
  return drift;
}
