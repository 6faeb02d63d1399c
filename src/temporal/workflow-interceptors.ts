// Runs inside the workflow sandbox (bundled with workflows/ when tracing is on; see
// src/temporal/tracing.ts). Temporal's OpenTelemetry interceptors, with one change: the ids of
// the spans they make come from a random stream of their own. The workflows' random (delivery
// ids, workflows/delivery-ids.ts) then draws the same numbers with tracing on or off, and a
// span made for a query, which a replay never makes again, cannot shift it.
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { getRandomStream, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

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

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [drawingSpanIds(new OpenTelemetryInboundInterceptor())],
  outbound: [drawingSpanIds(new OpenTelemetryOutboundInterceptor())],
  internals: [drawingSpanIds(new OpenTelemetryInternalsInterceptor())],
});
