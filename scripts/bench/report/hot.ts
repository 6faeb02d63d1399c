// "Hot webhook": one webhook taking every write of a run, failing in a pattern.
import { type ScenarioResult } from '../lib/types';
import { logSummary, num } from './format';

export function hotSection(s: ScenarioResult): string[] {
  const { hot: h, steps } = s as Required<Pick<ScenarioResult, 'hot' | 'steps'>>;
  const { ledger: l, acceptMs, e2eMs, drainMs } = steps[0];
  const history = h.history;
  const queryErrors = h.queryErrorSample.length ? ` (${h.queryErrorSample.join('; ')})` : '';
  // Runs before outcomes were batched have no outcomesReceived.
  const carrying = 'outcomesReceived' in history ? ` (carrying ${history.outcomesReceived} outcomes)` : '';
  const readErrors = history.errors.length ? `; errors reading histories: ${history.errors.join('; ')}` : '';
  return [
    `${h.rate} writes/s for ${h.durationS} s to one webhook; ${h.pattern}.`,
    '',
    `- Ledger: sent ${l.sent} = ${l.delivered} delivered + ${l.failedRecorded} failed + ${l.skipped} skipped while paused` +
      ` + ${l.missing} missing; ${l.duplicates} duplicates (${l.balanced ? 'balanced' : 'NOT balanced'}).` +
      ` Accept p50/p99 ${num(acceptMs.p50)}/${num(acceptMs.p99)} ms; end-to-end p50/p99 ${num(e2eMs.p50)}/${num(e2eMs.p99)} ms;` +
      ` drain ${num(drainMs / 1000)} s.`,
    '- Lag from the receipt of the last failure to the `state` query of `webhook/{id}`' +
      ` showing the final count (${h.finalQueryCount}, ${h.finalQueryStatus}): **${num(h.queryLagMs, 0)} ms**;` +
      ` to the database mirror (GET /v3/webhooks/{id}) showing ${h.finalDatabaseCount}: ${num(h.databaseLagMs, 0)} ms.`,
    `- Query: ${h.querySamples} answers, p50/p99 ${num(h.queryMs.p50)}/${num(h.queryMs.p99)} ms, ${h.queryErrors} errors${queryErrors};` +
      ` highest count seen ${h.maxCountSeen}; reactivations: ${h.reactivations.length}.`,
    `- History of \`webhook/{id}\`: ${history.runs} runs (${history.continuedAsNew} continue-as-new),` +
      ` ${history.signalsReceived} outcome signals received${carrying} for ${h.signalsExpected} accepted writes,` +
      ` ${history.workflowTaskFailed} failed and ${history.workflowTaskTimedOut} timed-out workflow tasks;` +
      ` list-write workflows not completed: ${history.notCompletedListWrites ?? '?'}${readErrors}.`,
    ...(history.outcomeToldMs
      ? [
          '- Outcomes told, from the end of the attempt to the signal in the history:' +
            ` p50/p99/max ${num(history.outcomeToldMs.p50, 0)}/${num(history.outcomeToldMs.p99, 0)}/${num(history.outcomeToldMs.p100, 0)} ms` +
            ' (webhook/{id} holds each 5,000 ms before counting it).',
        ]
      : []),
    `- Warnings / errors in the logs: ${logSummary(s.logs)}.`,
    '',
  ];
}
