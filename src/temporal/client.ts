import { Client, Connection } from '@temporalio/client';
import type { RegistrationInput, RegistrationResult } from '../types';
import { registerWebhook } from '../../workflows';
import { AccountIdKey } from './search-attributes';

/** The workflows the API starts, behind plain functions so routes need not know Temporal. */
export interface Workflows {
  registerWebhook(input: RegistrationInput): Promise<RegistrationResult>;
  /** Resolves when the Temporal frontend answers; for /readyz. */
  checkHealth(): Promise<void>;
}

export async function connectClient(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}

export function createWorkflows(client: Client, taskQueue: string): Workflows {
  return {
    registerWebhook: (input) =>
      client.workflow.execute(registerWebhook, {
        taskQueue,
        workflowId: `registration/${input.accountId}/${input.registrationId}`,
        args: [input],
        // A registration answers an HTTP request: one that cannot finish soon never will.
        workflowExecutionTimeout: '2 minutes',
        typedSearchAttributes: [{ key: AccountIdKey, value: input.accountId }],
      }),
    checkHealth: async () => {
      await client.connection.workflowService.getSystemInfo({});
    },
  };
}
