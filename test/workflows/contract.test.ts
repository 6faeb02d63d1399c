// The client starts workflows by the signatures in src/contract/workflows.ts, without their
// code: every workflow the worker registers must be there, and implement its signature.
import { describe, expect, it } from 'vitest';
import type { WorkflowTypes } from '../../src/contract/workflows';
import * as workflows from '../../workflows';

// A compile error (npm run typecheck) if a workflow's signature differs from the contract's.
const implemented: WorkflowTypes = workflows;
// A compile error if the contract gains or loses a workflow type that this list does not.
const contractTypes: Record<keyof WorkflowTypes, true> = {
  registerWebhook: true,
  pingWebhook: true,
  redeliverEvent: true,
  sendTestEvent: true,
  webhookLifecycle: true,
  deliverListWrite: true,
  deliverListWriteBatch: true,
  pruneRecords: true,
  recoverDeliveries: true,
  mailNotice: true,
  probePausedWebhooks: true,
  reencryptSecrets: true,
};

describe('the workflow contract', () => {
  it('names exactly the workflow types the worker registers', () => {
    expect(Object.keys(workflows).sort()).toEqual(Object.keys(contractTypes).sort());
  });

  it('is implemented by a function for each type', () => {
    for (const name of Object.keys(contractTypes) as (keyof WorkflowTypes)[]) expect(implemented[name]).toBeTypeOf('function');
  });
});
