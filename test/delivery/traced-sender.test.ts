// The span of each POST to a receiver, and the traceparent it hands on: around a sender the
// test passes, with the spans kept in memory.
import { context, trace } from '@opentelemetry/api';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { HttpExchange, HttpSender } from '../../src/delivery/sender';
import { traceSends, urlForSpan } from '../../src/delivery/traced-sender';
import { inMemoryTracing } from '../support/in-memory-tracing';

const tracing = inMemoryTracing();
afterAll(() => tracing.shutdown());
beforeEach(() => tracing.spans.reset());

const HEADERS = { 'svc-event': 'item.added', 'svc-signature': 't=1,v1=abc', 'svc-delivery': 'dlv_1', 'svc-webhook': 'wh_1' };

/** A sender that answers `statusCode` (or fails with `error`), keeping the headers it was given. */
function answering(statusCode: number | null, error: HttpExchange['result']['error'] = null) {
  const sent: Record<string, string>[] = [];
  const sender: HttpSender = {
    async post(url, body, headers) {
      sent.push(headers);
      return {
        result: { delivered: error === null, statusCode, durationMs: 3, error },
        request: { url, headers, body },
        response: null,
      };
    },
    close: async () => {},
  };
  return { sender, sent };
}

describe('urlForSpan', () => {
  it.each([
    ['https://user:pass@hooks.example.com:8443/in?token=s3cret#x', 'https://hooks.example.com:8443/in'],
    ['https://hooks.example.com/in', 'https://hooks.example.com/in'],
    ['relay://wh_1', 'relay://wh_1'],
    ['not a url', ''],
  ])('shows %s as %s', (url, shown) => {
    expect(urlForSpan(url)).toBe(shown);
  });
});

describe('traceSends', () => {
  it('makes a client span per POST with what it was and came to, and nothing secret', async () => {
    const { sender } = answering(500, 'non_2xx');
    await traceSends(sender, { traceReceivers: false }).post('https://u:p@hooks.example.com/in?key=k', '{}', HEADERS);
    const [span] = tracing.spans.getFinishedSpans();
    expect(span.name).toBe('POST');
    expect(span.attributes).toEqual({
      'http.request.method': 'POST',
      'url.full': 'https://hooks.example.com/in',
      'webhook.id': 'wh_1',
      'delivery.id': 'dlv_1',
      event: 'item.added',
      outcome: 'failed',
      'http.response.status_code': 500,
      'error.type': 'non_2xx',
    });
    expect(JSON.stringify(span.attributes)).not.toMatch(/abc|key=k|:p@/);
  });

  it('hands receivers a traceparent naming the POST span only when asked to', async () => {
    const off = answering(200);
    await traceSends(off.sender, { traceReceivers: false }).post('https://hooks.example.com/', '{}', HEADERS);
    expect(off.sent[0]).toEqual(HEADERS);

    const on = answering(200);
    const parent = trace.getTracer('test').startSpan('write');
    await context.with(trace.setSpan(context.active(), parent), () =>
      traceSends(on.sender, { traceReceivers: true }).post('https://hooks.example.com/', '{}', HEADERS),
    );
    parent.end();
    const post = tracing.spans
      .getFinishedSpans()
      .find((span) => span.name === 'POST' && span.attributes.outcome === 'delivered' && span.parentSpanId);
    const { traceId, spanId } = post!.spanContext();
    expect(traceId).toBe(parent.spanContext().traceId);
    expect(on.sent[0]).toEqual({ ...HEADERS, traceparent: `00-${traceId}-${spanId}-01` });
  });
});
