import { condition, defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import type { WebhookLifecycleState } from '../src/types';

export const lifecycleStateQuery = defineQuery<WebhookLifecycleState>('state');
/** The webhook was deleted: the workflow ends. */
export const webhookDeletedSignal = defineSignal('webhookDeleted');

/**
 * `webhook/{id}`: lives as long as its webhook and keeps its consecutive-failure count,
 * which an operator reads through the `state` query.
 */
export async function webhookLifecycle(initial: WebhookLifecycleState): Promise<void> {
  const state = { ...initial };
  let deleted = false;
  setHandler(lifecycleStateQuery, () => state);
  setHandler(webhookDeletedSignal, () => {
    deleted = true;
  });
  await condition(() => deleted);
}
