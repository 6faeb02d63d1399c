// "Where the time goes": the worker's Temporal SDK metrics at each scenario's knee.
import { type Report, type StepResult } from '../lib/types';
import { kneeStep, num } from './format';

/** The columns: a label, and the metric (with its {type}, if any) it shows. */
const METRICS = [
  ['workflow task schedule-to-start', 'workflow_task_schedule_to_start_latency'],
  ['workflow task execution: list-write', 'workflow_task_execution_latency{deliverListWrite}'],
  ['workflow task execution: webhook/{id}', 'workflow_task_execution_latency{webhookLifecycle}'],
  ['workflow task replay', 'workflow_task_replay_latency'],
  ['RespondWorkflowTaskCompleted', 'request_latency{RespondWorkflowTaskCompleted}'],
  // The SDK gives this one without an activity type.
  ['activity schedule-to-start', 'activity_schedule_to_start_latency'],
  ['deliverEvent execution (activity, before 0.4.0)', 'activity_execution_latency{deliverEvent}'],
  ['deliverEvent execution (local activity)', 'local_activity_execution_latency{deliverEvent}'],
  ['SignalWorkflowExecution (from deliverEvent)', 'request_latency{SignalWorkflowExecution}'],
  ['storeWebhookState execution (local activity)', 'local_activity_execution_latency{storeWebhookState}'],
  ['RespondActivityTaskCompleted', 'request_latency{RespondActivityTaskCompleted}'],
  ['RespondActivityTaskFailed', 'request_latency{RespondActivityTaskFailed}'],
  ['list-write workflow end-to-end', 'workflow_endtoend_latency{deliverListWrite}'],
];

/** A metric's mean and count in a step; a key without a {type} sums every type's histogram. */
function metricCell(st: StepResult, key: string): string {
  const parts = Object.entries(st.sdk!).filter(([k]) => k === key || (!key.includes('{') && k.startsWith(`${key}{`)));
  const count = parts.reduce((n, [, v]) => n + Number(v.count), 0);
  if (!count) return '–';
  const mean = parts.reduce((n, [, v]) => n + Number(v.meanMs ?? 0) * Number(v.count), 0) / count;
  return `${num(mean)} (${count})`;
}

export function sdkTable(report: Report): string[] {
  const withSdk = report.scenarios.filter((x) => (kneeStep(x) ?? x.steps?.[0])?.sdk);
  if (!withSdk.length) return [];
  const out = [
    "## Where the time goes: the worker's Temporal SDK metrics (mean ms, count), at the knee (else the first step)",
    '',
    `| scenario | step | ${METRICS.map(([label]) => label).join(' | ')} |`,
    `|---|---|${METRICS.map(() => '---|').join('')}`,
  ];
  for (const s of withSdk) {
    const st = kneeStep(s) ?? s.steps![0];
    out.push(`| ${s.id} | ${st.rate}/s | ${METRICS.map(([, key]) => metricCell(st, key)).join(' | ')} |`);
  }
  out.push('');
  return out;
}
