// Everything Temporal keeps of a set of workflows, as bytes to search: each run's history
// (inputs, results, signals, failures, markers, search attributes) in its protobuf form, and
// its description (memo, search attributes, pending activities).
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';

export interface KeptWorkflow {
  workflowId: string;
  type: string;
  /** The history, encoded as Temporal stores and sends it. */
  bytes: Buffer;
  /** The description, as JSON. */
  description: string;
}

/** Every run the visibility query finds, with what Temporal keeps of it. */
export async function keptWorkflows(client: Client, query: string): Promise<KeptWorkflow[]> {
  const executions = [];
  for await (const execution of client.workflow.list({ query })) executions.push(execution);
  return Promise.all(
    executions.map(async (execution) => {
      const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
      return {
        workflowId: execution.workflowId,
        type: execution.type,
        bytes: Buffer.from(temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish()),
        description: JSON.stringify((await handle.describe()).raw),
      };
    }),
  );
}
