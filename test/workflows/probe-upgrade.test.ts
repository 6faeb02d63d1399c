// A pause that 0.6.0 made, before probes, starts probing on this release once the workers
// wake it (docs/upgrades.md, "Probes of pauses made before 0.7.0"). The histories are 0.6.0's
// own recordings of `webhook/{id}` runs left open as its worker left them
// (test/workflows/upgrades/0.6.0): paused by failures, and paused by hand. With the workers'
// wake signal appended, the current code, past the recorded events, hands the pause of the
// first to its probes (the local activity handPauseToProbes) and ignores the second.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { wakeToProbeSignal } from '../../src/contract/messages';
import type { RecordedEvent, RecordedHistory } from './support/recorded-histories';

const recordedBy060 = (branch: string) =>
  JSON.parse(readFileSync(path.join(__dirname, `upgrades/0.6.0/${branch}.json`), 'utf8')) as RecordedHistory;
const pausedByFailures = recordedBy060('webhook-auto-paused-open');
const pausedByHand = recordedBy060('webhook-manually-paused-open');

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows'),
    workflowInterceptorModules: [path.join(__dirname, 'support/scheduled-commands.ts')],
    logger: new DefaultLogger('WARN'),
  });
});

/** Replays `history` on the current code; what it scheduled past the recorded events. */
async function scheduledPast(history: RecordedHistory): Promise<string[]> {
  const commands: string[] = [];
  const result = await Worker.runReplayHistory(
    {
      workflowBundle: bundle,
      sinks: { scheduled: { command: { fn: (_info, description: string) => void commands.push(description), callDuringReplay: true } } },
    },
    historyFromJSON(history),
  );
  expect(result).toBeUndefined();
  return commands;
}

/** The history with a signal appended, and the workflow task that delivers it. */
function withSignal(history: RecordedHistory, signalName: string): RecordedHistory {
  const last = history.events.at(-1)!;
  const lastId = Number(last.eventId);
  const at = String(last.eventTime);
  const event = (offset: number, eventType: string, attributes: Record<string, unknown>): RecordedEvent => ({
    eventId: String(lastId + offset),
    eventTime: at,
    eventType,
    ...attributes,
  });
  return {
    events: [
      ...history.events,
      event(1, 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED', {
        workflowExecutionSignaledEventAttributes: { signalName, input: { payloads: [] }, identity: 'worker starting' },
      }),
      event(2, 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', {
        workflowTaskScheduledEventAttributes: {
          taskQueue: { name: 'webhooks', kind: 'TASK_QUEUE_KIND_NORMAL' },
          startToCloseTimeout: '10s',
          attempt: 1,
        },
      }),
      event(3, 'EVENT_TYPE_WORKFLOW_TASK_STARTED', {
        workflowTaskStartedEventAttributes: { scheduledEventId: String(lastId + 2), identity: 'new worker' },
      }),
    ],
  };
}

describe('a pause made by 0.6.0', () => {
  it.each([
    ['by failures', pausedByFailures, []],
    ['by hand', pausedByHand, ['active', 'paused']],
  ])('is the recording of an open run paused %s that replays on the current code', async (_how, history, statusUpdates) => {
    const events = history.events as Record<string, any>[];
    expect(events.at(0)!.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
    expect(events.map((event) => event.eventType)).not.toContain('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    const decoded = (payload: { data: string }) => JSON.parse(Buffer.from(payload.data, 'base64').toString()) as unknown;
    const statuses = events.flatMap((event) => {
      const status = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes.indexedFields.WebhookStatus;
      return status ? [decoded(status)] : [];
    });
    expect(statuses.at(-1)).toBe('paused');
    // Paused by failures: no Update set a status; by hand: the owner's reactivation, then pause.
    const updates = events.flatMap((event) => {
      const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest.input;
      return accepted?.name === 'setStatus' ? [decoded(accepted.args.payloads[0])] : [];
    });
    expect(updates).toEqual(statusUpdates);
    expect(await scheduledPast(history)).toEqual([]);
  });

  it('hands its pause to the probes once the workers wake it, when failures paused it', async () => {
    expect(await scheduledPast(withSignal(pausedByFailures, wakeToProbeSignal.name))).toEqual(['local activity handPauseToProbes']);
  });

  it('ignores the wake when its owner paused it', async () => {
    expect(await scheduledPast(withSignal(pausedByHand, wakeToProbeSignal.name))).toEqual([]);
  });
});
