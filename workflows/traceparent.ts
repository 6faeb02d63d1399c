// W3C Trace Context's traceparent, read and written without the OpenTelemetry API: for the
// workflow sandbox's tracing (tracing-interceptors.ts), where loading the API would cost each
// workflow execution its modules again, for the service's own spans (src/tracing/spans.ts),
// and for the TypeScript receiver library (receivers/typescript), which must not need the API.

/** A span's context as OpenTelemetry's SpanContext holds it, `traceState` as its header string. */
export interface W3CSpanContext {
  /** 32 lower-case hex digits. */
  traceId: string;
  /** 16 lower-case hex digits. */
  spanId: string;
  /** The flags byte: bit 0 is `sampled`. */
  traceFlags: number;
  traceState?: string;
}

/** version-traceid-parentid-flags, then, after a version above 00, more fields after a dash. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The span context a traceparent names, or null when it is absent or invalid (W3C Trace Context
 * level 1: version ff, extra fields after version 00, an all-zero trace-id or parent-id and
 * upper-case hex are invalid). `tracestate` rides along as it came.
 */
export function parseTraceparent(traceparent: string | undefined, tracestate?: string): W3CSpanContext | null {
  const match = TRACEPARENT.exec(traceparent ?? '');
  if (match === null) return null;
  const [, version, traceId, spanId, flags, extra] = match;
  if (version === 'ff' || (version === '00' && extra !== undefined)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  const context = { traceId, spanId, traceFlags: parseInt(flags, 16) };
  return tracestate ? { ...context, traceState: tracestate } : context;
}

/** The traceparent naming `context`'s span as the parent. */
export function formatTraceparent({ traceId, spanId, traceFlags }: Pick<W3CSpanContext, 'traceId' | 'spanId' | 'traceFlags'>): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
