// Handing a pause to `probes/{taskQueue}/{shard}` from the activity `webhook/{id}` runs as the
// pause begins (and from the benchmark, which seeds thousands of pauses).
import type { Client } from '@temporalio/client';
import { startProbingSignal } from '../contract/messages';
import type { ProbingStart } from '../contract/payloads';
import { probesWorkflowId, type WorkflowTypes } from '../contract/workflows';

/** Signals the pause to its shard's workflow on the bulk task queue `taskQueue`, starting that workflow if it is not running. */
export async function startProbing(client: Client, taskQueue: string, pause: ProbingStart): Promise<void> {
  await client.workflow.signalWithStart<WorkflowTypes['probePausedWebhooks'], [ProbingStart]>('probePausedWebhooks', {
    taskQueue,
    workflowId: probesWorkflowId(taskQueue, pause.webhookId),
    args: [{ plans: [], pauses: [] }],
    signal: startProbingSignal,
    signalArgs: [pause],
  });
}
