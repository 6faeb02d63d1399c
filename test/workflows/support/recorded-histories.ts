// The recorded histories under test/workflows/histories/<release>/<branch>.json, and the rule
// that keeps them few: a release keeps a branch's history only if no earlier release holds
// one with the same event sequence (docs/upgrades.md). The recorder applies the rule when it
// writes, and a test checks that the committed tree keeps it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const historiesDirectory = path.join(__dirname, '..', 'histories');
/**
 * Histories recorded with tracing on (`HISTORIES_TRACING=on npm run record-histories`), from the
 * release that brought tracing: their workflow starts and scheduled activities carry the trace
 * context in their headers. Kept apart from the others, whose keep rule they would double.
 */
export const tracedHistoriesDirectory = path.join(__dirname, '..', 'histories-traced');

/** A history as the recorder, `temporal workflow show -o json` and the Web UI export it. */
export interface RecordedHistory {
  events: RecordedEvent[];
}

/** One event in proto3 JSON: its type, and one `…EventAttributes` object. */
export type RecordedEvent = { eventType: string } & Record<string, unknown>;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
// The attributes of events and their nested messages are read as loose JSON objects: a
// field may be absent from any of them, and what is absent reads as undefined.
type Fields = Record<string, any>;

/**
 * What a payload's value looks like, not what it holds: the JSON types and object keys of
 * its decoded value, arrays element by element. A field added to an activity's result or a
 * workflow's input changes the shape; a different id, URL or count does not.
 */
function payloadShape(payload: Fields): Json {
  const encoding = decodeBase64(payload.metadata?.encoding);
  if (encoding === 'binary/null') return 'null';
  if (encoding !== 'json/plain') return `<${encoding}>`;
  return valueShape(JSON.parse(decodeBase64(payload.data)) as Json);
}

function valueShape(value: Json): Json {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(valueShape);
  if (typeof value === 'object') return Object.fromEntries(sortedKeys(value).map((key) => [key, valueShape(value[key])]));
  return typeof value;
}

function payloadShapes(payloads: Fields | undefined): Json {
  return ((payloads?.payloads as Fields[] | undefined) ?? []).map(payloadShape);
}

function decodeBase64(text: string | undefined): string {
  return Buffer.from(text ?? '', 'base64').toString('utf8');
}

function decodeFirstPayload(payloads: Fields | undefined): Json {
  const [payload] = (payloads?.payloads as Fields[] | undefined) ?? [];
  return payload?.data === undefined ? null : (JSON.parse(decodeBase64(payload.data)) as Json);
}

function sortedKeys(object: Fields | undefined): string[] {
  return Object.keys(object ?? {}).sort();
}

/** What kind of failure it is (its info's kind, application error type, time-out type), not its message. */
function failureKind(failure: Fields | undefined): Json {
  if (!failure) return null;
  const info = Object.keys(failure).find((key) => key.endsWith('FailureInfo'));
  const details: Fields = info ? failure[info] : {};
  return {
    info: info ?? null,
    type: details.type ?? null,
    nonRetryable: details.nonRetryable ?? false,
    timeoutType: details.timeoutType ?? null,
    cause: failureKind(failure.cause),
  };
}

/** A local activity's marker: which activity, in which slot, on which attempt, and what it returned. */
function localActivityMarker(details: Fields): Json {
  const data = decodeFirstPayload(details.data) as Fields;
  return {
    activityType: data.activity_type,
    activityId: data.activity_id,
    seq: data.seq,
    attempt: data.attempt,
    backoff: data.backoff != null,
    result: payloadShapes(details.result),
    failure: failureKind(details.failure),
  };
}

function markerDetails(attributes: Fields): Json {
  const details: Fields = attributes.details ?? {};
  switch (attributes.markerName) {
    case 'core_patch':
      // { id, deprecated }: the patch this marker answers.
      return decodeFirstPayload(details['patch-data']);
    case 'core_local_activity':
      return localActivityMarker(details);
    default:
      return Object.fromEntries(sortedKeys(details).map((key) => [key, payloadShapes(details[key])]));
  }
}

/**
 * For each event type, what of it decides replay: what the workflow's commands were (their
 * kind, activity and workflow types, activity, timer and child ids, patch ids, search
 * attributes, signal and update names, options) and the shape of what the workflow was
 * handed (inputs, results, signal and update arguments, failure kinds). Ids that differ per
 * run (workflow, run, event, request ids), timestamps, task queues, identities and payload
 * values are left out.
 */
const significantAttributes: Record<string, (attributes: Fields, workflowId: string) => Json> = {
  WORKFLOW_EXECUTION_STARTED: (a) => ({
    workflowType: a.workflowType?.name,
    input: payloadShapes(a.input),
    header: sortedKeys(a.header?.fields),
    searchAttributes: sortedKeys(a.searchAttributes?.indexedFields),
    memo: sortedKeys(a.memo?.fields),
    child: a.parentWorkflowExecution !== undefined,
    continued: a.continuedExecutionRunId !== undefined,
  }),
  WORKFLOW_TASK_SCHEDULED: () => ({}),
  WORKFLOW_TASK_STARTED: (a) => ({ suggestContinueAsNew: a.suggestContinueAsNew ?? false }),
  // The SDK's flags change how it replays the tasks after them.
  WORKFLOW_TASK_COMPLETED: (a) => ({
    coreUsedFlags: [...((a.sdkMetadata?.coreUsedFlags as number[] | undefined) ?? [])].sort(),
    langUsedFlags: [...((a.sdkMetadata?.langUsedFlags as number[] | undefined) ?? [])].sort(),
  }),
  WORKFLOW_TASK_FAILED: (a) => ({ cause: a.cause ?? null }),
  WORKFLOW_TASK_TIMED_OUT: (a) => ({ timeoutType: a.timeoutType ?? null }),
  ACTIVITY_TASK_SCHEDULED: (a) => ({
    activityType: a.activityType?.name,
    activityId: a.activityId,
    input: payloadShapes(a.input),
    scheduleToCloseTimeout: a.scheduleToCloseTimeout ?? null,
    startToCloseTimeout: a.startToCloseTimeout ?? null,
    heartbeatTimeout: a.heartbeatTimeout ?? null,
    retryPolicy: a.retryPolicy ?? null,
  }),
  ACTIVITY_TASK_STARTED: (a) => ({ attempt: a.attempt ?? 1 }),
  ACTIVITY_TASK_COMPLETED: (a) => ({ result: payloadShapes(a.result) }),
  ACTIVITY_TASK_FAILED: (a) => ({ failure: failureKind(a.failure), retryState: a.retryState ?? null }),
  ACTIVITY_TASK_TIMED_OUT: (a) => ({ failure: failureKind(a.failure), retryState: a.retryState ?? null }),
  ACTIVITY_TASK_CANCEL_REQUESTED: () => ({}),
  ACTIVITY_TASK_CANCELED: () => ({}),
  TIMER_STARTED: (a) => ({ timerId: a.timerId, startToFireTimeout: a.startToFireTimeout }),
  TIMER_FIRED: (a) => ({ timerId: a.timerId }),
  TIMER_CANCELED: (a) => ({ timerId: a.timerId }),
  MARKER_RECORDED: (a) => ({ markerName: a.markerName, details: markerDetails(a), failure: failureKind(a.failure) }),
  // Values too: which patches a run took, which status it mirrored, are the workflow's decisions.
  UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: (a) => {
    const fields: Fields = a.searchAttributes?.indexedFields ?? {};
    return Object.fromEntries(sortedKeys(fields).map((key) => [key, decodeFirstPayload({ payloads: [fields[key]] })]));
  },
  WORKFLOW_PROPERTIES_MODIFIED: (a) => ({ memo: sortedKeys(a.upsertedMemo?.fields) }),
  // A child's id is made from the parent's (list-write/…/batch/n): compared with the parent's id as a placeholder.
  START_CHILD_WORKFLOW_EXECUTION_INITIATED: (a, workflowId) => ({
    workflowType: a.workflowType?.name,
    workflowId: workflowId ? String(a.workflowId).replace(workflowId, '{parent}') : a.workflowId,
    input: payloadShapes(a.input),
    parentClosePolicy: a.parentClosePolicy ?? null,
    workflowIdReusePolicy: a.workflowIdReusePolicy ?? null,
  }),
  START_CHILD_WORKFLOW_EXECUTION_FAILED: (a) => ({ workflowType: a.workflowType?.name, cause: a.cause ?? null }),
  CHILD_WORKFLOW_EXECUTION_STARTED: (a) => ({ workflowType: a.workflowType?.name }),
  CHILD_WORKFLOW_EXECUTION_COMPLETED: (a) => ({ workflowType: a.workflowType?.name, result: payloadShapes(a.result) }),
  CHILD_WORKFLOW_EXECUTION_FAILED: (a) => ({ workflowType: a.workflowType?.name, failure: failureKind(a.failure) }),
  CHILD_WORKFLOW_EXECUTION_CANCELED: (a) => ({ workflowType: a.workflowType?.name }),
  CHILD_WORKFLOW_EXECUTION_TIMED_OUT: (a) => ({ workflowType: a.workflowType?.name }),
  CHILD_WORKFLOW_EXECUTION_TERMINATED: (a) => ({ workflowType: a.workflowType?.name }),
  SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED: (a) => ({
    signalName: a.signalName,
    input: payloadShapes(a.input),
    childWorkflowOnly: a.childWorkflowOnly ?? false,
  }),
  SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED: (a) => ({ cause: a.cause ?? null }),
  EXTERNAL_WORKFLOW_EXECUTION_SIGNALED: () => ({}),
  REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED: (a) => ({ childWorkflowOnly: a.childWorkflowOnly ?? false }),
  REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED: (a) => ({ cause: a.cause ?? null }),
  EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED: () => ({}),
  WORKFLOW_EXECUTION_SIGNALED: (a) => ({ signalName: a.signalName, input: payloadShapes(a.input) }),
  WORKFLOW_EXECUTION_UPDATE_ADMITTED: (a) => ({ name: a.request?.input?.name, args: payloadShapes(a.request?.input?.args) }),
  WORKFLOW_EXECUTION_UPDATE_ACCEPTED: (a) => ({
    name: a.acceptedRequest?.input?.name,
    args: payloadShapes(a.acceptedRequest?.input?.args),
  }),
  WORKFLOW_EXECUTION_UPDATE_COMPLETED: (a) => ({
    success: a.outcome?.success === undefined ? null : payloadShapes(a.outcome.success),
    failure: failureKind(a.outcome?.failure),
  }),
  WORKFLOW_EXECUTION_CANCEL_REQUESTED: () => ({}),
  WORKFLOW_EXECUTION_COMPLETED: (a) => ({ result: payloadShapes(a.result) }),
  WORKFLOW_EXECUTION_FAILED: (a) => ({ failure: failureKind(a.failure) }),
  WORKFLOW_EXECUTION_CONTINUED_AS_NEW: (a) => ({
    workflowType: a.workflowType?.name,
    input: payloadShapes(a.input),
    searchAttributes: sortedKeys(a.searchAttributes?.indexedFields),
    memo: sortedKeys(a.memo?.fields),
  }),
  WORKFLOW_EXECUTION_CANCELED: () => ({}),
  WORKFLOW_EXECUTION_TERMINATED: () => ({}),
  WORKFLOW_EXECUTION_TIMED_OUT: () => ({}),
};

/** `EVENT_TYPE_MARKER_RECORDED` (recorder, CLI) or `MarkerRecorded` (older exports) → `MARKER_RECORDED`. */
function eventTypeName(eventType: string): string {
  return eventType.startsWith('EVENT_TYPE_')
    ? eventType.slice('EVENT_TYPE_'.length)
    : eventType.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

/**
 * A history's event sequence: one line per event, its type and what of it decides replay.
 * Two histories of a branch with the same sequence exercise the same path of the workflow
 * code. An event of a type not listed above keeps all its attributes, ids and timestamps
 * included, so a history holding one never counts as a repeat.
 */
export function eventSequence(history: RecordedHistory): string[] {
  const started = history.events[0]?.workflowExecutionStartedEventAttributes as Fields | undefined;
  const workflowId: string = started?.workflowId ?? '';
  return history.events.map((event) => {
    const type = eventTypeName(event.eventType);
    const attributes = (Object.entries(event).find(([key]) => key.endsWith('EventAttributes'))?.[1] ?? {}) as Fields;
    const significant = significantAttributes[type];
    return `${type} ${JSON.stringify(significant ? significant(attributes, workflowId) : attributes)}`;
  });
}

export function sameEventSequence(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i]);
}

const releasePattern = /^(\d+)\.(\d+)\.(\d+)(?:-(.+))?$/;

/** Orders release names as versions: 0.5.4 < 0.5.5-check < 0.5.5 < 0.10.0. */
export function compareReleases(a: string, b: string): number {
  const [x, y] = [a, b].map((release) => {
    const match = releasePattern.exec(release);
    if (!match) throw new Error(`${release} is not a release version (major.minor.patch)`);
    return match;
  });
  for (const i of [1, 2, 3]) {
    const difference = Number(x[i]) - Number(y[i]);
    if (difference !== 0) return difference;
  }
  if (x[4] === y[4]) return 0;
  if (x[4] === undefined) return 1;
  if (y[4] === undefined) return -1;
  return x[4] < y[4] ? -1 : 1;
}

/** The release folders under the histories directory, oldest first. */
export function recordedReleases(directory = historiesDirectory): string[] {
  // The traced folder begins with the first recording made with tracing on.
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort(compareReleases);
}

/** The branches a release's folder holds, as file names (`registration-created.json`). */
export function recordedBranches(release: string, directory = historiesDirectory): string[] {
  return readdirSync(path.join(directory, release))
    .filter((file) => file.endsWith('.json'))
    .sort();
}

export function readRecordedHistory(release: string, branch: string, directory = historiesDirectory): RecordedHistory {
  return JSON.parse(readFileSync(path.join(directory, release, branch), 'utf8')) as RecordedHistory;
}

/**
 * The earliest release before `release` whose folder holds `branch` with this event
 * sequence, or undefined: the history is then the first of its kind and is kept.
 */
export function earlierRecording(
  release: string,
  branch: string,
  sequence: readonly string[],
  directory = historiesDirectory,
): string | undefined {
  return recordedReleases(directory)
    .filter((earlier) => compareReleases(earlier, release) < 0 && recordedBranches(earlier, directory).includes(branch))
    .find((earlier) => sameEventSequence(eventSequence(readRecordedHistory(earlier, branch, directory)), sequence));
}
