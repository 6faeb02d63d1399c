// A webhook's consecutive-failure count, and the SQL of the three places it lives in:
//
// - the state of its workflow `webhook/{id}` (consecutiveFailures, failuresCounted): the count
//   itself, changed only by the delivery outcomes signalled to it;
// - the mirror of that state in `webhooks` (consecutive_failures, failures_counted), stored
//   by mirrorWebhookState (webhooks.ts) once the workflow has changed it; the API reads it;
// - the shadow counter `webhooks.failures_reported`: the failed event deliveries, counted by
//   the statement that logs them (recordDeliveries, deliveries.ts) before their outcome is
//   signalled.
//
// A failure is reported before it is signalled, and the workflow counts only what it was
// signalled, so at every commit failures_reported >= failures_counted. A success has a failure
// to reset, and only then is signalled, if and only if consecutive_failures > 0 (a count the
// workflow stored) or failures_reported > failures_counted (a failure reported that the
// stored state does not include yet). That one read spares the workflow a signal per success.
import type { PendingQuery, Row } from 'postgres';
import type { WebhookLifecycleState } from '../contract/payloads';
import type { Db } from './sql';

type Fragment = PendingQuery<Row[]>;

/**
 * Whether the row `logged` of the delivery log reports a failure: an event delivery sent that
 * failed at the receiver; not a skipped one, a ping's or redelivery's, nor our own (`internal`).
 */
export function reportsFailure(sql: Db, logged: Fragment): Fragment {
  return sql`(${logged}.kind = 'event' AND ${logged}.outcome = 'failed' AND ${logged}.error IS DISTINCT FROM 'internal')`;
}

/** The SET of the failures reported on `webhooks w`: `failures` more, an expression of the statement logging them. */
export function addReportedFailures(sql: Db, failures: Fragment): Fragment {
  return sql`failures_reported = w.failures_reported + ${failures}`;
}

/** Whether a success on `webhooks w` has a failure to reset (see the header). */
export function failuresToReset(sql: Db): Fragment {
  return sql`(w.consecutive_failures > 0 OR w.failures_reported > w.failures_counted)`;
}

/** The mirror's count on `webhooks w`, as the columns `consecutiveFailures` and `failuresCounted` of CountedState. */
export function storedFailureCount(sql: Db): Fragment {
  return sql`w.consecutive_failures AS "consecutiveFailures", w.failures_counted::float8 AS "failuresCounted"`;
}

/** The SET that stores the workflow's count in the mirror. */
export function storeFailureCount(sql: Db, state: Pick<WebhookLifecycleState, 'consecutiveFailures' | 'failuresCounted'>): Fragment {
  return sql`consecutive_failures = ${state.consecutiveFailures}, failures_counted = ${state.failuresCounted}`;
}
