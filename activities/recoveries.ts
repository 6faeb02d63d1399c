// The activities of `recovery/{webhookId}/{recoveryId}`: each send claimed in PostgreSQL before
// its POST and sent as a redelivery; the recovery's progress kept in its row as it goes.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { LostSendSettlement, RecoveryEnd, RecoverySend, RecoverySendOutcome, RecoverySendResult } from '../src/contract/payloads';
import { claimRecoverySend, recordRecoverySend, recoveryExists, settleRecoveryRow, settleRecoverySend } from '../src/db/recoveries';
import { eventPayload } from '../src/delivery/message';
import type { Topic } from '../src/topics';
import { INTERNAL_FAILURE, type DeliveryBookkeeping } from './delivery-bookkeeping';
import type { ActivityDependencies } from './dependencies';

/** The failure type of `awaitRecoveryRecorded` while the API's transaction has not committed. */
const RECOVERY_NOT_RECORDED = 'RecoveryNotRecorded';

export function createRecoveryActivities({ sql, logger }: ActivityDependencies, bookkeeping: DeliveryBookkeeping) {
  /**
   * What a send that did not come back came to: the outcome logged under its redelivery id, or
   * `internal` (logged as such) when its attempt was lost before that. `unclaimed`: no attempt
   * ever claimed it, so nothing was sent and it may be sent now, unless `giveUp`.
   */
  async function settleLostRecoverySend(send: RecoverySend, { giveUp }: LostSendSettlement): Promise<RecoverySendOutcome> {
    const settled = await settleRecoverySend(sql, { ...send, giveUp });
    // Its set is deleted with its webhook.
    if (settled.state === 'gone') return { notSent: 'webhook_deleted' };
    if (settled.state === 'unclaimed') return { notSent: 'unclaimed' };
    if (settled.unlogged) {
      const { item, redeliveryId } = settled;
      await bookkeeping.logAttempt({ id: redeliveryId, webhookId: send.webhookId, kind: 'redelivery', ...item }, INTERNAL_FAILURE);
    }
    return { settled: settled.outcome };
  }

  /** The send once its time has come; `begunAt`: when its POST began (or, sending nothing, when it ended). */
  async function sendItem(send: RecoverySend): Promise<RecoverySendResult> {
    const claim = await claimRecoverySend(sql, send);
    if (!claim.claimed) {
      // Claimed before by an attempt that did not come back: what it came to, counted once.
      const outcome =
        claim.because === 'attempted_before' ? await settleLostRecoverySend(send, { giveUp: false }) : { notSent: claim.because };
      return { begunAt: Date.now(), outcome };
    }
    const { item } = claim;
    const topic = item.event as Topic; // an event's log entry holds the topic it was delivered on
    const redelivery = { id: send.deliveryId, webhookId: send.webhookId, kind: 'redelivery', ...item, event: topic } as const;
    const body = eventPayload(topic, item.listId, item.cursor, item.at);
    const begunAt = Date.now();
    const { result } = await bookkeeping.send(claim.target, redelivery, body);
    await recordRecoverySend(sql, { ...send, outcome: result.delivered ? 'delivered' : 'failed' });
    return { begunAt, outcome: { sent: result } };
  }

  return {
    /**
     * The API starts a recovery's workflow inside the transaction that records it, so that no
     * recovery is recorded without its workflow: this waits for the commit (retried by the
     * workflow), and fails for good if it never comes (the API died before it).
     */
    async awaitRecoveryRecorded(recoveryId: string): Promise<void> {
      if (!(await recoveryExists(sql, recoveryId))) {
        throw ApplicationFailure.retryable(`recovery ${recoveryId} is not recorded (yet)`, RECOVERY_NOT_RECORDED);
      }
    },

    /**
     * One send of a recovery, once `notBefore` has passed (the pacing): the item at `position`
     * claimed (or found claimed, or refused), then sent as a redelivery of the logged event,
     * the same body byte for byte, signed with the current secret, logged and never counted
     * against the webhook. Like a redelivery an owner asks for, its result is what the
     * receiver answered, whatever that was.
     */
    async sendRecoveryItem(send: RecoverySend): Promise<RecoverySendResult> {
      // A timer may end a millisecond early by the wall clock: wait until the clock says so.
      for (let wait = send.notBefore - Date.now(); wait > 0; wait = send.notBefore - Date.now()) await Context.current().sleep(wait);
      return sendItem(send);
    },

    /** A send whose activity did not come back (its worker was lost). */
    settleLostRecoverySend,

    /** The recovery's end, as its workflow decided: its row says so, and its webhook may start another. */
    async settleRecovery(recoveryId: string, end: RecoveryEnd): Promise<void> {
      await settleRecoveryRow(sql, recoveryId, end);
      logger.info({ msg: 'recovery settled', recoveryId, ...end });
    },
  };
}
