// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). Every activity a workflow
// schedules, by the name its histories record, with its input and result: a running workflow
// and the workers of the release before must still find each by that name and read what it
// takes and gives. Workflows schedule them through this interface (never the activities'
// code); the factory in activities/ implements it (test/activities/contract.test.ts). Rename
// or retype one only behind patched() in the workflows that schedule it. Three carry the name
// of what schedules them (the workflow types redeliverEvent and pruneRecords, the Update
// deleteWebhook): releases before recorded both names, so both stay.
import type {
  AuditActor,
  DeliveryResult,
  EventDelivery,
  EventDeliveryOutcome,
  LostSendSettlement,
  NoticeMailOutcome,
  Pruned,
  RecoveryEnd,
  RecoverySend,
  RecoverySendOutcome,
  RecoverySendResult,
  Redelivery,
  RegistrationInput,
  RegistrationPing,
  RegistrationResult,
  ResealedBatch,
  TestEvent,
  WebhookLifecycleState,
} from './payloads';

export interface ActivityTypes {
  // registerWebhook
  pingRegistrationUrl: (ping: RegistrationPing) => Promise<DeliveryResult>;
  abandonRegistration: (registrationId: string) => Promise<void>;
  completeRegistration: (input: RegistrationInput) => Promise<RegistrationResult>;

  // deliverListWrite and deliverListWriteBatch; pingWebhook; redeliverEvent; sendTestEvent
  deliverEvent: (attempt: EventDelivery) => Promise<EventDeliveryOutcome>;
  recordInternalFailure: (attempt: EventDelivery) => Promise<void>;
  /** `actor`: who asked, recorded in the audit log with the ping's log entry (absent: a ping of the release before). */
  sendPing: (webhookId: string, actor?: AuditActor) => Promise<DeliveryResult>;
  redeliverEvent: (redelivery: Redelivery) => Promise<DeliveryResult>;
  deliverTestEvent: (testEvent: TestEvent) => Promise<DeliveryResult>;

  // webhookLifecycle
  /** `requester`: who asked, through /v3, for the status change this store holds, if one does. */
  storeWebhookState: (state: WebhookLifecycleState, requester?: AuditActor) => Promise<void>;
  deleteWebhook: (webhookId: string, actor?: AuditActor) => Promise<void>;
  /**
   * Hands the pause that began at `since` to `probes/{taskQueue}/{shard}` of `taskQueue`
   * (starting it if need be), with PROBE_INTERVALS and PROBE_MAX_DAYS as they are now; false:
   * probing is off (PROBE_MAX_DAYS=0).
   */
  handPauseToProbes: (webhookId: string, since: number, taskQueue: string) => Promise<boolean>;

  // probePausedWebhooks
  /** Whether each webhook answered its probe with a 2xx, in order; the probes leave spread over `spreadMs` (absent: at once). */
  probeWebhooks: (webhookIds: string[], spreadMs?: number) => Promise<boolean[]>;

  // recoverDeliveries
  awaitRecoveryRecorded: (recoveryId: string) => Promise<void>;
  sendRecoveryItem: (send: RecoverySend) => Promise<RecoverySendResult>;
  settleLostRecoverySend: (send: RecoverySend, settlement: LostSendSettlement) => Promise<RecoverySendOutcome>;
  settleRecovery: (recoveryId: string, end: RecoveryEnd) => Promise<void>;

  // pruneRecords
  pruneRecords: (retentionDays: number) => Promise<Pruned>;

  // mailNotice
  sendNoticeMail: (noticeId: string) => Promise<NoticeMailOutcome>;

  // reencryptSecrets
  /** One batch: secrets sealed under other keys sealed again under `keyId`, which must be this worker's first key. */
  resealBatch: (keyId: string) => Promise<ResealedBatch>;
}
