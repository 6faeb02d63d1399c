// One trace per write, read back from Jaeger: the API and a worker as processes of their own
// (dist/src/main.js api|worker) exporting by OTLP/HTTP, on the run's Temporal dev server and
// database. A write that brings the upstream's traceparent continues its trace; one without
// starts a trace; a repeat of a write starts no second trace of deliveries. The trace of the
// first is drawn for docs/operating.md.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTraceWaterfall } from '../support/trace-picture';
import {
  checkWriteTrace,
  receivedTraceId,
  reportTracedWrite,
  setUpTracedWebhook,
  upstreamTraceparent,
  useTracedService,
  waitForWriteTrace,
  writeIdOf,
  type TracedWebhook,
} from './support/write-traces';

const PICTURE = path.resolve(__dirname, '../../docs/trace-waterfall.png');

// Each part under a name of its own, as an operator may name them (OTEL_SERVICE_NAME).
const service = useTracedService([
  { part: 'worker', serviceName: 'webhooks-worker' },
  { part: 'api', serviceName: 'webhooks-api' },
]);
let webhook: TracedWebhook;
beforeAll(async () => {
  webhook = await setUpTracedWebhook(service.processes, 'write-traces');
});

describe('a traced write', () => {
  it("continues the upstream's trace from its request to every receiver's answer", async () => {
    const upstream = upstreamTraceparent();
    const headers = { traceparent: upstream.traceparent, tracestate: 'upstream=internal', baggage: 'user=private' };
    expect(await reportTracedWrite(service.processes, webhook, writeIdOf('upstream'), headers)).toBe(202);
    const trace = await waitForWriteTrace(service.jaeger, upstream.traceId, 2);
    checkWriteTrace(trace, service.processes, webhook, upstream.spanId);
    const serviceOf = (name: string) =>
      new Set(trace.spans.filter((span) => span.operationName === name).map((span) => trace.processes[span.processID].serviceName));
    expect(serviceOf('postgresql record_list_write')).toEqual(new Set(['webhooks-api']));
    expect(serviceOf('RunActivity:deliverEvent')).toEqual(new Set(['webhooks-worker']));
    // The upstream's baggage and trace state stay with us: in no span either.
    expect(JSON.stringify(trace)).not.toContain('user=private');
    writeTraceWaterfall(PICTURE, trace, 'One write, two deliveries: the upstream’s trace through the API, Temporal and each receiver');
  });

  it('starts a trace of its own when the upstream sends none', async () => {
    const seen = new Set(service.processes.receiver.requests.map((r) => String(r.headers.traceparent).split('-')[1]));
    expect(await reportTracedWrite(service.processes, webhook, writeIdOf('untraced'))).toBe(202);
    const traceId = await receivedTraceId(service.processes, webhook, 2, seen);
    checkWriteTrace(await waitForWriteTrace(service.jaeger, traceId, 2), service.processes, webhook, null);
  });

  it('starts no second trace of deliveries for a repeat of the same write', async () => {
    const writeId = writeIdOf('repeated');
    const first = upstreamTraceparent();
    expect(await reportTracedWrite(service.processes, webhook, writeId, { traceparent: first.traceparent })).toBe(202);
    await waitForWriteTrace(service.jaeger, first.traceId, 2);
    const repeat = upstreamTraceparent();
    expect(await reportTracedWrite(service.processes, webhook, writeId, { traceparent: repeat.traceparent })).toBe(202);
    const repeatTrace = await service.jaeger.waitForTrace(repeat.traceId, (trace) =>
      trace.spans.some((span) => span.operationName === 'StartWorkflow:deliverListWrite'),
    );
    expect(repeatTrace.spans.filter((span) => span.operationName.startsWith('RunActivity'))).toEqual([]);
    const delivered = service.processes.receiver.requests.filter((r) => String(r.headers.traceparent).includes(repeat.traceId));
    expect(delivered).toEqual([]);
  });
});
