import { ActivityFailure, TemporalFailure, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { cancelRecoverySignal, recoveryProgressQuery } from '../src/contract/messages';
import type { RecoveryInput, RecoveryProgress, RecoverySend, RecoverySendOutcome, RecoveryState } from '../src/contract/payloads';
import { RECOVERY_FAILED_SENDS_TO_STOP } from '../src/contract/rules';
import { newDeliveryId } from './delivery-ids';
import { oneAttempt } from './one-attempt';

/**
 * The sends go in groups, this many a second at most: a group's sends run side by side, and
 * the next group begins a group's spacing after the last send of the one before began. Each
 * send waits for its time in its own activity, not on a Temporal timer, which fires up to a
 * second late on a server with the default `history.timerProcessorMaxTimeShift`; and the
 * spacing is taken from when the sends really began, so that a late group is never followed
 * by an early one.
 */
const GROUPS_PER_SECOND = 10;

/**
 * About four history events per send (three for its activity, a share of the workflow
 * tasks): a run of 500 sends stays near 2,000 events, far below Temporal's 51,200, and a
 * worker that lost it from its cache replays it in a second or two. A run holds at least a
 * second of sends, though: Temporal delays a run that continues-as-new sooner than that
 * (`history.continueAsNewMinInterval`, 1 s).
 */
const SENDS_PER_RUN = 500;

/** A send lost before any attempt claimed its item (nothing was sent) is attempted at most this often. */
const ATTEMPTS_OF_UNCLAIMED_SEND = 3;

const retry = { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' };
const { settleLostRecoverySend, settleRecovery } = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry });
const { awaitRecoveryRecorded } = proxyActivities<Activities>({
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
 * 1..total). Each send is a redelivery in an activity of one attempt, claimed in PostgreSQL
 * before its POST, never counted against the webhook. At most `ratePerSecond` sends a second;
 * it stops after 5 of the receiver's failures in a row, when the webhook is paused or deleted,
 * or when cancelled. Continues-as-new every few hundred sends, carrying where it is.
 */
export async function recoverDeliveries(input: RecoveryInput): Promise<RecoveryState> {
  const { recoveryId, webhookId, total, ratePerSecond, deliveryTimeoutMs } = input;
  const sendsPerRun = input.sendsPerRun ?? Math.max(SENDS_PER_RUN, ratePerSecond);
  const start: RecoveryProgress = { next: 1, sent: 0, delivered: 0, failed: 0, failedInARow: 0, nextGroupAt: 0 };
  const state: RecoveryState = { recoveryId, webhookId, total, status: 'running', stoppedReason: null, ...(input.progress ?? start) };
  let cancelled = false;
  setHandler(recoveryProgressQuery, () => state);
  setHandler(cancelRecoverySignal, () => {
    cancelled = true;
  });

  if (input.progress === undefined) await awaitRecoveryRecorded(recoveryId);
  // A send waits at most a group's spacing (up to a second) for its time: within the 5 s above the HTTP deadline.
  const { sendRecoveryItem } = oneAttempt(deliveryTimeoutMs);

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
        // Ours, not the receiver's (a lost worker: the activity timed out): what it came to is in PostgreSQL.
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

  const groupSize = Math.ceil(ratePerSecond / GROUPS_PER_SECOND);
  const groupSpacingMs = (groupSize * 1000) / ratePerSecond;
  let sentThisRun = 0;
  while (state.status === 'running') {
    if (cancelled) end('cancelled');
    else if (state.next > total) end('completed');
    if (state.status !== 'running') break;
    if (sentThisRun >= sendsPerRun || workflowInfo().continueAsNewSuggested) {
      const { next, sent, delivered, failed, failedInARow, nextGroupAt } = state;
      await continueAsNew<typeof recoverDeliveries>({ ...input, progress: { next, sent, delivered, failed, failedInARow, nextGroupAt } });
    }
    const positions = Array.from({ length: Math.min(groupSize, total - state.next + 1) }, (_, i) => state.next + i);
    const sends = await Promise.all(positions.map((position) => send(position, state.nextGroupAt)));
    state.next += positions.length;
    sentThisRun += positions.length;
    const begun = sends.flatMap(({ begunAt }) => begunAt ?? []);
    state.nextGroupAt = (begun.length > 0 ? Math.max(...begun) : Date.now()) + groupSpacingMs;
    // In the order of the set: the fifth failure in a row stops it, whatever comes after in its group.
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
