// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). The messages of
// `webhook/{id}`, `probes/{taskQueue}/{shard}` and `recovery/{webhookId}/{recoveryId}`: the API and the delivery
// activities send them, the workflows handle them. Their names are kept in histories: never
// rename one.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AuditActor,
  DeliveryOutcomes,
  PauseAdded,
  PauseProbing,
  PauseRemoved,
  ProbesEnded,
  RecoveryState,
  WebhookLifecycleState,
  WebhookStatus,
} from './payloads';

export const lifecycleStateQuery = defineQuery<WebhookLifecycleState>('state');
/** Outcomes of event deliveries with the times they ended (a worker batches those of one webhook: activities/delivery-bookkeeping.ts). */
export const deliveryOutcomesSignal = defineSignal<[DeliveryOutcomes]>('deliveryOutcomes');
/**
 * PATCH status: `active` reactivates (count back to 0), `paused` pauses by hand. Answers once
 * stored. The actor is recorded in the audit log with the store; an API of the release before
 * sent none (undefined).
 */
export const setStatusUpdate = defineUpdate<WebhookLifecycleState, [status: WebhookStatus, actor: AuditActor | undefined]>('setStatus');
/** DELETE: removes the webhook and ends this workflow; the actor as for setStatus. */
export const deleteWebhookUpdate = defineUpdate<void, [actor: AuditActor | undefined]>('deleteWebhook');
/**
 * Sent by the workers as they start to each webhook paused by failures whose pause has no
 * probes yet (one a release before probes made): it begins probing. A webhook that probes
 * already, or is not paused by failures, ignores it.
 */
export const wakeToProbeSignal = defineSignal('wakeToProbe');
/** From `probes/{taskQueue}/{shard}`: a pause's probing ended by itself, answered or out of time. */
export const probesEndedSignal = defineSignal<[ProbesEnded]>('probesEnded');

/** From `webhook/{id}` (through an activity that starts the workflow if need be): probe this pause. A repeat is ignored. */
export const addPauseSignal = defineSignal<[PauseAdded]>('addPause');
/** From `webhook/{id}`: this pause ended (reactivated or deleted); its probes stop. */
export const removePauseSignal = defineSignal<[PauseRemoved]>('removePause');
/** The pauses `probes/{taskQueue}/{shard}` probes, for operators (the Temporal Web UI's Queries) and tests. */
export const pausesQuery = defineQuery<PauseProbing[]>('pauses');

/** A recovery's progress, as its workflow counts it (the API reads the same from PostgreSQL). */
export const recoveryProgressQuery = defineQuery<RecoveryState>('progress');
/** DELETE …/recoveries/{id}: no further send starts; those under way finish. */
export const cancelRecoverySignal = defineSignal('cancel');
