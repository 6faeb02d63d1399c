// Runs inside the workflow sandbox (bundled with workflows/ when tracing is on; see
// src/temporal/tracing.ts). Temporal's OpenTelemetry interceptors, with two changes. The ids of
// the spans they make come from a random stream of their own: the workflows' random (delivery
// ids, workflows/delivery-ids.ts) then draws the same numbers with tracing on or off, and a
// span made for a query, which a replay never makes again, cannot shift it. And an activity
// gets the workflow's context without a span of its scheduling (StartActivity): a delivery's
// span is its activity's run, and a span made in the sandbox is its dearest (docs/performance.md).
import { headersWithContext } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  getRandomStream,
  type ActivityInput,
  type LocalActivityInput,
  type Next,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

const SPAN_RANDOM_STREAM = 'svc-webhooks/tracing';

/** `interceptor` with each of its methods run in the span random stream (calls onward to `next` leave it). */
function drawingSpanIds<T extends object>(interceptor: T): T {
  return new Proxy(interceptor, {
    get(target, key) {
      const member: unknown = Reflect.get(target, key);
      if (typeof member !== 'function') return member;
      const method = member as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => getRandomStream(SPAN_RANDOM_STREAM).with(() => method.apply(target, args));
    },
  });
}

/** Activities continue the workflow's span: its context in their headers, and no span of their own here. */
class ContextToActivities extends OpenTelemetryOutboundInterceptor {
  override scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return next({ ...input, headers: headersWithContext(input.headers) });
  }

  override scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>) {
    return next({ ...input, headers: headersWithContext(input.headers) });
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [drawingSpanIds(new OpenTelemetryInboundInterceptor())],
  outbound: [drawingSpanIds(new ContextToActivities())],
  internals: [drawingSpanIds(new OpenTelemetryInternalsInterceptor())],
});
