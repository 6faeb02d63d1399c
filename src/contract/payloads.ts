// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). Every value here travels
// through Temporal as a workflow's or an activity's input or result, and is kept in
// histories: a running workflow and the workers of the release before must still read it.
// Add optional fields only; never rename, remove or retype one. No signing secret, ever.
import type { AuditActor, DeliveryResult, PausedReason, RecoveryStatus, RecoveryStoppedReason, Webhook, WebhookStatus } from '../objects';
import type { Topic } from '../topics';

/**
 * The API's own objects that a workflow carries: a registration returns the webhook, a ping its
 * result; a change asked through /v3 carries its AuditActor, for the activity that makes the
 * change to record it in the audit log in the same transaction (absent: a request of the
 * release before it).
 */
export type {
  AuditActor,
  DeliveryResult,
  DeliveryError,
  Webhook,
  WebhookStatus,
  PausedReason,
  RecoveryStatus,
  RecoveryStoppedReason,
} from '../objects';
export type { Topic } from '../topics';

/** Input of the registration workflow: the validated, normalised request, already begun (see beginRegistration). */
export interface RegistrationInput {
  registrationId: string;
  /** The webhook's id: the existing one's when the URL is registered again. */
  webhookId: string;
  accountId: string;
  url: string;
  events: Topic[];
  listIds: string[];
  /** The HTTP deadline of the ping; the activity's own timeout sits a little above it. */
  deliveryTimeoutMs: number;
  /** Who registers it: `completeRegistration` records webhook.created or webhook.updated. */
  actor?: AuditActor;
}

/** Input of `pingRegistrationUrl`: where the registration's one ping goes (its secret is read by registration id). */
export interface RegistrationPing {
  registrationId: string;
  webhookId: string;
  url: string;
}

/**
 * The webhook a registration stored. `relay`, `health`, `auth` and `clientCertificate` came later
 * (a registration never makes a relay session; its health is as it was when stored; `auth` and
 * `clientCertificate` name credentials, never hold one): results recorded before lack them.
 */
export type RegisteredWebhook = Omit<Webhook, 'relay' | 'health' | 'auth' | 'clientCertificate'> &
  Partial<Pick<Webhook, 'relay' | 'health' | 'auth' | 'clientCertificate'>>;

export type RegistrationResult =
  | { outcome: 'created' | 'updated'; webhook: RegisteredWebhook }
  | { outcome: 'unreachable'; ping: DeliveryResult }
  | { outcome: 'limit_exceeded' }
  | { outcome: 'invalid_list_ids'; invalidListIds: string[] };

/** State of the per-webhook workflow `webhook/{id}`, also its query answer. */
export interface WebhookLifecycleState {
  webhookId: string;
  accountId: string;
  status: WebhookStatus;
  pausedReason: PausedReason | null;
  consecutiveFailures: number;
  /**
   * Every failure this workflow has been told of, across its runs. Mirrored beside the
   * count, it lets a delivery tell whether its success still has a failure to reset.
   */
  failuresCounted: number;
  /**
   * Where the current pause by failures stands with its probes; null or absent when there are
   * none: active, paused by hand, probing off, or a pause that a release before probes made
   * and the workers have not woken yet (0.7.0).
   */
  probes?: ProbeState | null;
  /** When the current pause's probing began (workflow time, ms since the epoch): its workflow's id says it. */
  probesSince?: number | null;
  /**
   * When the owner last reactivated the webhook, setting the count to 0 (workflow time, ms since
   * the epoch; absent: never since 0.8.0). Outcomes held then that ended before it are failures
   * told, never part of the new count.
   */
  countedFrom?: number | null;
}

/** A pause's probing: under way, ended by a probe answered with a 2xx, or ended by PROBE_MAX_DAYS. */
export type ProbeState = 'probing' | 'reachable' | 'expired';

/** Input of `webhook/{id}`, carried across continue-as-new. */
export interface WebhookLifecycleInput {
  state: WebhookLifecycleState;
  /** Continue-as-new after this many signals (Temporal caps a run at 10,000); tests lower it. */
  signalsPerRun?: number;
  /** How long outcomes are held before they count (OUTCOME_SETTLE_MS when absent): the worker's configuration as the webhook was registered. */
  outcomeSettleMs?: number;
  /** Outcomes without their times that reached the previous run after its last count; counted first. */
  uncountedOutcomes?: boolean[];
  /** Outcomes with their times that the previous run held, not yet settled (0.8.0). */
  settlingOutcomes?: TimedOutcome[];
}

/** PROBE_INTERVALS and PROBE_MAX_DAYS as a pause's probes follow them, read once as the probing begins. */
export interface ProbePlan {
  /** The wait before each probe, after the one before it (the first: after the pause); the last repeats. */
  intervalsMs: number[];
  /** No probe later than this after the pause. */
  forMs: number;
  /** The HTTP deadline of a probe; its activity's time-out sits a little above it. */
  deliveryTimeoutMs: number;
}

/** One pause's probing, as `probes/{taskQueue}/{shard}` keeps it. */
export interface PauseProbing {
  webhookId: string;
  /** When the pause's probing began (workflow time of `webhook/{id}`, ms since the epoch): the schedule counts from it, and it tells a pause from the next one. */
  since: number;
  plan: ProbePlan;
  /** Probes sent so far. */
  sent: number;
}

/** What `webhook/{id}` hands `probes/{taskQueue}/{shard}` as a pause by failures begins to be probed. */
export type PauseAdded = Omit<PauseProbing, 'sent'>;

/** What `webhook/{id}` tells `probes/{taskQueue}/{shard}` as a pause ends (reactivated or deleted). */
export type PauseRemoved = Pick<PauseProbing, 'webhookId' | 'since'>;

/**
 * Input of `probes/{taskQueue}/{shard}`, carried across continue-as-new: the pauses it probes,
 * each naming its plan by index in `plans`, so that thousands of pauses under the same
 * PROBE_INTERVALS carry that plan once.
 */
export interface ProbesInput {
  plans: ProbePlan[];
  pauses: (Omit<PauseProbing, 'plan'> & { plan: number })[];
  /** Continue-as-new once the history holds this many events (PROBES_RUN_EVENTS); tests lower it. */
  eventsPerRun?: number;
}

/** What `probes/{taskQueue}/{shard}` tells `webhook/{id}` as a pause's probing ends by itself. */
export interface ProbesEnded {
  since: number;
  outcome: Exclude<ProbeState, 'probing'>;
}

/**
 * Outcomes of event deliveries to one webhook; `internal` ones left out. `delivered` in the
 * order the attempts ended (all a release before 0.8.0 reads); `outcomes` the same with each
 * one's end time, which `webhook/{id}` counts by (absent: sent by a release before 0.8.0).
 */
export interface DeliveryOutcomes {
  delivered: boolean[];
  outcomes?: TimedOutcome[];
}

/** An event delivery's outcome and when it was known: the end of its POST. */
export interface TimedOutcome {
  delivered: boolean;
  /** When the POST's outcome was known, ms since the epoch (the worker's clock): the log's `attemptedAt`. */
  endedAt: number;
  /** The delivery it is the outcome of; absent for a success read from the log (`lastDeliveredAt`) rather than attempted by the teller. */
  deliveryId?: string;
}

/** A recorded write: what its event bodies say. */
export interface ListWrite {
  listId: string;
  writeId: string;
  cursor: number;
  /** ISO 8601 UTC with milliseconds. */
  at: string;
  topics: Topic[];
}

/** What an event body says of its write. */
export type ListEvent = Pick<ListWrite, 'listId' | 'cursor' | 'at'>;

/** A webhook a write goes to, and the topics of the write it subscribes to. */
export interface Recipient {
  webhookId: string;
  topics: Topic[];
  /**
   * The delivery id of each topic, in the same order, as the event feed recorded them with the
   * write; absent for a write recorded before the feed, whose workflow makes them.
   */
  deliveryIds?: string[];
}

/** Input of `list-write/{listId}/{writeId}`: the write and its recipients, fixed when it was accepted. */
export interface ListWriteDeliveries {
  write: ListWrite;
  recipients: Recipient[];
  /** The HTTP deadline of each delivery; the activity's own timeout sits a little above it. */
  deliveryTimeoutMs: number;
  /** A write with more deliveries is delivered by child workflows of this many each; absent (before 0.2.0): 500. */
  deliveriesPerBatch?: number;
}

/** Input of `list-write/{listId}/{writeId}/batch/{n}`: one batch of a large write. */
export interface ListWriteBatch {
  event: ListEvent;
  deliveries: PlannedDelivery[];
  deliveryTimeoutMs: number;
}

/** One delivery of a write: its log id is fixed before it is attempted. */
export interface PlannedDelivery {
  deliveryId: string;
  webhookId: string;
  topic: Topic;
}

/** One planned delivery and the event it carries: the input of `deliverEvent` and `recordInternalFailure`. */
export interface EventDelivery {
  delivery: PlannedDelivery;
  event: ListEvent;
}

/** What a delivery attempt came to: `skipped` when the webhook was paused or deleted since the write was accepted. */
export type EventDeliveryOutcome = DeliveryResult | { skipped: true };

/** Input of `ping/{webhookId}/{pingId}`. */
export interface PingRequest {
  webhookId: string;
  deliveryTimeoutMs: number;
  /** Who asks: `sendPing` records webhook.pinged as it logs the ping. */
  actor?: AuditActor;
}

/**
 * A logged event sent again, its body rebuilt byte for byte from the log, under a new
 * delivery id.
 */
export interface Redelivery {
  webhookId: string;
  deliveryId: string;
  /** The logged delivery (or redelivery) it repeats. */
  redeliveryOf: string;
  topic: Topic;
  event: ListEvent;
  /** Who asks: `redeliverEvent` records delivery.redelivered as it logs the redelivery. */
  actor?: AuditActor;
}

/** Input of `redelivery/{webhookId}/{deliveryId}`. */
export interface RedeliveryRequest {
  redelivery: Redelivery;
  deliveryTimeoutMs: number;
}

/**
 * A test event an owner asked for: one delivery of `topic` whose body no write made (cursor
 * 0), under a delivery id fixed by the API.
 */
export interface TestEvent {
  webhookId: string;
  deliveryId: string;
  topic: Topic;
  event: ListEvent;
  /** Who asks: `deliverTestEvent` records webhook.test_event_sent as it logs the test event. */
  actor?: AuditActor;
}

/** Input of `test-event/{webhookId}/{deliveryId}`. */
export interface TestEventRequest {
  testEvent: TestEvent;
  deliveryTimeoutMs: number;
}

/** Input of `prune-records/{taskQueue}/…`, started by its schedule. */
export interface PruneRequest {
  retentionDays: number;
}

/** How many rows a pruning deleted: the result of `pruneRecords`, shown in the Web UI. */
export interface Pruned {
  listWrites: number;
  registrations: number;
  deliveryClaims: number;
  /** Absent before notices existed. */
  notices?: number;
  /** Finished recoveries (absent before recoveries existed). */
  recoveries?: number;
  /** Days of the fair-use meter, one row per account and UTC day (absent before the meter was pruned). */
  accountUsage?: number;
  /** Hours of the webhooks' health, one row per webhook and UTC hour (absent before webhooks had health). */
  webhookHealthHours?: number;
  /** Entries of the audit log (absent before it existed). */
  auditLog?: number;
  /** Items of the webhooks' event feeds (absent before the feed existed). */
  feedItems?: number;
}

/** Input of `notice/{noticeId}`: the notice to mail, by id alone (its address is read when it is sent). */
export interface NoticeMailRequest {
  noticeId: string;
}

/**
 * What became of a notice's mail, the result of `notice/{noticeId}`: sent; or not sent, since
 * the account was over its hourly cap, has no notificationEmail, the worker has no SMTP_URL,
 * or the notice is gone (pruned).
 */
export type NoticeMailOutcome = 'sent' | 'capped' | 'no_address' | 'not_configured' | 'gone';

/**
 * Input of `recovery/{webhookId}/{recoveryId}`. Its set is fixed in PostgreSQL when it starts
 * (`recovery_items`, positions 1..total), so no delivery travels through Temporal.
 */
export interface RecoveryInput {
  recoveryId: string;
  webhookId: string;
  total: number;
  /** RECOVERY_RATE_PER_SECOND when the recovery started. */
  ratePerSecond: number;
  /** The HTTP deadline of each send; the activity's own timeout sits a little above it. */
  deliveryTimeoutMs: number;
  /** Where the previous run left off (continue-as-new); absent on the first run. */
  progress?: RecoveryProgress;
  /** Continue-as-new after this many sends; tests lower it. */
  sendsPerRun?: number;
}

/** How far a recovery has got, carried across continue-as-new. */
export interface RecoveryProgress {
  /** The position of the next send (1-based). */
  next: number;
  sent: number;
  delivered: number;
  failed: number;
  /** The receiver's failures since its last 2xx (our own, `internal`, left out). */
  failedInARow: number;
  /** Slots begun: the sends go in slots of a tenth of a second. */
  slots: number;
  /** Epoch ms before which the next slot's sends may not begin. */
  nextSlotAt: number;
  /** When the last send of each of the latest slots (up to 10: a second's worth) began, oldest first. */
  slotsBegun: number[];
}

/** A recovery as its workflow sees it: the `progress` query's answer, and the workflow's result. */
export interface RecoveryState extends RecoveryProgress {
  recoveryId: string;
  webhookId: string;
  total: number;
  status: RecoveryStatus;
  stoppedReason: RecoveryStoppedReason | null;
}

/** How a recovery ended, as its workflow decided: the input of `settleRecovery`. */
export interface RecoveryEnd {
  status: RecoveryStatus;
  stoppedReason: RecoveryStoppedReason | null;
}

/** One send of a recovery: the item at `position` of its set, under the redelivery id fixed for it. */
export interface RecoverySend {
  recoveryId: string;
  webhookId: string;
  position: number;
  deliveryId: string;
  /** The pacing: the send begins no sooner than this (epoch ms, the sender's clock). */
  notBefore: number;
}

/** What a send of a recovery came to, and when it began (the next group of sends is paced from it). */
export interface RecoverySendResult {
  /** Epoch ms, the sender's clock: when its POST began (after `notBefore`), or, sending nothing, when it ended. */
  begunAt: number;
  outcome: RecoverySendOutcome;
}

/** Whether `settleLostRecoverySend` gives up on a send that no attempt claimed, rather than letting it be sent again. */
export interface LostSendSettlement {
  giveUp: boolean;
}

/**
 * `sent`: what the receiver answered. `settled`: an earlier attempt of this item had claimed
 * it, and this is the outcome recorded for it. `notSent`: nothing was sent, because the
 * webhook is paused or deleted, the recovery was cancelled, or (`unclaimed`, for a lost send
 * only) no attempt ever claimed the item.
 */
export type RecoverySendOutcome =
  | { sent: DeliveryResult }
  | { settled: 'delivered' | 'failed' | 'internal' }
  | { notSent: 'webhook_paused' | 'webhook_deleted' | 'cancelled' | 'unclaimed' };

/**
 * Input of `reencrypt-secrets/{taskQueue}/{keyId}` (`reencryptSecrets`): the id of the key (never the key)
 * that every stored signing secret is to be sealed under, and, across continue-as-new, how many
 * its runs before re-sealed.
 */
export interface ReencryptionInput {
  keyId: string;
  resealed?: number;
  /** Batches a run makes before it continues-as-new; default RESEAL_BATCHES_PER_RUN (the recorder makes it small). */
  batchesPerRun?: number;
}

/** What one `resealBatch` did, in the history batch by batch: re-sealed, and how many remain under other keys. */
export interface ResealedBatch {
  resealed: number;
  remaining: number;
}

/** The result of `reencryptSecrets`: every stored secret is sealed under `keyId`, `resealed` of them by it. */
export interface Reencryption {
  keyId: string;
  resealed: number;
}
