import { uuid4 } from '@temporalio/workflow';

/**
 * A delivery id fixed by a workflow before its attempt, in the form of the service's other
 * ids (`dlv_` and 24 hex digits), from the workflow's replay-safe random: a replay, or a
 * retried workflow task, makes the same id again; tracing, which draws its span ids from a
 * stream of its own (tracing-interceptors.ts), changes none.
 */
export function newDeliveryId(): string {
  return `dlv_${uuid4().replace(/-/g, '').slice(0, 24)}`;
}
