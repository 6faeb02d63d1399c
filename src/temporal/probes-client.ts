// Handing a pause to `probes/{taskQueue}/{shard}`: from the activity `handPauseToProbes`, which
// `webhook/{id}` runs as the pause begins, and from the benchmark, which seeds thousands of pauses.
import type { Client } from '@temporalio/client';
import { addPauseSignal } from '../contract/messages';
import type { PauseAdded } from '../contract/payloads';
import { probesWorkflowId, type WorkflowTypes } from '../contract/workflows';

/** Signals the pause to its shard's workflow on the bulk task queue `taskQueue`, starting that workflow if it is not running. */
export async function signalWithStartProbes(client: Client, taskQueue: string, pause: PauseAdded): Promise<void> {
  await client.workflow.signalWithStart<WorkflowTypes['probePausedWebhooks'], [PauseAdded]>('probePausedWebhooks', {
    taskQueue,
    workflowId: probesWorkflowId(taskQueue, pause.webhookId),
    args: [{ plans: [], pauses: [] }],
    signal: addPauseSignal,
    signalArgs: [pause],
  });
}
