import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { cancelRecoverySignal, deleteWebhookUpdate, setStatusUpdate } from '../contract/messages';
import type {
  AuditActor,
  DeliveryResult,
  ListWrite,
  Recipient,
  Redelivery,
  RegistrationInput,
  RegistrationResult,
  TestEvent,
  WebhookLifecycleState,
  WebhookStatus,
} from '../contract/payloads';
import { AccountIdKey, ListIdKey, WebhookIdKey } from '../contract/search-attributes';
import {
  bulkTaskQueue,
  lifecycleWorkflowId,
  listWriteWorkflowId,
  pingWorkflowId,
  recoveryWorkflowId,
  redeliveryWorkflowId,
  registrationWorkflowId,
  testEventWorkflowId,
  type WorkflowTypes,
} from '../contract/workflows';
import { BackingServiceError } from '../errors';
import { newId } from '../ids';

/**
 * The workflows the API starts or talks to, behind plain functions so routes need not know
 * Temporal. A workflow that a call waited on and that failed rejects it with BackingServiceError.
 */
export interface Workflows {
  runRegistration(input: RegistrationInput): Promise<RegistrationResult>;
  runPing(accountId: string, webhookId: string, actor: AuditActor): Promise<DeliveryResult>;
  /** Sends a logged event again, under the new delivery id the redelivery names. */
  runRedelivery(accountId: string, redelivery: Redelivery): Promise<DeliveryResult>;
  /** Sends a test event of the chosen topic, under the delivery id it names. */
  runTestEvent(accountId: string, testEvent: TestEvent): Promise<DeliveryResult>;
  setWebhookStatus(webhookId: string, status: WebhookStatus, actor: AuditActor): Promise<WebhookLifecycleState>;
  /**
   * Starts the deliveries of a recorded write, once: a repeat finds it started (or done).
   * A write just recorded may reuse the id of a closed one whose row was pruned.
   */
  startListWrite(write: ListWrite, recipients: Recipient[], { repeated }: { repeated: boolean }): Promise<void>;
  /**
   * Starts a recovery's workflow, at RECOVERY_RATE_PER_SECOND; the API calls it inside the
   * transaction that records the recovery, so that none is recorded without its workflow.
   */
  startRecovery(accountId: string, recovery: { recoveryId: string; webhookId: string; total: number }): Promise<void>;
  /** Tells a recovery's workflow to start no further send; one that has ended has nothing to stop. */
  signalRecoveryCancel(webhookId: string, recoveryId: string): Promise<void>;
  /** Whether a recovery's workflow is running (false: it has ended, or never started). */
  isRecoveryRunning(webhookId: string, recoveryId: string): Promise<boolean>;
  /** Removes the webhook through its workflow, which then ends; false when no such workflow runs. */
  deleteThroughLifecycle(webhookId: string, actor: AuditActor): Promise<boolean>;
  /** Resolves when the Temporal frontend answers; for /readyz. */
  checkHealth(): Promise<void>;
}

const START_DEADLINE_MS = 5_000;

/** The search attributes of a workflow about one of an account's webhooks. */
const ofWebhook = (accountId: string, webhookId: string) => [
  { key: AccountIdKey, value: accountId },
  { key: WebhookIdKey, value: webhookId },
];

/** The workflows of the attempts an owner waits on: a ping, a redelivery, a test event. */
type OnDemandWorkflow = 'pingWebhook' | 'redeliverEvent' | 'sendTestEvent';

/**
 * A write with more deliveries than this runs on the bulk task queue, in worker slots of its
 * own (src/temporal/worker.ts): beside it, another account's small write is not kept waiting.
 */
export const LARGE_WRITE_DELIVERIES = 100;

/**
 * The workflow task time-out of a recovery (default 10 s): its sends are local activities, and
 * while they follow each other the worker keeps one workflow task open, reporting it at 80% of
 * this; a query is answered, and a signal seen, within that. A worker that dies mid-task is
 * replaced after it, too. A run's history replays in well under it.
 */
const RECOVERY_TASK_TIMEOUT = '5 seconds';

export interface WorkflowsOptions {
  taskQueue: string;
  deliveryTimeoutMs: number;
  deliveriesPerBatch: number;
  recoveryRatePerSecond: number;
  /**
   * A worker of this task queue runs in this process on the client's own NativeConnection,
   * so Temporal may hand it a new workflow's first task directly.
   */
  eagerStart?: boolean;
}

export function createWorkflows(
  client: Client,
  { taskQueue, deliveryTimeoutMs, deliveriesPerBatch, recoveryRatePerSecond, eagerStart = false }: WorkflowsOptions,
): Workflows {
  // A workflow that answers an HTTP request: one that cannot finish soon never will.
  const workflowExecutionTimeout = '2 minutes';
  const lifecycle = (webhookId: string) => client.workflow.getHandle(lifecycleWorkflowId(webhookId));
  const recovery = (webhookId: string, recoveryId: string) => client.workflow.getHandle(recoveryWorkflowId(webhookId, recoveryId));
  /** Runs a ping, a redelivery or a test event, each one attempt an owner waits on, and answers its result. */
  const runOnDemand = <T extends OnDemandWorkflow>(
    workflowType: T,
    { accountId, webhookId, workflowId }: { accountId: string; webhookId: string; workflowId: string },
    request: Parameters<WorkflowTypes[T]>[0],
  ) =>
    ourFailure(
      // Typed by the three's shared signature (Temporal's options cannot follow a generic T); `request` is T's own.
      client.workflow.execute<(request: Parameters<WorkflowTypes[OnDemandWorkflow]>[0]) => Promise<DeliveryResult>>(workflowType, {
        taskQueue,
        workflowExecutionTimeout,
        typedSearchAttributes: ofWebhook(accountId, webhookId),
        workflowId,
        args: [request],
      }),
    );
  return {
    runRegistration: (input) =>
      ourFailure(
        client.workflow.execute<WorkflowTypes['registerWebhook']>('registerWebhook', {
          taskQueue,
          workflowId: registrationWorkflowId(input.accountId, input.registrationId),
          args: [input],
          workflowExecutionTimeout,
          requestEagerStart: eagerStart,
          typedSearchAttributes: ofWebhook(input.accountId, input.webhookId),
        }),
      ),
    runPing: (accountId, webhookId, actor) =>
      runOnDemand(
        'pingWebhook',
        { accountId, webhookId, workflowId: pingWorkflowId(webhookId, newId('dlv')) },
        { webhookId, deliveryTimeoutMs, actor },
      ),
    runRedelivery: (accountId, redelivery) =>
      runOnDemand(
        'redeliverEvent',
        { accountId, webhookId: redelivery.webhookId, workflowId: redeliveryWorkflowId(redelivery.webhookId, redelivery.deliveryId) },
        { redelivery, deliveryTimeoutMs },
      ),
    runTestEvent: (accountId, testEvent) =>
      runOnDemand(
        'sendTestEvent',
        { accountId, webhookId: testEvent.webhookId, workflowId: testEventWorkflowId(testEvent.webhookId, testEvent.deliveryId) },
        { testEvent, deliveryTimeoutMs },
      ),
    startListWrite: async (write, recipients, { repeated }) => {
      try {
        // Fail fast while Temporal is down (the upstream gets 503 and retries) instead of
        // riding out the client's own retries.
        await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
          client.workflow.start<WorkflowTypes['deliverListWrite']>('deliverListWrite', {
            taskQueue: deliveryCount(recipients) > LARGE_WRITE_DELIVERIES ? bulkTaskQueue(taskQueue) : taskQueue,
            workflowId: listWriteWorkflowId(write.listId, write.writeId),
            args: [{ write, recipients, deliveryTimeoutMs, deliveriesPerBatch }],
            // A finished write is never delivered again, whatever repeats of it come later; a
            // writeId recorded anew after its row was pruned (RETENTION_DAYS) is a new write.
            workflowIdReusePolicy: repeated ? WorkflowIdReusePolicy.REJECT_DUPLICATE : WorkflowIdReusePolicy.ALLOW_DUPLICATE,
            requestEagerStart: eagerStart,
            typedSearchAttributes: [{ key: ListIdKey, value: write.listId }],
          }),
        );
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
    startRecovery: async (accountId, { recoveryId, webhookId, total }) => {
      await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        client.workflow.start<WorkflowTypes['recoverDeliveries']>('recoverDeliveries', {
          // Thousands of sends, paced: beside the large writes, not ahead of small ones.
          taskQueue: bulkTaskQueue(taskQueue),
          workflowId: recoveryWorkflowId(webhookId, recoveryId),
          args: [{ recoveryId, webhookId, total, ratePerSecond: recoveryRatePerSecond, deliveryTimeoutMs }],
          workflowTaskTimeout: RECOVERY_TASK_TIMEOUT,
          typedSearchAttributes: ofWebhook(accountId, webhookId),
        }),
      );
    },
    signalRecoveryCancel: async (webhookId, recoveryId) => {
      try {
        await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
          recovery(webhookId, recoveryId).signal(cancelRecoverySignal),
        );
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    },
    isRecoveryRunning: async (webhookId, recoveryId) => {
      try {
        return (await recovery(webhookId, recoveryId).describe()).status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
    setWebhookStatus: (webhookId, status, actor) =>
      ourFailure(lifecycle(webhookId).executeUpdate(setStatusUpdate, { args: [status, actor] })),
    deleteThroughLifecycle: async (webhookId, actor) => {
      try {
        await ourFailure(lifecycle(webhookId).executeUpdate(deleteWebhookUpdate, { args: [actor] }));
        return true;
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
    checkHealth: async () => {
      await client.connection.workflowService.getSystemInfo({});
    },
  };
}

/** A workflow or Update the caller waited on failed: our side could not finish it. */
async function ourFailure<T>(waited: Promise<T>): Promise<T> {
  try {
    return await waited;
  } catch (error) {
    if (error instanceof WorkflowFailedError || error instanceof WorkflowUpdateFailedError) {
      throw new BackingServiceError(error.message, { cause: error });
    }
    throw error;
  }
}

/** The POSTs a write makes: one per recipient and topic. */
function deliveryCount(recipients: Recipient[]): number {
  return recipients.reduce((sum, { topics }) => sum + topics.length, 0);
}
