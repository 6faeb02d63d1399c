// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). The workflow types the
// service starts, their ids and task queue: a running workflow keeps its type and id, and
// operators search the Temporal Web UI by these ids. Change a name or an id's form only with
// a migration of the open runs.
import type {
  ListWriteBatch,
  ListWriteDeliveries,
  PingRequest,
  PruneRequest,
  Pruned,
  RecoveryInput,
  RecoveryState,
  RedeliveryRequest,
  RegistrationInput,
  RegistrationResult,
  TestEventRequest,
  WebhookLifecycleInput,
  DeliveryResult,
  NoticeMailRequest,
  NoticeMailOutcome,
  ProbesInput,
  Reencryption,
  ReencryptionInput,
} from './payloads';

export const TASK_QUEUE = 'webhooks';

const BULK_SUFFIX = '-bulk';

/**
 * Where large writes (their batches with them) and recoveries run: a worker of their own in
 * each worker process, with slots of its own, so their thousands of deliveries never queue
 * ahead of another account's one-delivery write on `taskQueue`.
 */
export const bulkTaskQueue = (taskQueue: string) => `${taskQueue}${BULK_SUFFIX}`;
/** Whether a task queue is a bulk one (bulkTaskQueue's): an activity reads its own from its Context. */
export const isBulkTaskQueue = (taskQueue: string) => taskQueue.endsWith(BULK_SUFFIX);

/**
 * Each workflow type by its name, as the client starts it: the signatures the functions in
 * workflows/ implement (test/workflows/contract.test.ts checks that they do), so the client
 * needs no workflow code.
 */
export interface WorkflowTypes {
  registerWebhook: (input: RegistrationInput) => Promise<RegistrationResult>;
  pingWebhook: (request: PingRequest) => Promise<DeliveryResult>;
  redeliverEvent: (request: RedeliveryRequest) => Promise<DeliveryResult>;
  sendTestEvent: (request: TestEventRequest) => Promise<DeliveryResult>;
  webhookLifecycle: (input: WebhookLifecycleInput) => Promise<void>;
  deliverListWrite: (input: ListWriteDeliveries) => Promise<void>;
  deliverListWriteBatch: (batch: ListWriteBatch) => Promise<void>;
  pruneRecords: (request: PruneRequest) => Promise<Pruned>;
  recoverDeliveries: (input: RecoveryInput) => Promise<RecoveryState>;
  mailNotice: (request: NoticeMailRequest) => Promise<NoticeMailOutcome>;
  probePausedWebhooks: (input: ProbesInput) => Promise<void>;
  reencryptSecrets: (input: ReencryptionInput) => Promise<Reencryption>;
}

/** Workflow ids, as operators search for them in the Temporal Web UI. */
export const lifecycleWorkflowId = (webhookId: string) => `webhook/${webhookId}`;
export const registrationWorkflowId = (accountId: string, registrationId: string) => `registration/${accountId}/${registrationId}`;
export const pingWorkflowId = (webhookId: string, pingId: string) => `ping/${webhookId}/${pingId}`;
export const redeliveryWorkflowId = (webhookId: string, deliveryId: string) => `redelivery/${webhookId}/${deliveryId}`;
export const testEventWorkflowId = (webhookId: string, deliveryId: string) => `test-event/${webhookId}/${deliveryId}`;
export const recoveryWorkflowId = (webhookId: string, recoveryId: string) => `recovery/${webhookId}/${recoveryId}`;
export const listWriteWorkflowId = (listId: string, writeId: string) => `list-write/${listId}/${writeId}`;
export const listWriteBatchWorkflowId = (listId: string, writeId: string, batch: number) =>
  `${listWriteWorkflowId(listId, writeId)}/batch/${batch}`;
export const noticeWorkflowId = (noticeId: string) => `notice/${noticeId}`;
/**
 * The probes of a paused webhook's pauses, run on the bulk task queue `taskQueue`: one workflow
 * for each of PROBE_SHARDS shards of the webhooks, a webhook's shard fixed by its id.
 */
export const probesWorkflowId = (taskQueue: string, webhookId: string) => `probes/${taskQueue}/${probeShardOf(webhookId)}`;

/**
 * How many `probes/{taskQueue}/{shard}` share a deployment's pauses. A running pause is found by
 * its shard, so a change is a migration of the open probes.
 */
export const PROBE_SHARDS = 16;

/** The shard of a webhook's probes: FNV-1a of its id, so that shards fill evenly. */
export function probeShardOf(webhookId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < webhookId.length; i++) hash = Math.imul(hash ^ webhookId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % PROBE_SHARDS;
}
/**
 * Re-encrypts every stored signing secret under the key `keyId` (the first of SECRET_KEYS): one
 * per deployment (its task queue, as for the pruning schedule) and key, started by the workers.
 */
export const reencryptionWorkflowId = (taskQueue: string, keyId: string) => `reencrypt-secrets/${taskQueue}/${keyId}`;
/** One pruning schedule per task queue (that is, per deployment); its workflows' ids start the same. */
export const retentionScheduleId = (taskQueue: string) => `prune-records/${taskQueue}`;
