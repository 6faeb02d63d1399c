import { describe, expect, it } from 'vitest';
import { WebhookIdKey, WebhookStatusKey } from '../../src/contract/search-attributes';
import { lifecycleStateQuery } from '../../src/contract/messages';
import { webhookLifecycle } from '../../workflows';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();

const setUp = (path: string) => suite.stack.setUpListWebhook(suite.receiver.urlFor(path));

function postWrite(listId: string, writeId: string) {
  return suite.stack.request('POST', `/internal/v3/lists/${listId}/writes`, {
    token: suite.stack.internalApiToken,
    body: { writeId, changes: [{ type: 'item.added' }] },
  });
}

describe('webhook/{id}', () => {
  it('continues as new after its signal budget and keeps the count across runs', async () => {
    const { owner, webhookId, listId } = await setUp('/lifecycle/continue');
    const workflowId = `webhook/${webhookId}`;
    const client = suite.stack.service.client;
    // Run it again with a budget of 5 signals per run, as an operator could.
    await client.workflow.getHandle(workflowId).terminate('test: restart with a small signal budget');
    const started = await client.workflow.start(webhookLifecycle, {
      taskQueue: suite.stack.taskQueue,
      workflowId,
      args: [
        {
          state: { webhookId, accountId: 'acc_test', status: 'active', pausedReason: null, consecutiveFailures: 0, failuresCounted: 0 },
          signalsPerRun: 5,
        },
      ],
      typedSearchAttributes: [
        { key: WebhookIdKey, value: webhookId },
        { key: WebhookStatusKey, value: 'active' },
      ],
    });

    // Each write waits until its outcome is told (the signal accepted) before the next: a
    // worker gathers outcomes that come close together into one signal, and 12 signals must
    // reach the budget however fast this machine is. The run holding outcomes not yet counted
    // carries them into the next.
    const handle = client.workflow.getHandle(workflowId);
    suite.receiver.respondWith({ status: 500 });
    for (let i = 0; i < 12; i++) await suite.stack.reportWrite(listId, `can-${i}`);
    suite.receiver.respondWith({});
    const state = await waitFor(async () => {
      const current = await handle.query(lifecycleStateQuery);
      return current.failuresCounted === 12 ? current : undefined;
    });
    expect(state).toMatchObject({ status: 'active', consecutiveFailures: 12 });
    // The mirror in PostgreSQL follows across runs.
    expect(await suite.stack.waitForFailureCount(owner.token, webhookId, 12)).toMatchObject({ status: 'active' });
    const { runId } = await handle.describe();
    expect(runId).not.toBe(started.firstExecutionRunId);
    const firstRun = await client.workflow.getHandle(workflowId, started.firstExecutionRunId).fetchHistory();
    expect(firstRun.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
  });

  it('keeps up with a burst of concurrent writes to one webhook: every outcome counted, no failed workflow task', async () => {
    const { owner, webhookId, listId } = await setUp('/lifecycle/burst');
    suite.receiver.respondWith((request) => (request.path === '/lifecycle/burst' ? { status: 500 } : {}));
    const burst = 15; // below the pause threshold, so every failure must be counted
    const answers = await Promise.all(Array.from({ length: burst }, (_, i) => postWrite(listId, `burst-${i}`)));
    expect(answers.every((answer) => answer.status === 202)).toBe(true);
    await Promise.all(answers.map((_, i) => suite.stack.service.client.workflow.getHandle(`list-write/${listId}/burst-${i}`).result()));
    suite.receiver.respondWith({});

    const webhook = await suite.stack.waitForFailureCount(owner.token, webhookId, burst);
    expect(webhook.status).toBe('active');
    const history = await suite.stack.lifecycle(webhookId).fetchHistory();
    const events = history.events!;
    // Every outcome told once; a worker batches those that come while a signal is on its way.
    const signals = await suite.stack.outcomeSignals(webhookId);
    expect(signals.flat()).toEqual(Array.from({ length: burst }, () => false));
    expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toHaveLength(0);
    // At most one state store (a local activity, recorded as a marker) per wake of the
    // workflow that counts, a settle timer's: outcomes that settle together are stored together.
    const stores = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    const settled = events.filter((e) => e.timerFiredEventAttributes);
    expect(stores.length).toBeGreaterThan(0);
    expect(stores.length).toBeLessThanOrEqual(settled.length);
  });
});
