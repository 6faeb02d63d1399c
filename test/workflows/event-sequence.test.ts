// What counts as the same event sequence for two recorded histories: equal when they differ
// only in ids, timestamps, task queues and payload values; different whenever a command or
// the shape of what the workflow was handed differs, since a kept history must stand for
// every release it replaces (docs/upgrades.md).
import { describe, expect, it } from 'vitest';
import { compareReleases, eventSequence, sameEventSequence, type RecordedEvent, type RecordedHistory } from './support/recorded-histories';

const base64 = (text: string) => Buffer.from(text).toString('base64');
const json = (value: unknown) => ({ metadata: { encoding: base64('json/plain') }, data: base64(JSON.stringify(value)) });
const payloads = (...values: unknown[]) => ({ payloads: values.map(json) });

/** One recorded run; `run` varies what differs between two recordings of the same branch. */
function recording(run: { id: string; time: string; count: number }): RecordedHistory {
  const workflowId = `list-write/list-${run.id}/w-${run.id}`;
  const events: RecordedEvent[] = [
    {
      eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
      workflowExecutionStartedEventAttributes: {
        workflowType: { name: 'deliverListWrite' },
        workflowId,
        taskQueue: { name: `test-${run.id}` },
        input: payloads({ write: { listId: `list-${run.id}`, cursor: run.count }, recipients: [{ webhookId: `wh_${run.id}` }] }),
        originalExecutionRunId: `run-${run.id}`,
        identity: `${run.count}@host`,
      },
    },
    { eventType: 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', workflowTaskScheduledEventAttributes: { taskQueue: { name: `test-${run.id}` } } },
    { eventType: 'EVENT_TYPE_WORKFLOW_TASK_STARTED', workflowTaskStartedEventAttributes: { requestId: `request-${run.id}` } },
    {
      eventType: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
      workflowTaskCompletedEventAttributes: { identity: `${run.count}@host`, sdkMetadata: { coreUsedFlags: [3, 1, 2] } },
    },
    {
      eventType: 'EVENT_TYPE_MARKER_RECORDED',
      markerRecordedEventAttributes: {
        markerName: 'core_patch',
        details: { 'patch-data': payloads({ id: 'some-patch', deprecated: false }) },
      },
    },
    {
      eventType: 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
      upsertWorkflowSearchAttributesEventAttributes: {
        searchAttributes: { indexedFields: { TemporalChangeVersion: json(['some-patch']) } },
      },
    },
    {
      eventType: 'EVENT_TYPE_MARKER_RECORDED',
      markerRecordedEventAttributes: {
        markerName: 'core_local_activity',
        details: {
          data: payloads({ seq: 1, attempt: 1, activity_id: '1', activity_type: 'deliverEvent', complete_time: run.time, backoff: null }),
          result: payloads({ delivered: true, statusCode: 200, durationMs: run.count }),
        },
      },
    },
    {
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
      activityTaskScheduledEventAttributes: {
        activityType: { name: 'recordInternalFailure' },
        activityId: '2',
        taskQueue: { name: `test-${run.id}` },
        input: payloads({ deliveryId: `dlv_${run.id}` }),
        startToCloseTimeout: '30s',
      },
    },
    { eventType: 'EVENT_TYPE_ACTIVITY_TASK_STARTED', activityTaskStartedEventAttributes: { attempt: 1, requestId: `request-${run.id}` } },
    {
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_FAILED',
      activityTaskFailedEventAttributes: {
        failure: { message: `delivery dlv_${run.id} failed`, applicationFailureInfo: { type: 'DeliveryFailed', nonRetryable: true } },
      },
    },
    { eventType: 'EVENT_TYPE_TIMER_STARTED', timerStartedEventAttributes: { timerId: '3', startToFireTimeout: '0.001s' } },
    { eventType: 'EVENT_TYPE_TIMER_FIRED', timerFiredEventAttributes: { timerId: '3', startedEventId: String(run.count) } },
    {
      eventType: 'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED',
      startChildWorkflowExecutionInitiatedEventAttributes: {
        workflowType: { name: 'deliverListWriteBatch' },
        workflowId: `${workflowId}/batch/1`,
        input: payloads({ batch: 1, listId: `list-${run.id}` }),
      },
    },
    {
      eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
      workflowExecutionSignaledEventAttributes: { signalName: 'deliveryOutcomes', input: payloads({ delivered: [run.count % 2 === 0] }) },
    },
    {
      eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
      workflowExecutionUpdateAcceptedEventAttributes: {
        protocolInstanceId: `update-${run.id}`,
        acceptedRequest: { meta: { updateId: `update-${run.id}` }, input: { name: 'setStatus', args: payloads('paused') } },
      },
    },
    { eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED', workflowExecutionCompletedEventAttributes: { result: payloads(run.count) } },
  ];
  return {
    events: events.map((event, i) => ({ eventId: String(i + 1), eventTime: `${run.time}.${i}Z`, ...event })),
  };
}

const recorded = recording({ id: 'aaaa', time: '2026-01-01T10:00:00', count: 3 });
const sequence = eventSequence(recorded);

/** `recorded` with one event's attributes changed (event numbers from 1, as in a history). */
function changed(eventId: number, change: (attributes: Record<string, any>) => void): string[] {
  const history = structuredClone(recorded);
  const event = history.events[eventId - 1];
  const attributes = Object.entries(event).find(([key]) => key.endsWith('EventAttributes'))![1];
  change(attributes as Record<string, any>);
  return eventSequence(history);
}

describe('eventSequence', () => {
  it('is one line per event', () => {
    expect(sequence).toHaveLength(recorded.events.length);
    expect(sequence[0]).toMatch(/^WORKFLOW_EXECUTION_STARTED /);
  });

  it('is the same for two recordings that differ only in ids, timestamps, task queues and payload values', () => {
    const other = eventSequence(recording({ id: 'bbbbbbbb', time: '2027-06-30T23:59:59', count: 12 }));
    expect(sameEventSequence(other, sequence)).toBe(true);
  });

  it('reads the event types of older exports (MarkerRecorded) as the CLI writes them (EVENT_TYPE_MARKER_RECORDED)', () => {
    const history = structuredClone(recorded);
    for (const event of history.events)
      event.eventType = event.eventType
        .slice('EVENT_TYPE_'.length)
        .toLowerCase()
        .replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
    expect(history.events[0].eventType).toBe('WorkflowExecutionStarted');
    expect(sameEventSequence(eventSequence(history), sequence)).toBe(true);
  });

  it("differs for a child whose workflow id is not made from its parent's, or names another batch", () => {
    expect(
      sameEventSequence(
        changed(13, (a) => (a.workflowId = 'list-write/other/w-other/batch/1')),
        sequence,
      ),
    ).toBe(false);
    expect(
      sameEventSequence(
        changed(13, (a) => (a.workflowId = a.workflowId.replace('batch/1', 'batch/2'))),
        sequence,
      ),
    ).toBe(false);
  });

  it.each<[string, number, (attributes: Record<string, any>) => void]>([
    ['another workflow type', 1, (a) => (a.workflowType.name = 'deliverListWriteBatch')],
    [
      'a field added to the input',
      1,
      (a) => (a.input = payloads({ write: {}, recipients: [{ webhookId: 'x' }], deliveriesPerBatch: 500 })),
    ],
    [
      'one more element in an input array',
      1,
      (a) => (a.input = payloads({ write: {}, recipients: [{ webhookId: 'x' }, { webhookId: 'y' }] })),
    ],
    ['other SDK flags', 4, (a) => (a.sdkMetadata.coreUsedFlags = [1, 2])],
    ['another patch', 5, (a) => (a.details['patch-data'] = payloads({ id: 'other-patch', deprecated: false }))],
    ['a deprecated patch', 5, (a) => (a.details['patch-data'] = payloads({ id: 'some-patch', deprecated: true }))],
    ['another search attribute', 6, (a) => (a.searchAttributes.indexedFields = { WebhookStatus: json('paused') })],
    ['another search attribute value', 6, (a) => (a.searchAttributes.indexedFields.TemporalChangeVersion = json(['other-patch']))],
    [
      'a local activity of another type',
      7,
      (a) => (a.details.data = payloads({ seq: 1, attempt: 1, activity_id: '1', activity_type: 'storeWebhookState', backoff: null })),
    ],
    [
      'a local activity in another slot',
      7,
      (a) => (a.details.data = payloads({ seq: 2, attempt: 1, activity_id: '2', activity_type: 'deliverEvent', backoff: null })),
    ],
    ['a local activity result of another shape', 7, (a) => (a.details.result = payloads({ skipped: true }))],
    ['an activity of another type', 8, (a) => (a.activityType.name = 'deliverEvent')],
    ['an activity with another id', 8, (a) => (a.activityId = '7')],
    ['an activity with another time-out', 8, (a) => (a.startToCloseTimeout = '10s')],
    ['a failure of another type', 10, (a) => (a.failure.applicationFailureInfo.type = 'Internal')],
    ['a timer with another duration', 11, (a) => (a.startToFireTimeout = '1s')],
    ['a timer with another id', 11, (a) => (a.timerId = '4')],
    ['a child workflow of another type', 13, (a) => (a.workflowType.name = 'deliverListWrite')],
    ['another signal', 14, (a) => (a.signalName = 'reactivate')],
    ['a signal carrying more outcomes', 14, (a) => (a.input = payloads({ delivered: [true, false] }))],
    ['another update', 15, (a) => (a.acceptedRequest.input.name = 'deleteWebhook')],
    ['a result of another shape', 16, (a) => (a.result = payloads({ count: 3 }))],
  ])('differs for %s', (_, eventId, change) => {
    expect(sameEventSequence(changed(eventId, change), sequence)).toBe(false);
  });

  it('differs when events come in another order, or one more comes', () => {
    const reordered = structuredClone(recorded);
    [reordered.events[10], reordered.events[12]] = [reordered.events[12], reordered.events[10]];
    expect(sameEventSequence(eventSequence(reordered), sequence)).toBe(false);
    const longer = structuredClone(recorded);
    longer.events.splice(2, 0, structuredClone(longer.events[1]));
    expect(sameEventSequence(eventSequence(longer), sequence)).toBe(false);
  });

  it('keeps every attribute of an event type it does not know, so a history holding one is never a repeat', () => {
    const withUnknown = (history: RecordedHistory) => ({
      events: [
        ...history.events,
        {
          eventType: 'EVENT_TYPE_NEXUS_OPERATION_SCHEDULED',
          nexusOperationScheduledEventAttributes: { requestId: history.events[0].eventTime },
        },
      ],
    });
    const later = recording({ id: 'aaaa', time: '2026-01-01T10:00:01', count: 3 });
    expect(sameEventSequence(eventSequence(later), sequence)).toBe(true);
    expect(sameEventSequence(eventSequence(withUnknown(later)), eventSequence(withUnknown(recorded)))).toBe(false);
  });
});

describe('compareReleases', () => {
  it('orders releases as versions, a pre-release before its release', () => {
    const releases = ['0.10.0', '0.5.5', '0.2.0', '0.5.5-check', '1.0.0', '0.5.4'];
    expect(releases.sort(compareReleases)).toEqual(['0.2.0', '0.5.4', '0.5.5-check', '0.5.5', '0.10.0', '1.0.0']);
  });

  it('refuses a folder name that is not a version', () => {
    expect(() => compareReleases('latest', '0.5.4')).toThrow(/latest is not a release version/);
  });
});
