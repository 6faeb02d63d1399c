import { allHandlersFinished, condition, continueAsNew, getExternalWorkflowHandle, setHandler, workflowInfo } from '@temporalio/workflow';
import { addPauseSignal, pausesQuery, probesEndedSignal, removePauseSignal } from '../src/contract/messages';
import type { PauseProbing, ProbesEnded, ProbesInput } from '../src/contract/payloads';
import {
  PROBES_PER_ACTIVITY,
  PROBES_RUN_EVENTS,
  packProbes,
  probeDueAt,
  probeGatherMs,
  probeSpreadMs,
  unpackProbes,
} from '../src/contract/probe-schedule';
import { lifecycleWorkflowId } from '../src/contract/workflows';
import { oneAttempt } from './one-attempt';

/**
 * `probes/{taskQueue}/{shard}`: the probes of every webhook of its shard paused by failures, on
 * the bulk task queue. `webhook/{id}` hands it a pause as the pause begins (addPauseSignal)
 * and takes it back if the owner reactivates or deletes the webhook (removePauseSignal). At each
 * delay of PROBE_INTERVALS after its pause, a webhook gets a signed ping, logged as a probe and
 * never counted, until one is answered with a 2xx or PROBE_MAX_DAYS have passed; then this
 * workflow tells `webhook/{id}` which, and its store makes the `webhook.reachable` notice. It
 * never reactivates anything.
 *
 * One workflow for many pauses, rather than one each: a wake sends every probe due by then in
 * one workflow task, and the workflow stays in the worker's cache between wakes. The activity
 * spreads a wake's probes over part of the time to the next wake (PROBE_SPREAD_SHARE).
 */
export async function probePausedWebhooks(input: ProbesInput): Promise<void> {
  const { eventsPerRun = PROBES_RUN_EVENTS } = input;
  const pauses = new Map(unpackProbes(input).map((pause) => [pause.webhookId, pause]));
  /** Webhooks whose probe is under way: none is sent a second one before the first is answered. */
  const sending = new Set<string>();
  /** Activities and messages to `webhook/{id}` under way: a continue-as-new waits for them. */
  let underWay = 0;
  let lastWake = -Infinity;
  /**
   * The next wake as last worked out; undefined once the pauses, the probes under way or the
   * last wake changed. The SDK checks a condition after every job and microtask of an
   * activation, and working it out reads every pause.
   */
  let knownWake: number | null | undefined;
  const forgetWake = () => (knownWake = undefined);

  setHandler(addPauseSignal, (pause) => {
    // A start tried again repeats its signal; a later pause of the same webhook replaces the one it knew.
    const known = pauses.get(pause.webhookId);
    if (!known || known.since < pause.since) {
      pauses.set(pause.webhookId, { ...pause, sent: 0 });
      forgetWake();
    }
  });
  setHandler(removePauseSignal, ({ webhookId, since }) => {
    if (pauses.get(webhookId)?.since === since) {
      pauses.delete(webhookId);
      forgetWake();
    }
  });
  setHandler(pausesQuery, () => [...pauses.values()]);

  const waiting = () => [...pauses.values()].filter((pause) => !sending.has(pause.webhookId));
  const plans = () => new Set([...pauses.values()].map((pause) => pause.plan));
  /** When the pause's next probe is due; null: after PROBE_MAX_DAYS, so never. */
  const dueAt = (pause: PauseProbing) => probeDueAt(pause.plan, pause.since, pause.sent);
  /** When the next wake is due; null: no probe to wait for. */
  const nextWake = (): number | null => {
    if (knownWake !== undefined) return knownWake;
    const dues = waiting().map((pause) => dueAt(pause) ?? -Infinity);
    if (dues.length === 0) return (knownWake = null);
    return (knownWake = Math.max(Math.min(...dues), lastWake + probeGatherMs(plans())));
  };
  const runIsLong = () => workflowInfo().historyLength >= eventsPerRun || workflowInfo().continueAsNewSuggested;

  const track = async (work: Promise<void>) => {
    underWay++;
    await work;
    underWay--;
  };
  const end = (pause: PauseProbing, outcome: ProbesEnded['outcome']) => {
    pauses.delete(pause.webhookId);
    forgetWake();
    void track(tellLifecycle(pause.webhookId, { since: pause.since, outcome }));
  };
  const probe = async (batch: PauseProbing[], spreadMs: number) => {
    for (const pause of batch) sending.add(pause.webhookId);
    forgetWake();
    const { probeWebhooks } = oneAttempt(spreadMs + Math.max(...batch.map((pause) => pause.plan.deliveryTimeoutMs)));
    // A batch lost on our side (a worker gone mid-way) is as many probes that were not answered.
    const answered = await probeWebhooks(
      batch.map((pause) => pause.webhookId),
      spreadMs,
    ).catch(() => batch.map(() => false));
    forgetWake();
    batch.forEach((probed, i) => {
      sending.delete(probed.webhookId);
      const pause = pauses.get(probed.webhookId);
      if (pause?.since !== probed.since) return; // stopped meanwhile
      pause.sent++;
      if (answered[i]) end(pause, 'reachable');
    });
  };

  for (;;) {
    // A pause whose next probe would come after PROBE_MAX_DAYS is over.
    for (const pause of waiting()) if (dueAt(pause) === null) end(pause, 'expired');
    if (runIsLong()) {
      await condition(() => underWay === 0 && allHandlersFinished());
      await continueAsNew<typeof probePausedWebhooks>({ ...packProbes(pauses.values()), eventsPerRun });
    }
    const wakeAt = nextWake();
    if (wakeAt === null || wakeAt > Date.now()) {
      // Woken early by a pause due sooner, a probe answered, or a run grown long.
      const sooner = () => {
        const next = nextWake();
        return (next !== null && (wakeAt === null || next < wakeAt)) || runIsLong();
      };
      await (wakeAt === null ? condition(sooner) : condition(sooner, wakeAt - Date.now()));
      continue;
    }
    lastWake = Date.now();
    forgetWake();
    // The longest waiting leave first in the spread: a probe's wait and its place in it add up to about the gather time at most.
    const due = waiting()
      .filter((pause) => dueAt(pause)! <= lastWake)
      .sort((a, b) => dueAt(a)! - dueAt(b)!);
    const spreadMs = probeSpreadMs(plans());
    for (let first = 0; first < due.length; first += PROBES_PER_ACTIVITY) {
      void track(probe(due.slice(first, first + PROBES_PER_ACTIVITY), spreadMs));
    }
  }
}

async function tellLifecycle(webhookId: string, ended: ProbesEnded): Promise<void> {
  // A webhook deleted meanwhile has no workflow left to tell, and nothing to be told.
  await getExternalWorkflowHandle(lifecycleWorkflowId(webhookId))
    .signal(probesEndedSignal, ended)
    .catch(() => undefined);
}
