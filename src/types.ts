// Types shared by the API (Temporal client), workflows and activities.
// Workflows import this file, so it must stay free of runtime dependencies.
// Nothing here may ever carry a signing secret: these values travel through Temporal.

export const TOPICS = ['list.changed', 'item.added', 'item.removed', 'item.checked', 'list.members.changed'] as const;
export type Topic = (typeof TOPICS)[number];
export const DEFAULT_TOPICS: Topic[] = ['list.changed'];

export type WebhookStatus = 'active' | 'paused';
export type PausedReason = 'auto_failures' | 'manual';

/** Why an outbound POST (event delivery or ping) did not succeed. */
export type DeliveryError =
  | 'timeout'
  | 'redirect'
  | 'non_2xx'
  | 'connection'
  | 'tls'
  | 'blocked_address'
  /** Our own failure (for example a worker lost mid-delivery); never counted against the receiver. */
  | 'internal';

/** The failure type of a delivery activity whose receiver did not answer 2xx; its details hold the DeliveryResult. */
export const DELIVERY_FAILED = 'DeliveryFailed';

export interface DeliveryResult {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: DeliveryError | null;
}

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
}

export interface Webhook {
  id: string;
  url: string;
  events: Topic[];
  listIds: string[];
  status: WebhookStatus;
  pausedReason: PausedReason | null;
  consecutiveFailures: number;
  createdAt: string;
  updatedAt: string;
}

export type RegistrationResult =
  | { outcome: 'created' | 'updated'; webhook: Webhook }
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
}

/** Input of `webhook/{id}`, carried across continue-as-new. */
export interface WebhookLifecycleInput {
  state: WebhookLifecycleState;
  /** Continue-as-new after this many signals (Temporal caps a run at 10,000); tests lower it. */
  signalsPerRun?: number;
  /** Outcomes that reached the previous run after its last count; counted first. */
  uncountedOutcomes?: boolean[];
}

/** Outcomes of event deliveries to one webhook, in the order they happened; `internal` ones left out. */
export interface DeliveryOutcomes {
  delivered: boolean[];
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

/** What the delivery log holds: event deliveries, pings, and an owner's redeliveries. */
export type DeliveryKind = 'event' | 'ping' | 'redelivery';

/**
 * Input of `redelivery/{webhookId}/{deliveryId}`: a logged event sent again, its body
 * rebuilt byte for byte from the log, under a new delivery id.
 */
export interface Redelivery {
  webhookId: string;
  deliveryId: string;
  /** The logged delivery (or redelivery) it repeats. */
  redeliveryOf: string;
  topic: Topic;
  event: ListEvent;
}

/** A webhook a write goes to, and the topics of the write it subscribes to. */
export interface Recipient {
  webhookId: string;
  topics: Topic[];
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

/** What a delivery attempt came to: `skipped` when the webhook was paused or deleted since the write was accepted. */
export type EventDeliveryOutcome = DeliveryResult | { skipped: true };

export const TASK_QUEUE = 'webhooks';

/** Workflow ids, as operators search for them in the Temporal Web UI. */
export const lifecycleWorkflowId = (webhookId: string) => `webhook/${webhookId}`;
export const registrationWorkflowId = (accountId: string, registrationId: string) => `registration/${accountId}/${registrationId}`;
export const pingWorkflowId = (webhookId: string, pingId: string) => `ping/${webhookId}/${pingId}`;
export const redeliveryWorkflowId = (webhookId: string, deliveryId: string) => `redelivery/${webhookId}/${deliveryId}`;
export const listWriteWorkflowId = (listId: string, writeId: string) => `list-write/${listId}/${writeId}`;
/** One pruning schedule per task queue (that is, per deployment); its workflows' ids start the same. */
export const retentionScheduleId = (taskQueue: string) => `prune-records/${taskQueue}`;
export const listWriteBatchWorkflowId = (listId: string, writeId: string, batch: number) =>
  `${listWriteWorkflowId(listId, writeId)}/batch/${batch}`;

export const DEFAULT_DELIVERIES_PER_BATCH = 500;
export const MAX_CONSECUTIVE_FAILURES = 20;
export const MAX_WEBHOOKS_PER_ACCOUNT = 5;
export const MAX_LIST_IDS = 50;
