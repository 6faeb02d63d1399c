import { ActivityFailure, TemporalFailure, makeContinueAsNewFunc, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';
import { cancelRecoverySignal, recoveryProgressQuery } from '../src/contract/messages';
import type { RecoveryInput, RecoveryProgress, RecoverySend, RecoverySendOutcome, RecoveryState } from '../src/contract/payloads';
import { ATTEMPTS_OF_UNCLAIMED_SEND, RECOVERY_FAILED_SENDS_TO_STOP, SENDS_PER_RUN, SLOTS_PER_SECOND } from '../src/contract/rules';
import { newDeliveryId } from './delivery-ids';
import { oneAttempt } from './one-attempt';

/**
 * The sends go in slots of a tenth of a second, the sends of a slot side by side: slot n gets
 * floor((n + 1) * rate / 10) - floor(n * rate / 10) of them, so that any ten slots in a row
 * hold exactly `rate` sends (up to 10 a second, one at a time). Each send waits for its slot's
 * time in its own activity, not on a Temporal timer, which fires up to a second late on a
 * server with the default `history.timerProcessorMaxTimeShift`. A slot is due a tenth of a
 * second after the one before was due (no drift), never in the past (no catch-up after a
 * delay), and never sooner than a second after the last send of the slot ten before began:
 * whatever the delays, no second holds more sends than the rate.
 */
const SLOT_MS = 1000 / SLOTS_PER_SECOND;

const retry = { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' };
const { settleLostRecoverySend, settleRecovery } = proxyActivities<ActivityTypes>({ startToCloseTimeout: '30 seconds', retry });
const { awaitRecoveryRecorded } = proxyActivities<ActivityTypes>({
  startToCloseTimeout: '10 seconds',
  // The API's transaction commits within moments of starting this workflow, or never.
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '100 milliseconds', maximumInterval: '2 seconds' },
});

/** What one send came to, as the rules count it. */
type SendResult = 'delivered' | 'failed' | 'internal' | Extract<RecoverySendOutcome, { notSent: unknown }>;

/**
 * `recovery/{webhookId}/{recoveryId}`: sends again, oldest first, the failed and skipped event
 * deliveries of a window, fixed in PostgreSQL when the recovery started (positions
 * 1..total). Each send is a redelivery in a local activity of one attempt, claimed in
 * PostgreSQL before its POST, never counted against the webhook. At most `ratePerSecond` sends a second;
 * it stops after 5 of the receiver's failures in a row, when the webhook is paused or deleted,
 * or when cancelled. Continues-as-new every few hundred sends, carrying where it is.
 */
export async function recoverDeliveries(input: RecoveryInput): Promise<RecoveryState> {
  const { recoveryId, webhookId, total, ratePerSecond, deliveryTimeoutMs } = input;
  const sendsPerRun = input.sendsPerRun ?? Math.max(SENDS_PER_RUN, ratePerSecond);
  const start: RecoveryProgress = { next: 1, sent: 0, delivered: 0, failed: 0, failedInARow: 0, slots: 0, nextSlotAt: 0, slotsBegun: [] };
  const state: RecoveryState = { recoveryId, webhookId, total, status: 'running', stoppedReason: null, ...(input.progress ?? start) };
  let cancelled = false;
  setHandler(recoveryProgressQuery, () => state);
  setHandler(cancelRecoverySignal, () => {
    cancelled = true;
  });

  if (input.progress === undefined) await awaitRecoveryRecorded(recoveryId);
  // Local activities, in the worker that runs the workflow task, with no round trip through
  // the Temporal server each: a send is run again only when its workflow task is retried (its
  // worker was lost), and finds its item claimed. While sends follow each other, the worker
  // keeps one workflow task open, reporting it at 80% of the task time-out the API starts the
  // workflow with (RECOVERY_TASK_TIMEOUT): that bounds how late a query is answered and a
  // signal seen. A send waits at most a second (a slot ten before) for its time, within
  // the 5 s its time-out allows above the HTTP deadline.
  const { sendRecoveryItem } = oneAttempt(deliveryTimeoutMs, { local: true });

  /** One send, and when it began (undefined: it was lost, and settled). */
  async function send(position: number, notBefore: number): Promise<{ result: SendResult; begunAt?: number }> {
    // Fixed before the first attempt, so that every attempt of this item has the same id.
    const item: RecoverySend = { recoveryId, webhookId, position, deliveryId: newDeliveryId(), notBefore };
    for (let attempt = 1; ; attempt++) {
      try {
        const { begunAt, outcome } = await sendRecoveryItem(item);
        return { result: resultOf(outcome), begunAt };
      } catch (error) {
        const failure = error instanceof ActivityFailure ? error.cause : error;
        if (!(failure instanceof TemporalFailure)) throw error;
        // Ours, not the receiver's (the activity failed or timed out): what it came to is in PostgreSQL.
        const outcome = await settleLostRecoverySend(item, { giveUp: attempt >= ATTEMPTS_OF_UNCLAIMED_SEND });
        if (!('notSent' in outcome && outcome.notSent === 'unclaimed')) return { result: resultOf(outcome) };
      }
    }
  }

  function count(result: SendResult): void {
    if (typeof result === 'object') {
      if (result.notSent === 'cancelled') end('cancelled');
      else if (result.notSent !== 'unclaimed') end('stopped', result.notSent);
      return;
    }
    state.sent++;
    if (result === 'delivered') {
      state.delivered++;
      state.failedInARow = 0;
      return;
    }
    state.failed++;
    // Our own failures say nothing of the receiver.
    if (result === 'failed' && ++state.failedInARow >= RECOVERY_FAILED_SENDS_TO_STOP) end('stopped', 'receiver_failing');
  }

  /** The first reason to end is the one kept. */
  function end(status: 'cancelled' | 'stopped' | 'completed', stoppedReason: RecoveryState['stoppedReason'] = null): void {
    if (state.status !== 'running') return;
    state.status = status;
    state.stoppedReason = stoppedReason;
  }

  const slotSize = (slot: number) =>
    Math.floor(((slot + 1) * ratePerSecond) / SLOTS_PER_SECOND) - Math.floor((slot * ratePerSecond) / SLOTS_PER_SECOND);
  let sentThisRun = 0;
  while (state.status === 'running') {
    if (cancelled) end('cancelled');
    else if (state.next > total) end('completed');
    if (state.status !== 'running') break;
    if (sentThisRun >= sendsPerRun || workflowInfo().continueAsNewSuggested) {
      const { next, sent, delivered, failed, failedInARow, slots, nextSlotAt, slotsBegun } = state;
      const continueAsNew = makeContinueAsNewFunc<typeof recoverDeliveries>({ workflowTaskTimeout: workflowInfo().taskTimeoutMs });
      await continueAsNew({ ...input, progress: { next, sent, delivered, failed, failedInARow, slots, nextSlotAt, slotsBegun } });
    }
    const positions = Array.from({ length: Math.min(slotSize(state.slots), total - state.next + 1) }, (_, i) => state.next + i);
    // Not before its time; not in the past either, so that a late slot is not followed by a catch-up.
    const due = Math.max(state.nextSlotAt, Date.now());
    const sends = await Promise.all(positions.map((position) => send(position, due)));
    state.next += positions.length;
    sentThisRun += positions.length;
    state.slots++;
    state.slotsBegun = [...state.slotsBegun, Math.max(due, ...sends.flatMap(({ begunAt }) => begunAt ?? []))].slice(-SLOTS_PER_SECOND);
    const secondAfter = state.slotsBegun.length === SLOTS_PER_SECOND ? state.slotsBegun[0] + 1000 : 0;
    state.nextSlotAt = Math.max(due + SLOT_MS, secondAfter);
    // In the order of the set: the fifth failure in a row stops it, whatever comes after in its slot.
    for (const { result } of sends) count(result);
  }

  await settleRecovery(recoveryId, { status: state.status, stoppedReason: state.stoppedReason });
  return state;
}

function resultOf(outcome: RecoverySendOutcome): SendResult {
  if ('sent' in outcome) return outcome.sent.delivered ? 'delivered' : 'failed';
  if ('settled' in outcome) return outcome.settled;
  return outcome;
}
