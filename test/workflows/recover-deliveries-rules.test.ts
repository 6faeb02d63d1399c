// The rules of `recovery/{webhookId}/{recoveryId}` on the real workflow code, with activities
// the test passes: the pacing (slots a tenth of a second apart, any ten of them holding the
// rate, never more sends begun in a second than the rate), the stop rules
// (5 of the receiver's failures in a row, our own failures left out; a pause, a deletion, a
// cancel), a lost send attempted again under the same id only while nothing claimed it, and
// continue-as-new carrying where it is.
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cancelRecoverySignal } from '../../src/contract/messages';
import type { RecoveryInput, RecoverySend, RecoverySendOutcome, RecoveryState } from '../../src/contract/payloads';
import { recoveryWorkflowId } from '../../src/contract/workflows';
import { recoverDeliveries } from '../../workflows';
import { waitFor } from '../support/wait';
import { startWorkflowWorker, type WorkflowWorker } from './support/worker';

/** What the receiver (or our side) does with the send of a position, at its nth attempt. */
type Behaviour = (position: number, attempt: number) => Promise<RecoverySendOutcome>;

const delivered: RecoverySendOutcome = { sent: { delivered: true, statusCode: 200, durationMs: 1, error: null } };
const receiverFails = async (): Promise<RecoverySendOutcome> => ({
  sent: { delivered: false, statusCode: 500, durationMs: 1, error: 'non_2xx' },
});
const ourBug = async (): Promise<RecoverySendOutcome> => {
  throw new TypeError('a bug of ours');
};

interface Recorded {
  /** Each attempt, with when it began (after waiting for its time, as the real activity does). */
  sends: (RecoverySend & { begunAt: number })[];
  settledLost: { send: RecoverySend; giveUp: boolean }[];
  recorded: number;
  settled: { status: string; stoppedReason: string | null }[];
}

const behaviours = new Map<string, Behaviour>();
/** How late (ms) the send of a position begins after its time: a slow sender. */
const lateness = new Map<string, (position: number) => number>();
/** What a lost send's item turned out to be; default: claimed by the lost attempt, which left no outcome. */
const lostOutcomes = new Map<string, (send: RecoverySend, giveUp: boolean) => RecoverySendOutcome>();
const records = new Map<string, Recorded>();
/** `awaitRecoveryRecorded` of these recoveries answers once the promise settles. */
const commits = new Map<string, Promise<void>>();
const recordOf = (recoveryId: string) => {
  if (!records.has(recoveryId)) records.set(recoveryId, { sends: [], settledLost: [], recorded: 0, settled: [] });
  return records.get(recoveryId)!;
};

let worker: WorkflowWorker;
beforeAll(async () => {
  worker = await startWorkflowWorker({
    async awaitRecoveryRecorded(recoveryId: string) {
      recordOf(recoveryId).recorded++;
      await commits.get(recoveryId);
    },
    async sendRecoveryItem(send: RecoverySend) {
      for (let wait = send.notBefore - Date.now(); wait > 0; wait = send.notBefore - Date.now()) await Context.current().sleep(wait);
      const late = lateness.get(send.recoveryId)?.(send.position) ?? 0;
      if (late > 0) await Context.current().sleep(late);
      const begunAt = Date.now();
      const { sends } = recordOf(send.recoveryId);
      sends.push({ ...send, begunAt });
      const attempt = sends.filter((earlier) => earlier.position === send.position).length;
      return { begunAt, outcome: await behaviours.get(send.recoveryId)!(send.position, attempt) };
    },
    async settleLostRecoverySend(send: RecoverySend, { giveUp }: { giveUp: boolean }) {
      recordOf(send.recoveryId).settledLost.push({ send, giveUp });
      return lostOutcomes.get(send.recoveryId)?.(send, giveUp) ?? { settled: 'internal' };
    },
    async settleRecovery(recoveryId: string, end: { status: string; stoppedReason: string | null }) {
      recordOf(recoveryId).settled.push(end);
    },
  });
});
afterAll(() => worker?.stop());

let recoveries = 0;
function start(
  behaviour: Behaviour,
  input: Partial<RecoveryInput> & { total: number },
  lateBy?: (position: number) => number,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof recoverDeliveries>> {
  const recoveryId = `rcv_rules${String(++recoveries).padStart(19, '0')}`;
  behaviours.set(recoveryId, behaviour);
  if (lateBy) lateness.set(recoveryId, lateBy);
  return worker.client.workflow.start(recoverDeliveries, {
    taskQueue: worker.taskQueue,
    workflowId: recoveryWorkflowId('wh_rules', recoveryId),
    args: [{ recoveryId, webhookId: 'wh_rules', ratePerSecond: 10, deliveryTimeoutMs: 1000, ...input }],
  });
}

const positions = (recoveryId: string) => recordOf(recoveryId).sends.map((send) => send.position);
const recoveryIdOf = (handle: WorkflowHandle) => handle.workflowId.split('/')[2];

/** The runs of a workflow, first to last, following its continue-as-new chain. */
async function runs(handle: WorkflowHandleWithFirstExecutionRunId): Promise<temporal.api.history.v1.IHistoryEvent[][]> {
  const histories = [];
  let runId: string | undefined = handle.firstExecutionRunId;
  while (runId) {
    const history = await worker.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
    histories.push(history.events ?? []);
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return histories;
}

/** The slots, in order: the sends that share a notBefore. */
function slotsOf(sends: Recorded['sends']): Recorded['sends'][] {
  const bySlot = new Map<number, Recorded['sends']>();
  for (const send of sends) bySlot.set(send.notBefore, [...(bySlot.get(send.notBefore) ?? []), send]);
  return [...bySlot.values()];
}

/** Each slot due a tenth of a second or more after the one before, no send begun before its slot's time, and no second holding more than `rate` sends begun. */
function expectPaced(sends: Recorded['sends'], rate: number): void {
  const slots = slotsOf(sends);
  for (let i = 1; i < slots.length; i++) expect(slots[i][0].notBefore - slots[i - 1][0].notBefore).toBeGreaterThanOrEqual(100);
  for (const send of sends) expect(send.begunAt).toBeGreaterThanOrEqual(send.notBefore);
  const begun = sends.map((send) => send.begunAt).sort((x, y) => x - y);
  for (let first = 0, last = 0; last < begun.length; last++) {
    while (begun[last] - begun[first] >= 1000) first++;
    expect(last - first + 1, `sends begun in the second from ${begun[first]}`).toBeLessThanOrEqual(rate);
  }
}

it('sends each item once, in order, in slots a tenth of a second apart, any ten of them holding the rate', async () => {
  // At 15 a second, the slots hold 1, 2, 1, 2, ... sends.
  const handle = await start(async () => delivered, { total: 9, ratePerSecond: 15 });
  const result: RecoveryState = await handle.result();
  const recoveryId = recoveryIdOf(handle);
  expect(result).toMatchObject({ status: 'completed', stoppedReason: null, total: 9, sent: 9, delivered: 9, failed: 0, next: 10 });
  expect(positions(recoveryId).sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const ids = recordOf(recoveryId).sends.map((send) => send.deliveryId);
  expect(new Set(ids).size).toBe(9);
  expect(ids.every((id) => /^dlv_[0-9a-f]{24}$/.test(id))).toBe(true);
  expect(recordOf(recoveryId).recorded).toBe(1);
  expect(recordOf(recoveryId).settled).toEqual([{ status: 'completed', stoppedReason: null }]);

  const slots = slotsOf(recordOf(recoveryId).sends);
  expect(slots.map((slot) => slot.map((send) => send.position).sort())).toEqual([[1], [2, 3], [4], [5, 6], [7], [8, 9]]);
  expectPaced(recordOf(recoveryId).sends, 15);
  expect(await runs(handle)).toHaveLength(1);
});

it('starts no slot sooner than a second after the last send of the slot ten before began, however late that one was', async () => {
  // The first send begins 300 ms after its time (a slow sender): the eleventh waits for it, not for its slot's time.
  const handle = await start(
    async () => delivered,
    { total: 12, ratePerSecond: 10 },
    (position) => (position === 1 ? 300 : 0),
  );
  const recoveryId = recoveryIdOf(handle);
  expect(await handle.result()).toMatchObject({ status: 'completed', sent: 12 });
  const sends = [...recordOf(recoveryId).sends].sort((x, y) => x.position - y.position);
  expect(sends[10].notBefore).toBeGreaterThanOrEqual(sends[0].begunAt + 1000);
  expectPaced(sends, 10);
});

it("stops after 5 of the receiver's failures in a row; our own failures neither count nor break the run", async () => {
  // 1 delivered, then 2, 3 fail, 4 is lost on our side, 5, 6, 7 fail: the fifth in a row.
  const handle = await start(async (position) => (position === 1 ? delivered : position === 4 ? ourBug() : receiverFails()), { total: 10 });
  const result = await handle.result();
  const recoveryId = recoveryIdOf(handle);
  expect(result).toMatchObject({ status: 'stopped', stoppedReason: 'receiver_failing', sent: 7, delivered: 1, failed: 6, failedInARow: 5 });
  expect(positions(recoveryId)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(recordOf(recoveryId).settledLost.map(({ send }) => send.position)).toEqual([4]);
  expect(recordOf(recoveryId).settled).toEqual([{ status: 'stopped', stoppedReason: 'receiver_failing' }]);
});

it('sends a lost send again, under the same id, only while no attempt claimed it, and at most three times', async () => {
  const handle = await start(async (position, attempt) => (position === 2 || (position === 3 && attempt === 1) ? ourBug() : delivered), {
    total: 4,
  });
  const recoveryId = recoveryIdOf(handle);
  // Nothing claimed: nothing was sent, so it may be sent now (until given up).
  lostOutcomes.set(recoveryId, (_send, giveUp) => (giveUp ? { settled: 'internal' } : { notSent: 'unclaimed' }));
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', sent: 4, delivered: 3, failed: 1 });
  expect(positions(recoveryId)).toEqual([1, 2, 2, 2, 3, 3, 4]);
  const { sends, settledLost } = recordOf(recoveryId);
  for (const position of [2, 3])
    expect(new Set(sends.filter((send) => send.position === position).map((send) => send.deliveryId)).size).toBe(1);
  expect(settledLost.map(({ send, giveUp }) => `${send.position} ${giveUp}`)).toEqual(['2 false', '2 false', '2 true', '3 false']);
});

it('stops when a send finds the webhook paused or deleted, or the recovery cancelled in PostgreSQL', async () => {
  for (const reason of ['webhook_paused', 'webhook_deleted', 'cancelled'] as const) {
    const handle = await start(async (position) => (position === 3 ? { notSent: reason } : delivered), { total: 5 });
    const result = await handle.result();
    expect(result).toMatchObject(
      reason === 'cancelled'
        ? { status: 'cancelled', stoppedReason: null, sent: 2 }
        : { status: 'stopped', stoppedReason: reason, sent: 2 },
    );
    expect(positions(recoveryIdOf(handle))).toEqual([1, 2, 3]);
  }
});

it('is cancelled by its signal, starting no send once it has seen it', async () => {
  let commit!: () => void;
  const handle = await start(async () => delivered, { total: 5 });
  const recoveryId = recoveryIdOf(handle);
  commits.set(recoveryId, new Promise<void>((resolve) => (commit = resolve)));
  await waitFor(async () => (recordOf(recoveryId).recorded > 0 ? true : undefined));
  await handle.signal(cancelRecoverySignal);
  commit();
  expect(await handle.result()).toMatchObject({ status: 'cancelled', sent: 0 });
  expect(positions(recoveryId)).toEqual([]);
  expect(recordOf(recoveryId).settled).toEqual([{ status: 'cancelled', stoppedReason: null }]);
});

it('continues-as-new every sendsPerRun sends, carrying its position, its counts and its pacing', async () => {
  const handle = await start(async (position) => (position % 4 === 0 ? receiverFails() : delivered), {
    total: 23,
    ratePerSecond: 50,
    sendsPerRun: 5,
  });
  const result = await handle.result();
  const recoveryId = recoveryIdOf(handle);
  expect(result).toMatchObject({ status: 'completed', total: 23, sent: 23, delivered: 18, failed: 5, next: 24 });
  expect(positions(recoveryId).sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
  expect(recordOf(recoveryId).recorded).toBe(1);

  expect(slotsOf(recordOf(recoveryId).sends).map((slot) => slot.length)).toEqual([5, 5, 5, 5, 3]);
  expectPaced(recordOf(recoveryId).sends, 50);
  // A run for each group of 5 (the last 3), each short, whatever the total.
  const histories = await runs(handle);
  expect(histories).toHaveLength(5);
  for (const events of histories) expect(events.length).toBeLessThan(30);
});
