// The sandbox's tracing (workflows/tracing-interceptors.ts) speaks Temporal's protocol
// without loading Temporal's OpenTelemetry modules: the same header, and a traceparent read as
// the receivers read it. What it makes in a workflow is tested in test/workflows/tracing.test.ts.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TRACE_HEADER as TEMPORAL_TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { describe, expect, it } from 'vitest';
import { TRACE_HEADER } from '../../workflows/tracing-interceptors';
import { formatTraceparent, parseTraceparent } from '../../workflows/traceparent';

interface TraceContextCase {
  name: string;
  header: string | null;
  expect: { traceId: string; parentId: string; sampled: boolean } | null;
}

const { traceContexts } = JSON.parse(
  execFileSync('python3', [fileURLToPath(new URL('../../receivers/vectors/generate.py', import.meta.url))], { encoding: 'utf8' }),
) as { traceContexts: TraceContextCase[] };

it("carries the context in the header Temporal's interceptors read", () => {
  expect(TRACE_HEADER).toBe(TEMPORAL_TRACE_HEADER);
});

describe('parseTraceparent agrees with the receivers on every shared vector', () => {
  it.each(traceContexts)('$name', (vector) => {
    const context = parseTraceparent(vector.header ?? undefined);
    const seen = context && { traceId: context.traceId, parentId: context.spanId, sampled: (context.traceFlags & 1) === 1 };
    expect(seen).toEqual(vector.expect);
  });
});

it('keeps tracestate as it came, and writes back the traceparent it read', () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const context = parseTraceparent(traceparent, 'vendor=value');
  expect(context).toEqual({
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: 1,
    traceState: 'vendor=value',
  });
  expect(formatTraceparent(context!)).toBe(traceparent);
  expect(formatTraceparent({ ...context!, traceFlags: 0 })).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00');
});
