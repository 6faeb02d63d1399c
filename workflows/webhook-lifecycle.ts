import {
  allHandlersFinished,
  condition,
  continueAsNew,
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
import { deleteWebhookUpdate, deliveryOutcomesSignal, lifecycleStateQuery, setStatusUpdate } from '../src/contract/messages';
import { DEFAULT_SIGNALS_PER_RUN, MAX_CONSECUTIVE_FAILURES } from '../src/contract/rules';
import type { WebhookLifecycleInput, WebhookLifecycleState } from '../src/contract/payloads';

/** Patch id (0.2.0): continue-as-new decided in a task of its own, carrying uncounted outcomes. */
const CONTINUE_AS_NEW_IN_OWN_TASK = 'continue-as-new-in-own-task';

const retry = { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' };
// Stored inside the workflow task that counted the outcomes, not in a task of its own: under
// a flood of failures this loop must keep up, and outcomes arriving meanwhile wait as one batch.
const { storeWebhookState } = proxyLocalActivities<ActivityTypes>({ startToCloseTimeout: '10 seconds', retry });
const { deleteWebhook } = proxyActivities<ActivityTypes>({ startToCloseTimeout: '10 seconds', retry });

/**
 * `webhook/{id}`: lives as long as its webhook and owns its consecutive-failure count.
 * A failed delivery adds one, a delivered one resets it; at 20 the webhook is paused and
 * later outcomes change nothing until it is reactivated. PostgreSQL mirrors the state
 * (for the API and for deciding recipients); only this loop writes it, one version at a time.
 */
export async function webhookLifecycle({
  state: initial,
  signalsPerRun = DEFAULT_SIGNALS_PER_RUN,
  uncountedOutcomes = [],
}: WebhookLifecycleInput): Promise<void> {
  const state: WebhookLifecycleState = { ...initial };
  const inbox: boolean[] = [...uncountedOutcomes];
  let signalsThisRun = 0;
  let deleted = false;
  let version = 0;
  let storedVersion = 0;
  let statusAttribute = initial.status;

  const change = (next: Partial<WebhookLifecycleState>) => {
    Object.assign(state, next);
    version++;
  };
  const stored = async () => {
    const awaited = version;
    await condition(() => storedVersion >= awaited || deleted);
  };

  setHandler(lifecycleStateQuery, () => state);
  setHandler(deliveryOutcomesSignal, ({ delivered }) => {
    signalsThisRun++;
    inbox.push(...delivered);
  });
  setHandler(
    setStatusUpdate,
    async (status) => {
      if (status === 'active') change({ status: 'active', pausedReason: null, consecutiveFailures: 0 });
      else if (state.status === 'active') change({ status: 'paused', pausedReason: 'manual' });
      await stored();
      return { ...state };
    },
    {
      validator: (status) => {
        if (status !== 'active' && status !== 'paused') throw new Error(`status must be active or paused, not ${String(status)}`);
      },
    },
  );
  setHandler(deleteWebhookUpdate, async () => {
    await deleteWebhook(state.webhookId);
    deleted = true;
  });

  const runIsLong = () => signalsThisRun >= signalsPerRun || workflowInfo().continueAsNewSuggested;

  while (!deleted) {
    await condition(() => inbox.length > 0 || version > storedVersion || deleted || runIsLong());
    if (deleted) break;
    countOutcomes(state, inbox.splice(0), change);
    if (version > storedVersion) {
      const storing = version;
      if (state.status !== statusAttribute) {
        statusAttribute = state.status;
        upsertSearchAttributes([{ key: WebhookStatusKey, value: statusAttribute }]);
      }
      await storeWebhookState({ ...state });
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
          await continueAsNew<typeof webhookLifecycle>({ state, signalsPerRun, uncountedOutcomes: inbox.splice(0) });
        }
      } else if (!deleted && inbox.length === 0 && version === storedVersion) {
        await continueAsNew<typeof webhookLifecycle>({ state, signalsPerRun });
      }
    }
  }
  await condition(allHandlersFinished);
}

function countOutcomes(state: WebhookLifecycleState, outcomes: boolean[], change: (next: Partial<WebhookLifecycleState>) => void): void {
  for (const delivered of outcomes) {
    if (!delivered) change({ failuresCounted: state.failuresCounted + 1 });
    if (state.status === 'paused') continue; // outcomes after a pause change nothing else
    if (delivered) {
      if (state.consecutiveFailures !== 0) change({ consecutiveFailures: 0 });
    } else if (state.consecutiveFailures + 1 >= MAX_CONSECUTIVE_FAILURES) {
      change({ consecutiveFailures: MAX_CONSECUTIVE_FAILURES, status: 'paused', pausedReason: 'auto_failures' });
    } else {
      change({ consecutiveFailures: state.consecutiveFailures + 1 });
    }
  }
}
