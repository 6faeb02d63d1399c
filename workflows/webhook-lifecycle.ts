import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';
import { WebhookStatusKey } from '../src/contract/search-attributes';
import {
  deleteWebhookUpdate,
  deliveryOutcomesSignal,
  lifecycleStateQuery,
  probesEndedSignal,
  removePauseSignal,
  setStatusUpdate,
  wakeToProbeSignal,
} from '../src/contract/messages';
import { DEFAULT_SIGNALS_PER_RUN, OUTCOME_SETTLE_MS } from '../src/contract/rules';
import { bulkTaskQueue, probesWorkflowId } from '../src/contract/workflows';
import type { AuditActor, TimedOutcome, WebhookLifecycleInput, WebhookLifecycleState } from '../src/contract/payloads';
import { countOutcomes, hold, takeSettled, untilFirstSettles } from './failure-count';

/** Patch id (0.2.0): continue-as-new decided in a task of its own, carrying uncounted outcomes. */
const CONTINUE_AS_NEW_IN_OWN_TASK = 'continue-as-new-in-own-task';
/** Patch id (0.7.0): a pause by failures is handed to `probes/{taskQueue}/{shard}` (probePausedWebhooks). */
const PROBE_PAUSED_WEBHOOK = 'probe-paused-webhook';
/**
 * Patch id (0.8.0): outcomes told with their end times are held OUTCOME_SETTLE_MS, then counted
 * in the order the attempts ended, not the order they arrived in.
 */
const COUNT_BY_END_TIME = 'count-by-end-time';

const retry = { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' };
// Stored inside the workflow task that counted the outcomes, not in a task of its own: under
// a flood of failures this loop must keep up, and outcomes arriving meanwhile wait as one batch.
const { storeWebhookState, handPauseToProbes } = proxyLocalActivities<ActivityTypes>({ startToCloseTimeout: '10 seconds', retry });
const { deleteWebhook } = proxyActivities<ActivityTypes>({ startToCloseTimeout: '10 seconds', retry });

/**
 * `webhook/{id}`: lives as long as its webhook and owns its consecutive-failure count.
 * A failed delivery adds one, a delivered one resets it, in the order the attempts ended: an
 * outcome is held until every outcome that ended before it has had time to arrive
 * (OUTCOME_SETTLE_MS, or the input's `outcomeSettleMs`), so outcomes told late or out of order count as if told at once. At 20
 * the webhook is paused and later outcomes change nothing until it is reactivated. A pause
 * by failures is probed by `probes/{taskQueue}/{shard}`, which this one hands it to, until a
 * probe is answered (then the store makes the notice `webhook.reachable`), time runs out, or
 * the owner reactivates or deletes the webhook.
 * PostgreSQL mirrors the state (for the API and for deciding recipients); only this loop
 * writes it, one version at a time.
 */
export async function webhookLifecycle({
  state: initial,
  signalsPerRun = DEFAULT_SIGNALS_PER_RUN,
  outcomeSettleMs = OUTCOME_SETTLE_MS,
  uncountedOutcomes = [],
  settlingOutcomes = [],
}: WebhookLifecycleInput): Promise<void> {
  const state: WebhookLifecycleState = { ...initial };
  /** Outcomes told without their times (by a release before 0.8.0): counted as they arrive. */
  const inbox: boolean[] = [...uncountedOutcomes];
  /** Outcomes told with their times, held until they settle. */
  const settling: TimedOutcome[] = [...settlingOutcomes];
  let signalsThisRun = 0;
  let deleted = false;
  let version = 0;
  let storedVersion = 0;
  let statusAttribute = initial.status;
  let wokenToProbe = false;
  let probingOff = false;
  /** Who asked, through /v3, for the latest status change not yet handed to a store: the audit log records it with the store. */
  let statusRequester: AuditActor | undefined;

  const change = (next: Partial<WebhookLifecycleState>) => {
    Object.assign(state, next);
    version++;
  };
  const stored = async () => {
    const awaited = version;
    await condition(() => storedVersion >= awaited || deleted);
  };

  const pausedByFailures = () => !deleted && state.status === 'paused' && state.pausedReason === 'auto_failures';
  const needsProbes = () => pausedByFailures() && !state.probes && !probingOff;
  const probesQueue = bulkTaskQueue(workflowInfo().taskQueue);
  /** Starts the pause's probing, unless PROBE_MAX_DAYS is 0; stops it again if the pause ended meanwhile. */
  const startProbes = async () => {
    const since = Date.now();
    if (!(await handPauseToProbes(state.webhookId, since, probesQueue))) probingOff = true;
    else if (needsProbes()) change({ probes: 'probing', probesSince: since });
    else takeBackPause(since);
  };
  /** Ends the pause's probing as the pause ends; the fields that forget it (none for a run of a release before probes). */
  const endProbes = (): Partial<WebhookLifecycleState> => {
    if (!state.probes) return {};
    if (state.probes === 'probing' && state.probesSince) takeBackPause(state.probesSince);
    return { probes: null, probesSince: null };
  };
  const takeBackPause = (since: number) => {
    // A pause whose probing has just ended by itself is not there to stop: nothing to do.
    void getExternalWorkflowHandle(probesWorkflowId(probesQueue, state.webhookId))
      .signal(removePauseSignal, { webhookId: state.webhookId, since })
      .catch(() => undefined);
  };

  setHandler(lifecycleStateQuery, () => state);
  setHandler(deliveryOutcomesSignal, ({ delivered, outcomes }) => {
    signalsThisRun++;
    if (outcomes && patched(COUNT_BY_END_TIME)) hold(settling, outcomes);
    else inbox.push(...delivered);
  });
  setHandler(wakeToProbeSignal, () => {
    wokenToProbe = true;
  });
  setHandler(probesEndedSignal, ({ since, outcome }) => {
    if (state.probes === 'probing' && state.probesSince === since) change({ probes: outcome });
  });
  setHandler(
    setStatusUpdate,
    async (status, actor) => {
      const next: Partial<WebhookLifecycleState> | null =
        status === 'active'
          ? { status: 'active', pausedReason: null, consecutiveFailures: 0, countedFrom: Date.now(), ...endProbes() }
          : state.status === 'active'
            ? { status: 'paused', pausedReason: 'manual' }
            : null;
      if (next) {
        change(next);
        statusRequester = actor;
      }
      await stored();
      return { ...state };
    },
    {
      // Typed by the Update's arguments, as the handler is; the actor needs no check.
      validator: (status, _actor) => {
        if (status !== 'active' && status !== 'paused') throw new Error(`status must be active or paused, not ${String(status)}`);
      },
    },
  );
  setHandler(deleteWebhookUpdate, async (actor) => {
    endProbes();
    await deleteWebhook(state.webhookId, actor);
    deleted = true;
  });

  const runIsLong = () => signalsThisRun >= signalsPerRun || workflowInfo().continueAsNewSuggested;

  while (!deleted) {
    // A pause by failures starts probing as it is stored; a pause made by a release before
    // probes, once the workers wake this run (wakeToProbeSignal) or it continues-as-new.
    if (needsProbes() && patched(PROBE_PAUSED_WEBHOOK)) await startProbes();
    // The first outcome held wakes the loop to wait for it to settle; later ones settle with it or after.
    const holding = settling.length > 0;
    const woken = () =>
      inbox.length > 0 || version > storedVersion || deleted || runIsLong() || wokenToProbe || (!holding && settling.length > 0);
    if (holding) await condition(woken, untilFirstSettles(settling, Date.now(), outcomeSettleMs));
    else await condition(woken);
    wokenToProbe = false;
    if (deleted) break;
    const settled = takeSettled(settling, Date.now(), outcomeSettleMs, state.countedFrom ?? undefined);
    if (settled.failuresReset > 0) change({ failuresCounted: state.failuresCounted + settled.failuresReset });
    countOutcomes(state, [...inbox.splice(0), ...settled.outcomes], change);
    if (version > storedVersion) {
      const storing = version;
      if (state.status !== statusAttribute) {
        statusAttribute = state.status;
        upsertSearchAttributes([{ key: WebhookStatusKey, value: statusAttribute }]);
      }
      const requester = statusRequester;
      statusRequester = undefined;
      await storeWebhookState({ ...state }, requester);
      storedVersion = storing;
    }
    if (runIsLong() && inbox.length === 0 && version === storedVersion) {
      await condition(allHandlersFinished);
      if (patched(CONTINUE_AS_NEW_IN_OWN_TASK)) {
        // Decided in a workflow task of its own, which holds every outcome that reached this
        // run before it: when Temporal refuses a continue-as-new because a signal came in
        // meanwhile, the retry replays the task that stored the state without that signal,
        // and a decision taken there would leave it behind. Outcomes not yet counted go along.
        await sleep(1);
        if (!deleted && version === storedVersion && allHandlersFinished()) {
          const carried = settling.length > 0 ? { settlingOutcomes: settling.splice(0) } : {};
          const uncountedOutcomes = inbox.splice(0);
          await continueAsNew<typeof webhookLifecycle>({ state, signalsPerRun, outcomeSettleMs, uncountedOutcomes, ...carried });
        }
      } else if (!deleted && inbox.length === 0 && version === storedVersion) {
        await continueAsNew<typeof webhookLifecycle>({ state, signalsPerRun });
      }
    }
  }
  await condition(allHandlersFinished);
}
