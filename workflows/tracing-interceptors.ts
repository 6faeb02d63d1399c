// Runs inside the workflow sandbox, bundled beside the workflows only when tracing is on
// (src/temporal/tracing.ts loads it by path; workflows/index.ts does not export it): the
// workflow side of Temporal's OpenTelemetry tracing, speaking its protocol. A workflow,
// signal, update or query brings its caller's context in the `_tracer-data` header that
// Temporal's client interceptor writes; the spans made here (`RunWorkflow:…`, `HandleSignal:…`
// and the rest, named as Temporal's own interceptors name them) leave through the `exporter`
// sink, which `makeWorkflowExporter` turns into this process's spans; and activities,
// children, signals and continue-as-new get the span under way in the same header, which
// Temporal's activity interceptor reads.
//
// Why not Temporal's own workflow interceptors: they build an OpenTelemetry SDK in every
// workflow execution (its modules evaluated again, a tracer provider made), because workflows
// share no module state. With one short workflow per list write that was most of what
// tracing cost (docs/performance.md#tracings-cost). These make no SDK: a span here is a plain
// object, its context W3C's `traceparent`.
//
// Span ids come from a random stream of their own: the workflows' random (delivery ids,
// delivery-ids.ts) draws the same numbers with tracing on or off, and a span made for a
// query, which a replay never makes again, cannot shift it. An activity's scheduling
// makes no span (Temporal's `StartActivity`): a delivery's span is its activity's run.
import type { AsyncLocalStorage } from 'node:async_hooks';
import { ApplicationFailure, ApplicationFailureCategory, defaultPayloadConverter, type Headers } from '@temporalio/common';
import {
  SPAN_DELIMITER,
  SpanName,
  type OpenTelemetrySinks,
  type SerializableSpan,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import {
  ContinueAsNew,
  getRandomStream,
  proxySinks,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type LocalActivityInput,
  type Next,
  type QueryInput,
  type SignalInput,
  type SignalWorkflowInput,
  type StartChildWorkflowExecutionInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { formatTraceparent, parseTraceparent, type W3CSpanContext } from './traceparent';

/** The header Temporal's interceptors carry the context in (TRACE_HEADER of their instrumentation module, which loads the OpenTelemetry API). */
export const TRACE_HEADER = '_tracer-data';

const SPAN_RANDOM_STREAM = 'svc-webhooks/tracing';

/** OpenTelemetry's SpanKind.INTERNAL and SpanStatusCode, as numbers: the API is not loaded here. */
const INTERNAL = 0;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;
/** TraceFlags.SAMPLED. */
const SAMPLED = 0x01;

/** The carrier Temporal's interceptors put in the header: W3C Trace Context's two fields. */
interface Carrier {
  traceparent?: string;
  tracestate?: string;
}

/** A span under way: its context, and what its end exports. */
interface OpenSpan {
  name: string;
  context: W3CSpanContext;
  parentSpanId?: string;
  startMs: number;
  attributes: Record<string, string>;
  /** The header naming this span as the parent, made once however many activities it schedules. */
  header?: Headers[string];
}

/** The context a header brings, or undefined: none, or not a valid traceparent. */
function contextFromHeaders(headers: Headers): W3CSpanContext | undefined {
  const payload = headers[TRACE_HEADER];
  if (payload === undefined) return undefined;
  const carrier = defaultPayloadConverter.fromPayload<Carrier>(payload);
  return parseTraceparent(carrier.traceparent, carrier.tracestate) ?? undefined;
}

function hexOf(bytes: number): string {
  const drawn = getRandomStream(SPAN_RANDOM_STREAM).fill(new Uint8Array(bytes));
  return Array.from(drawn, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function startSpan(name: string, parent: W3CSpanContext | undefined, attributes: Record<string, string> = {}): OpenSpan {
  const context = parent
    ? { traceId: parent.traceId, spanId: hexOf(8), traceFlags: parent.traceFlags, traceState: parent.traceState }
    : { traceId: hexOf(16), spanId: hexOf(8), traceFlags: SAMPLED };
  return { name, context, parentSpanId: parent?.spanId, startMs: Date.now(), attributes };
}

/** [seconds, nanoseconds] since the epoch, OpenTelemetry's HrTime, from a workflow's clock (milliseconds). */
function hrTime(ms: number): [number, number] {
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
}

/** How a failure marks its span: Temporal's rule (a benign ApplicationFailure leaves the status unset). */
function failureStatus(error: unknown): SerializableSpan['status'] {
  const benign = error instanceof ApplicationFailure && error.category === ApplicationFailureCategory.BENIGN;
  const message = error instanceof Error ? error.message : String(error);
  return benign ? { code: STATUS.unset, message } : { code: STATUS.error, message };
}

/** Exports `span`, ended now; not when its trace is unsampled, which the span processor would drop (no sink call for nothing). */
function endSpan(span: OpenSpan, status: SerializableSpan['status']): void {
  if ((span.context.traceFlags & SAMPLED) === 0) return;
  const endMs = Date.now();
  const { traceState, ...spanContext } = span.context;
  const exported: SerializableSpan = {
    name: span.name,
    kind: INTERNAL,
    spanContext: { ...spanContext, traceState, isRemote: false },
    parentSpanId: span.parentSpanId,
    startTime: hrTime(span.startMs),
    endTime: hrTime(endMs),
    duration: hrTime(endMs - span.startMs),
    status,
    attributes: span.attributes,
    links: [],
    events: [],
    ended: true,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    instrumentationLibrary: { name: '@temporalio/interceptor-workflow' },
  };
  proxySinks<OpenTelemetrySinks>().exporter.export([exported]);
}

/** One workflow execution's tracing: the span under way follows its async work, as OpenTelemetry's context does. */
class WorkflowTracing {
  // The sandbox's AsyncLocalStorage, disabled by the SDK when the workflow leaves the cache.
  private readonly current: AsyncLocalStorage<OpenSpan> = new (
    globalThis as unknown as { AsyncLocalStorage: new () => AsyncLocalStorage<OpenSpan> }
  ).AsyncLocalStorage();

  /**
   * Runs `work` in a span named `name`, the child of `parent`, which ends when `work` returns,
   * or, when it returns a promise, when that settles; `acceptable` failures leave it OK.
   */
  inSpan<T>(name: string, parent: W3CSpanContext | undefined, work: () => T, options: SpanOptions = {}): T {
    const span = startSpan(name, parent, options.attributes);
    const fail = (error: unknown) => {
      endSpan(span, options.acceptable?.(error) ? { code: STATUS.ok } : failureStatus(error));
      throw error;
    };
    try {
      const result = this.current.run(span, work);
      if (!(result instanceof Promise)) {
        endSpan(span, { code: STATUS.ok });
        return result;
      }
      return result.then((value: unknown) => {
        endSpan(span, { code: STATUS.ok });
        return value;
      }, fail) as T;
    } catch (error) {
      return fail(error);
    }
  }

  /** `input` with the span under way in its headers, the parent of whatever it starts; unchanged outside any span. */
  carryingContext<T extends { headers: Headers }>(input: T): T {
    const span = this.current.getStore();
    if (span === undefined) return input;
    span.header ??= defaultPayloadConverter.toPayload(carrierOf(span.context));
    return { ...input, headers: { ...input.headers, [TRACE_HEADER]: span.header } };
  }

  /** The span under way, or undefined. */
  active(): OpenSpan | undefined {
    return this.current.getStore();
  }
}

interface SpanOptions {
  attributes?: Record<string, string>;
  acceptable?: (error: unknown) => boolean;
}

function carrierOf(context: W3CSpanContext): Carrier {
  const traceparent = formatTraceparent(context);
  return context.traceState ? { traceparent, tracestate: context.traceState } : { traceparent };
}

const isContinueAsNew = (error: unknown) => error instanceof ContinueAsNew;

function spanName(kind: SpanName, what: string): string {
  return `${kind}${SPAN_DELIMITER}${what}`;
}

class TracingInbound implements WorkflowInboundCallsInterceptor {
  constructor(private readonly tracing: WorkflowTracing) {}

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    return this.fromCaller(SpanName.WORKFLOW_EXECUTE, workflowInfo().workflowType, input, () => next(input), {
      acceptable: isContinueAsNew,
    });
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
    return this.fromCaller(SpanName.WORKFLOW_HANDLE_SIGNAL, input.signalName, input, () => next(input));
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    return this.fromCaller(SpanName.WORKFLOW_HANDLE_UPDATE, input.name, input, () => next(input), {
      attributes: { temporalUpdateId: input.updateId },
    });
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>) {
    this.fromCaller(SpanName.WORKFLOW_VALIDATE_UPDATE, input.name, input, () => next(input), {
      attributes: { temporalUpdateId: input.updateId },
    });
  }

  handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) {
    return this.fromCaller(SpanName.WORKFLOW_HANDLE_QUERY, input.queryName, input, () => next(input));
  }

  /** A span for a call from outside the workflow, the child of the context its caller sent. */
  private fromCaller<T>(kind: SpanName, what: string, input: { headers: Headers }, work: () => T, options?: SpanOptions): T {
    return this.tracing.inSpan(spanName(kind, what), contextFromHeaders(input.headers), work, options);
  }
}

class TracingOutbound implements WorkflowOutboundCallsInterceptor {
  constructor(private readonly tracing: WorkflowTracing) {}

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return next(this.tracing.carryingContext(input));
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>) {
    return next(this.tracing.carryingContext(input));
  }

  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return this.inOwnSpan(spanName(SpanName.CHILD_WORKFLOW_START, input.workflowType), () => next(this.tracing.carryingContext(input)));
  }

  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    return this.inOwnSpan(spanName(SpanName.WORKFLOW_SIGNAL, input.signalName), () => next(this.tracing.carryingContext(input)));
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    const name = spanName(SpanName.CONTINUE_AS_NEW, input.options.workflowType ?? '');
    return this.inOwnSpan(name, () => next(this.tracing.carryingContext(input)), isContinueAsNew);
  }

  getLogAttributes(input: Record<string, unknown>, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>) {
    const span = this.tracing.active();
    if (span === undefined) return next(input);
    const { traceId, spanId, traceFlags } = span.context;
    return next({ trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`, ...input });
  }

  /** A span of its own for a call to another workflow, the child of the span under way. */
  private inOwnSpan<T>(name: string, work: () => T, acceptable?: (error: unknown) => boolean): T {
    return this.tracing.inSpan(name, this.tracing.active()?.context, work, { acceptable });
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  const tracing = new WorkflowTracing();
  return { inbound: [new TracingInbound(tracing)], outbound: [new TracingOutbound(tracing)] };
};
