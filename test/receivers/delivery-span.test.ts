// withDeliverySpan (receivers/typescript): the receiver's handling in a span that continues the
// delivery's trace, with OpenTelemetry's SDK recording into memory; and, when
// @opentelemetry/api cannot be loaded, the handling alone.
import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WebhookReceiver, withDeliverySpan, type Verdict } from '../../receivers/typescript/index';
import { signPayload } from '../../src/delivery/signing';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const WEBHOOK_ID = 'wh_0123456789abcdef01234567';
const DELIVERY_ID = 'dlv_000000000000000000000001';

const secret = `whsec_${randomBytes(32).toString('base64url')}`;
const receiver = new WebhookReceiver({ secrets: secret });

/** The verdict on a list.changed delivery at `cursor` as the service sends it, with `traceparent` if given. */
function judge(cursor: number, traceparent?: string): Promise<Verdict> {
  const body = JSON.stringify({ event: 'list.changed', listId: 'groceries', cursor, at: '2026-11-21T10:00:00.000Z' });
  const headers = {
    'svc-event': 'list.changed',
    'svc-webhook': WEBHOOK_ID,
    'svc-delivery': DELIVERY_ID,
    'svc-signature': signPayload(body, secret),
    ...(traceparent !== undefined && { traceparent }),
  };
  return receiver.receive(headers, body);
}

// A BasicTracerProvider with the context manager of Node (AsyncLocalStorage), so that the span
// withDeliverySpan starts is the active one inside the handling, as in a receiver's own setup.
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
const tracer = trace.getTracer('delivery-span.test');

afterEach(() => exporter.reset());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

describe('withDeliverySpan, with @opentelemetry/api', () => {
  it("runs the handling in a child of the delivery's traceparent, named and described by the delivery", async () => {
    const verdict = await judge(1, `00-${TRACE_ID}-${PARENT_ID}-01`);
    let activeInHandling;
    const handled = await withDeliverySpan(verdict, async () => {
      activeInHandling = trace.getActiveSpan()?.spanContext();
      tracer.startSpan('store the change').end();
      return 'handled';
    });

    expect(handled).toBe('handled');
    const [child, span] = exporter.getFinishedSpans();
    expect(span).toMatchObject({
      name: 'receive list.changed',
      kind: SpanKind.CONSUMER,
      parentSpanId: PARENT_ID,
      attributes: { 'webhook.id': WEBHOOK_ID, 'delivery.id': DELIVERY_ID, event: 'list.changed' },
      status: { code: SpanStatusCode.UNSET },
    });
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(activeInHandling).toEqual(span.spanContext());
    expect(child).toMatchObject({ name: 'store the change', parentSpanId: span.spanContext().spanId });
    expect(child.spanContext().traceId).toBe(TRACE_ID);
  });

  it('records nothing when the service did not sample the trace, and still continues it', async () => {
    const verdict = await judge(2, `00-${TRACE_ID}-${PARENT_ID}-00`);
    const activeInHandling = await withDeliverySpan(verdict, () => trace.getActiveSpan());
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(activeInHandling?.isRecording()).toBe(false);
    expect(activeInHandling?.spanContext().traceId).toBe(TRACE_ID);
  });

  it("without a trace context, is a child of the caller's active span, or a root", async () => {
    const verdict = await judge(3, 'not a traceparent');
    expect(verdict.trace).toBeNull();
    await tracer.startActiveSpan('POST /hooks', async (server) => {
      await withDeliverySpan(verdict, () => undefined);
      server.end();
    });
    await withDeliverySpan(verdict, () => undefined);

    const [inServer, server, root] = exporter.getFinishedSpans();
    expect(inServer).toMatchObject({ name: 'receive list.changed', parentSpanId: server.spanContext().spanId });
    expect(inServer.spanContext().traceId).toBe(server.spanContext().traceId);
    expect(root).toMatchObject({ name: 'receive list.changed', parentSpanId: undefined });
  });

  it('names a ping by its event alone, and marks the span of a failed handling as an error', async () => {
    const ping = await receiver.receive({ 'svc-event': 'ping', traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }, '');
    const failure = new Error('the queue is down');
    await expect(
      withDeliverySpan(ping, () => {
        throw failure;
      }),
    ).rejects.toBe(failure);

    const [span] = exporter.getFinishedSpans();
    expect(span).toMatchObject({
      name: 'receive ping',
      parentSpanId: PARENT_ID,
      attributes: { event: 'ping' },
      status: { code: SpanStatusCode.ERROR, message: 'the queue is down' },
    });
    expect(Object.keys(span.attributes)).toEqual(['event']);
    expect(span.events.map((event) => event.name)).toEqual(['exception']);
  });
});

describe('withDeliverySpan, when @opentelemetry/api cannot be loaded', () => {
  it('simply runs the handling, and starts no span', async () => {
    const verdict = await judge(4, `00-${TRACE_ID}-${PARENT_ID}-01`);
    const loadOpenTelemetry = () => {
      throw new Error("Cannot find module '@opentelemetry/api'");
    };
    let activeInHandling;
    const handled = await withDeliverySpan(
      verdict,
      () => {
        activeInHandling = trace.getActiveSpan();
        return 'handled';
      },
      { loadOpenTelemetry },
    );
    expect(handled).toBe('handled');
    expect(activeInHandling).toBeUndefined();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
