// The service's own spans, through the OpenTelemetry API: without a started SDK
// (src/tracing/setup.ts) each is a no-op that records nothing and costs next to nothing.
import { SpanKind, SpanStatusCode, context, isSpanContextValid, trace, type Attributes, type Span } from '@opentelemetry/api';
import { version } from '../../package.json';
import { formatTraceparent } from '../../workflows/traceparent';

const tracer = trace.getTracer('svc-webhooks', version);

/** Runs `work` in a span named `name`, its child spans under it; a throw marks the span failed. */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>, kind = SpanKind.INTERNAL): Promise<T> {
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A PostgreSQL statement's span: which operation, never its parameters. */
export function inDatabaseSpan<T>(operation: string, work: () => Promise<T>): Promise<T> {
  return inSpan(`postgresql ${operation}`, { 'db.system': 'postgresql', 'db.operation.name': operation }, work, SpanKind.CLIENT);
}

/**
 * Names the span of the request under way by its route template (the HTTP instrumentation knows
 * only the method), as the operator looks for it: `POST /internal/v3/lists/:listId/writes`.
 */
export function nameRequestSpan(method: string, route: string, attributes: Attributes): void {
  const span = trace.getActiveSpan();
  span?.updateName(`${method} ${route}`);
  span?.setAttributes({ 'http.route': route, ...attributes });
}

/** Adds `attributes` to the span under way, if there is one. */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The trace under way (32 lower-case hex digits), or null when nothing is traced. */
export function currentTraceId(): string | null {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext !== undefined && isSpanContextValid(spanContext) ? spanContext.traceId : null;
}

/** The W3C `traceparent` naming `span` as the parent: its trace, its id, whether it is sampled. */
export function traceparentOf(span: Span): string | null {
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return null;
  return formatTraceparent(spanContext);
}
