// The counting rules of `webhook/{id}`, on the real workflow code with activities the test
// passes: what each sequence of outcomes and status changes leaves, that the state is stored
// after every change and carried across continue-as-new, and that who asked for a status
// change or the deletion reaches the activity that stores it (for the audit log).
import { randomBytes } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditActor, TimedOutcome, WebhookLifecycleState } from '../../src/contract/payloads';
import type { WebhookStatus } from '../../src/objects';
import { deleteWebhookUpdate, deliveryOutcomesSignal, lifecycleStateQuery, setStatusUpdate } from '../../src/contract/messages';
import { webhookLifecycle } from '../../workflows';
import { waitFor } from '../support/wait';
import { startWorkflowWorker, type WorkflowWorker } from './support/worker';

/** What the workflow stored, per webhook, latest last; and who asked for each store's status change. */
const stored = new Map<string, WebhookLifecycleState[]>();
const requesters = new Map<string, (AuditActor | undefined)[]>();
const deleted: { webhookId: string; actor: AuditActor | undefined }[] = [];
let worker: WorkflowWorker;
beforeAll(async () => {
  worker = await startWorkflowWorker({
    async storeWebhookState(state, requester) {
      stored.set(state.webhookId, [...(stored.get(state.webhookId) ?? []), state]);
      requesters.set(state.webhookId, [...(requesters.get(state.webhookId) ?? []), requester]);
    },
    async deleteWebhook(webhookId, actor) {
      deleted.push({ webhookId, actor });
    },
    // Probing off: a pause by failures stores nothing more.
    async handPauseToProbes() {
      return false;
    },
  });
});

/** Who asks, through the API, for a status change or the deletion. */
const owner = (tokenName: string): AuditActor => ({ tokenId: `tkn_${'1'.repeat(24)}`, tokenName, clientAddress: '192.0.2.1' });
afterAll(() => worker?.stop());

type Step = boolean[] | WebhookStatus;
const failures = (count: number) => Array<boolean>(count).fill(false);

function initialState(overrides: Partial<WebhookLifecycleState> = {}): WebhookLifecycleState {
  const webhookId = `wh_${randomBytes(12).toString('hex')}`;
  return {
    webhookId,
    accountId: 'acc_rules',
    status: 'active',
    pausedReason: null,
    consecutiveFailures: 0,
    failuresCounted: 0,
    ...overrides,
  };
}

async function start(state: WebhookLifecycleState, signalsPerRun?: number) {
  return worker.client.workflow.start(webhookLifecycle, {
    taskQueue: worker.taskQueue,
    workflowId: `webhook/${state.webhookId}`,
    args: [{ state, signalsPerRun }],
  });
}

const cases: { rule: string; initial?: Partial<WebhookLifecycleState>; steps: Step[]; expected: Partial<WebhookLifecycleState> }[] = [
  { rule: 'each failure adds one', steps: [failures(3)], expected: { status: 'active', consecutiveFailures: 3, failuresCounted: 3 } },
  {
    rule: 'a delivery resets the count',
    steps: [[false, false, true]],
    expected: { status: 'active', consecutiveFailures: 0, failuresCounted: 2 },
  },
  {
    rule: 'failures after a reset count from 0',
    steps: [[false, true, false, false]],
    expected: { consecutiveFailures: 2, failuresCounted: 3 },
  },
  {
    rule: '19 failures leave it active',
    steps: [failures(19)],
    expected: { status: 'active', pausedReason: null, consecutiveFailures: 19 },
  },
  {
    rule: 'the 20th consecutive failure pauses it',
    steps: [failures(20)],
    expected: { status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 },
  },
  {
    rule: 'outcomes after the pause change nothing but the failures told',
    steps: [failures(20), [true, false, false]],
    expected: { status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20, failuresCounted: 22 },
  },
  {
    rule: 'reactivation resets the count, and failures count again',
    steps: [failures(20), 'active', [false]],
    expected: { status: 'active', pausedReason: null, consecutiveFailures: 1 },
  },
  {
    rule: 'a manual pause keeps the count, and later outcomes leave it',
    steps: [[false, false], 'paused', [true, false]],
    expected: { status: 'paused', pausedReason: 'manual', consecutiveFailures: 2, failuresCounted: 3 },
  },
  {
    rule: 'pausing an auto-paused webhook keeps its reason',
    steps: [failures(20), 'paused'],
    expected: { status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 },
  },
  {
    rule: 'reactivating an active webhook resets its count',
    steps: [failures(4), 'active'],
    expected: { status: 'active', consecutiveFailures: 0, failuresCounted: 4 },
  },
  {
    rule: 'a count carried into the run goes on from where it was',
    initial: { consecutiveFailures: 18, failuresCounted: 30 },
    steps: [failures(2)],
    expected: { status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20, failuresCounted: 32 },
  },
];

/**
 * Outcomes that ended a millisecond apart in the order given, the first `ago` ms before now:
 * held until OUTCOME_SETTLE_MS after each ended.
 */
function endedInOrder(delivered: boolean[], ago = 200): TimedOutcome[] {
  const first = Date.now() - ago;
  return delivered.map((outcome, index) => ({ deliveryId: `dlv_${index}`, delivered: outcome, endedAt: first + index }));
}

/** The ways outcomes reach the workflow: each its own signal, in the order given by `arrival`. */
const arrivals: { order: string; arrival: (ended: TimedOutcome[]) => TimedOutcome[] }[] = [
  { order: 'in the order they ended', arrival: (ended) => ended },
  { order: 'in the reverse order', arrival: (ended) => [...ended].reverse() },
  { order: 'successes last', arrival: (ended) => [...ended.filter((o) => !o.delivered), ...ended.filter((o) => o.delivered)] },
  { order: 'successes first', arrival: (ended) => [...ended.filter((o) => o.delivered), ...ended.filter((o) => !o.delivered)] },
];

const byEndTime: { rule: string; ended: boolean[]; expected: Partial<WebhookLifecycleState> }[] = [
  {
    rule: 'a success resets the failures that ended before it, not those after it',
    ended: [false, false, true, false],
    expected: { status: 'active', consecutiveFailures: 1, failuresCounted: 3 },
  },
  {
    rule: 'the 20th failure pauses it though a success that ended after it arrives first',
    ended: [...failures(20), true, false],
    expected: { status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20, failuresCounted: 21 },
  },
  {
    rule: 'a success that ended between the 19th failure and the next keeps it active, however late it arrives',
    ended: [...failures(19), true, false],
    expected: { status: 'active', pausedReason: null, consecutiveFailures: 1, failuresCounted: 20 },
  },
];

describe('webhook/{id} counting by the times the attempts ended', () => {
  const cases = byEndTime.flatMap((sequence) => arrivals.map((arrival) => ({ ...sequence, ...arrival })));
  it.concurrent.each(cases)('$rule, arriving $order', async ({ ended, arrival, expected }) => {
    const state = initialState();
    const handle = await start(state);
    for (const outcome of arrival(endedInOrder(ended))) {
      await handle.signal(deliveryOutcomesSignal, { delivered: [outcome.delivered], outcomes: [outcome] });
    }
    const told = ended.filter((delivered) => !delivered).length;
    const final = await waitFor(async () => {
      const current = await handle.query(lifecycleStateQuery);
      return current.failuresCounted === told ? current : undefined;
    });
    expect(final).toMatchObject(expected);
  });

  it('resets, on a reactivation, the failures held that ended before it: they are told, never part of the new count', async () => {
    const state = initialState({ consecutiveFailures: 19, failuresCounted: 19 });
    const handle = await start(state);
    const [failure, another] = endedInOrder([false, false]);
    for (const outcome of [failure, another]) {
      await handle.signal(deliveryOutcomesSignal, { delivered: [outcome.delivered], outcomes: [outcome] });
    }
    await handle.executeUpdate(setStatusUpdate, { args: ['active', owner('reactivator')] });
    const later = { deliveryId: 'dlv_after', delivered: false, endedAt: Date.now() + 1 };
    await handle.signal(deliveryOutcomesSignal, { delivered: [false], outcomes: [later] });
    const final = await waitFor(async () => {
      const current = await handle.query(lifecycleStateQuery);
      return current.failuresCounted === 22 ? current : undefined;
    });
    expect(final).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 1 });
  });

  it('holds a failure told twice once', async () => {
    const state = initialState();
    const handle = await start(state);
    const [failure, success] = endedInOrder([false, true]);
    for (const outcome of [failure, failure, success, failure]) {
      await handle.signal(deliveryOutcomesSignal, { delivered: [outcome.delivered], outcomes: [outcome] });
    }
    const final = await waitFor(async () => {
      const current = await handle.query(lifecycleStateQuery);
      return current.failuresCounted > 0 ? current : undefined;
    });
    expect(final).toMatchObject({ consecutiveFailures: 0, failuresCounted: 1 });
  });

  it('carries the outcomes it holds across continue-as-new, and counts them in the order they ended', async () => {
    const state = initialState({ consecutiveFailures: 18, failuresCounted: 18 });
    const handle = await start(state, 2);
    const [failure, secondFailure, success] = endedInOrder([false, false, true]);
    // Two signals end the run (its budget is 2) while both are held; the success comes to the next run.
    for (const outcome of [success, secondFailure, failure]) {
      await handle.signal(deliveryOutcomesSignal, { delivered: [outcome.delivered], outcomes: [outcome] });
    }
    const latestRun = () => worker.client.workflow.getHandle(handle.workflowId);
    const final = await waitFor(async () => {
      const current = await latestRun().query(lifecycleStateQuery);
      return current.failuresCounted === 20 ? current : undefined;
    });
    expect(final).toMatchObject({ status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 });
    expect((await latestRun().describe()).runId).not.toBe(handle.firstExecutionRunId);
  });
});

describe('webhook/{id} counting rules', () => {
  it.each(cases)('$rule', async ({ initial, steps, expected }) => {
    const state = initialState(initial);
    const handle = await start(state);
    let told = state.failuresCounted;
    for (const step of steps) {
      if (typeof step === 'string') {
        await handle.executeUpdate(setStatusUpdate, { args: [step, owner('rules')] });
        continue;
      }
      await handle.signal(deliveryOutcomesSignal, { delivered: step });
      told += step.filter((delivered) => !delivered).length;
      // The next step waits until these outcomes are counted, as they would be in service.
      await waitFor(async () => ((await handle.query(lifecycleStateQuery)).failuresCounted === told ? true : undefined));
    }
    const final = await handle.query(lifecycleStateQuery);
    expect(final).toMatchObject(expected);
    // PostgreSQL's mirror gets every change: the last state stored is the final one.
    const last = await waitFor(
      async () => {
        const latest = stored.get(state.webhookId)?.at(-1);
        return latest && JSON.stringify(latest) === JSON.stringify(final) ? latest : undefined;
      },
      { what: 'the final state stored' },
    );
    expect(last).toMatchObject(expected);
  });

  it('refuses a status other than active or paused, and changes nothing', async () => {
    const state = initialState();
    const handle = await start(state);
    await expect(handle.executeUpdate(setStatusUpdate, { args: ['deleted' as WebhookStatus, owner('rules')] })).rejects.toBeInstanceOf(
      WorkflowUpdateFailedError,
    );
    expect(await handle.query(lifecycleStateQuery)).toEqual(state);
  });

  it('continues as new after its signal budget, carrying the count', async () => {
    const state = initialState();
    const handle = await start(state, 3);
    const latestRun = () => worker.client.workflow.getHandle(handle.workflowId);
    for (let i = 1; i <= 7; i++) {
      await handle.signal(deliveryOutcomesSignal, { delivered: [false] });
      await waitFor(async () => ((await latestRun().query(lifecycleStateQuery)).failuresCounted === i ? true : undefined), {
        what: `failure ${i} counted`,
      });
    }
    const latest = latestRun();
    expect(await latest.query(lifecycleStateQuery)).toMatchObject({ consecutiveFailures: 7, failuresCounted: 7, status: 'active' });
    const first = await worker.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
    expect(first.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    expect(first.events!.filter((event) => event.workflowExecutionSignaledEventAttributes).length).toBeGreaterThanOrEqual(3);
    expect((await latest.describe()).runId).not.toBe(handle.firstExecutionRunId);
  });

  it('counts every outcome of a burst that spans several runs', async () => {
    const state = initialState();
    const handle = await start(state, 3);
    const burst = 40;
    await Promise.all(Array.from({ length: burst }, () => handle.signal(deliveryOutcomesSignal, { delivered: [false] })));
    const latestRun = () => worker.client.workflow.getHandle(handle.workflowId);
    const final = await waitFor(
      async () => {
        const current = await latestRun().query(lifecycleStateQuery);
        return current.failuresCounted === burst ? current : undefined;
      },
      { what: `all ${burst} failures counted` },
    );
    expect(final).toMatchObject({ status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 });
  });

  it('hands who asked for a status change to the one store that holds it, the pause by failures to none', async () => {
    const state = initialState();
    const handle = await start(state);
    const counted = (failuresCounted: number) => async () =>
      (await handle.query(lifecycleStateQuery)).failuresCounted === failuresCounted ? true : undefined;
    await handle.signal(deliveryOutcomesSignal, { delivered: [false] });
    await waitFor(counted(1));
    await handle.executeUpdate(setStatusUpdate, { args: ['paused', owner('pauser')] });
    // Paused already: nothing changes, and nobody is handed to a store.
    await handle.executeUpdate(setStatusUpdate, { args: ['paused', owner('again')] });
    await handle.signal(deliveryOutcomesSignal, { delivered: [false] });
    await waitFor(counted(2));
    await handle.executeUpdate(setStatusUpdate, { args: ['active', owner('reactivator')] });
    await handle.signal(deliveryOutcomesSignal, { delivered: failures(20) });
    const stores = await waitFor(
      async () => {
        const states = stored.get(state.webhookId)!;
        return states.length === 5
          ? states.map((store, i) => [store.status, store.pausedReason, requesters.get(state.webhookId)![i]])
          : undefined;
      },
      { what: 'the pause by failures stored' },
    );
    expect(stores).toEqual([
      ['active', null, undefined],
      ['paused', 'manual', owner('pauser')],
      ['paused', 'manual', undefined],
      ['active', null, owner('reactivator')],
      ['paused', 'auto_failures', undefined],
    ]);
  });

  it('deletes the webhook through its activity, handing it who asked, and ends', async () => {
    const state = initialState();
    const handle = await start(state);
    await handle.executeUpdate(deleteWebhookUpdate, { args: [owner('deleter')] });
    await handle.result();
    expect(deleted).toContainEqual({ webhookId: state.webhookId, actor: owner('deleter') });
  });
});
