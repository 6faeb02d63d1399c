// The tracing suite's harness end to end: spans exported over OTLP/HTTP, as the service exports
// them when OTEL_EXPORTER_OTLP_ENDPOINT is set, read back from Jaeger and drawn as a waterfall.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startJaeger, type Jaeger, type JaegerSpan } from '../support/jaeger';
import { writeTraceWaterfall } from '../support/trace-picture';

const SERVICE = 'jaeger-harness';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('Jaeger as the trace backend', () => {
  let jaeger: Jaeger;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'trace-picture-'));
    jaeger = await startJaeger();
  });
  afterAll(async () => {
    await jaeger?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stores a trace sent over OTLP/HTTP, with its parents and attributes, and draws it', async () => {
    // The exporter reads the endpoint as the service's will: from the environment, adding /v1/traces.
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', jaeger.otlpEndpoint);
    // The processors in the constructor: addSpanProcessor is deprecated in 1.30 and gone in 2.0.
    const provider = new BasicTracerProvider({
      resource: new Resource({ 'service.name': SERVICE }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
    });
    vi.unstubAllEnvs();
    const tracer = provider.getTracer('jaeger.test');
    // Times given in milliseconds (no waiting): Jaeger answers in microseconds.
    const t0 = Date.now();
    const root = tracer.startSpan('deliver list write', { startTime: t0 });
    const inRoot = trace.setSpan(ROOT_CONTEXT, root);
    tracer.startSpan('look up webhooks', { startTime: t0 + 1 }, inRoot).end(t0 + 6);
    tracer.startSpan('send webhook', { startTime: t0 + 8, attributes: { 'webhook.id': 'wh_harness' } }, inRoot).end(t0 + 28);
    root.end(t0 + 30);
    await provider.forceFlush();
    await provider.shutdown();

    const traceId = root.spanContext().traceId;
    const stored = await jaeger.waitForTrace(traceId, (found) => found.spans.length === 3);
    const byName = new Map(stored.spans.map((span) => [span.operationName, span]));
    const parentOf = (span: JaegerSpan | undefined) =>
      span?.references.filter((reference) => reference.refType === 'CHILD_OF').map((r) => r.spanID);
    expect([...byName.keys()].sort()).toEqual(['deliver list write', 'look up webhooks', 'send webhook']);
    expect(parentOf(byName.get('deliver list write'))).toEqual([]);
    expect(parentOf(byName.get('look up webhooks'))).toEqual([root.spanContext().spanId]);
    expect(parentOf(byName.get('send webhook'))).toEqual([root.spanContext().spanId]);
    const send = byName.get('send webhook')!;
    expect([send.startTime - byName.get('deliver list write')!.startTime, send.duration]).toEqual([8_000, 20_000]);
    expect(send.tags).toContainEqual({ key: 'webhook.id', type: 'string', value: 'wh_harness' });
    expect(stored.processes[send.processID].serviceName).toBe(SERVICE);
    expect((await jaeger.traces(SERVICE)).map((found) => found.traceID)).toContain(traceId);

    const file = path.join(dir, 'trace.png');
    const picture = writeTraceWaterfall(file, stored, 'jaeger.test.ts: one trace');
    const png = await readFile(file);
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    // The IHDR chunk's width and height: the SVG's, rendered whole.
    const [, svgWidth, svgHeight] = /^<svg [^>]*width="(\d+)" height="(\d+)"/.exec(picture.svg)!;
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([Number(svgWidth), Number(svgHeight)]);
    for (const name of byName.keys()) expect(picture.svg).toContain(name);
  });
});
