// Starting `reencrypt-secrets/{taskQueue}/{keyId}` from a worker as it starts, when SECRET_KEYS begins with
// a key that some stored signing secrets are not sealed under.
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { reencryptionWorkflowId, type WorkflowTypes } from '../contract/workflows';
import { countSealedUnderOtherKeys } from '../db/sealed-secrets';
import type { Sql } from '../db/sql';

/**
 * Starts the re-encryption under `keyId` (the first key) if any stored secret is sealed under
 * another key; every worker asks as it starts, and a run already going is left to go on (one
 * that has ended is started again, for secrets sealed under an older key since, by a process
 * not yet restarted). Returns how many secrets were under other keys, and the workflow's id.
 */
export async function startReencryptionIfDue(
  sql: Sql,
  client: Client,
  taskQueue: string,
  keyId: string,
): Promise<{ workflowId: string; underOtherKeys: number } | null> {
  const underOtherKeys = await countSealedUnderOtherKeys(sql, keyId);
  if (underOtherKeys === 0) return null;
  const workflowId = reencryptionWorkflowId(taskQueue, keyId);
  try {
    await client.workflow.start<WorkflowTypes['reencryptSecrets']>('reencryptSecrets', {
      taskQueue,
      workflowId,
      args: [{ keyId }],
      staticSummary: `Re-encrypts every stored signing secret under key ${keyId}`,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return { workflowId, underOtherKeys };
}
