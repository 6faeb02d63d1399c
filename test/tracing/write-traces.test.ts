// One trace per write, read back from Jaeger: the API and a worker as processes of their own
// (dist/src/main.js api|worker) exporting by OTLP/HTTP, on the run's Temporal dev server and
// database. A write that brings the upstream's traceparent continues its trace; one without
// starts a trace; a repeat of a write starts no second trace of deliveries. The trace of the
// first is drawn for docs/operating.md.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startJaeger, type Jaeger } from '../support/jaeger';
import { freePort } from '../support/ports';
import { prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import { writeTraceWaterfall } from '../support/trace-picture';
import {
  checkWriteTrace,
  receivedTraceId,
  reportTracedWrite,
  setUpTracedWebhook,
  tracingEnv,
  upstreamTraceparent,
  waitForWriteTrace,
  writeIdOf,
  type TracedWebhook,
} from './support/write-traces';

const PICTURE = path.resolve(__dirname, '../../docs/trace-waterfall.png');

let dir: string;
let jaeger: Jaeger;
let processes: ServiceProcesses;
let parts: PartProcess[] = [];
let webhook: TracedWebhook;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-tracing-'));
  jaeger = await startJaeger();
  processes = await prepareServiceProcesses({ databaseUrl: inject('databaseUrl'), temporalAddress: inject('temporalAddress'), dir });
  // Each part under a name of its own, as an operator may name them (OTEL_SERVICE_NAME).
  const env = { ...processes.env, ...tracingEnv(jaeger) };
  parts = [
    await startPart('worker', { ...env, OTEL_SERVICE_NAME: 'webhooks-worker' }, await freePort()),
    await startPart('api', { ...env, OTEL_SERVICE_NAME: 'webhooks-api' }, processes.apiPort),
  ];
  webhook = await setUpTracedWebhook(processes, 'write-traces');
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(parts.map((part) => part.stop()));
  await processes?.close();
  await jaeger?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a traced write', () => {
  it("continues the upstream's trace from its request to every receiver's answer", async () => {
    const upstream = upstreamTraceparent();
    const headers = { traceparent: upstream.traceparent, tracestate: 'upstream=internal', baggage: 'user=private' };
    expect(await reportTracedWrite(processes, webhook, writeIdOf('upstream'), headers)).toBe(202);
    const trace = await waitForWriteTrace(jaeger, upstream.traceId, 2);
    checkWriteTrace(trace, processes, webhook, upstream.spanId);
    const serviceOf = (name: string) =>
      new Set(trace.spans.filter((span) => span.operationName === name).map((span) => trace.processes[span.processID].serviceName));
    expect(serviceOf('postgresql record_list_write')).toEqual(new Set(['webhooks-api']));
    expect(serviceOf('RunActivity:deliverEvent')).toEqual(new Set(['webhooks-worker']));
    // The upstream's baggage and trace state stay with us: in no span either.
    expect(JSON.stringify(trace)).not.toContain('user=private');
    writeTraceWaterfall(PICTURE, trace, 'One write, two deliveries: the upstream’s trace through the API, Temporal and each receiver');
  });

  it('starts a trace of its own when the upstream sends none', async () => {
    const seen = new Set(processes.receiver.requests.map((r) => String(r.headers.traceparent).split('-')[1]));
    expect(await reportTracedWrite(processes, webhook, writeIdOf('untraced'))).toBe(202);
    const traceId = await receivedTraceId(processes, webhook, 2, seen);
    checkWriteTrace(await waitForWriteTrace(jaeger, traceId, 2), processes, webhook, null);
  });

  it('starts no second trace of deliveries for a repeat of the same write', async () => {
    const writeId = writeIdOf('repeated');
    const first = upstreamTraceparent();
    expect(await reportTracedWrite(processes, webhook, writeId, { traceparent: first.traceparent })).toBe(202);
    await waitForWriteTrace(jaeger, first.traceId, 2);
    const repeat = upstreamTraceparent();
    expect(await reportTracedWrite(processes, webhook, writeId, { traceparent: repeat.traceparent })).toBe(202);
    const repeatTrace = await jaeger.waitForTrace(repeat.traceId, (trace) =>
      trace.spans.some((span) => span.operationName === 'StartWorkflow:deliverListWrite'),
    );
    expect(repeatTrace.spans.filter((span) => span.operationName.startsWith('RunActivity'))).toEqual([]);
    const delivered = processes.receiver.requests.filter((r) => String(r.headers.traceparent).includes(repeat.traceId));
    expect(delivered).toEqual([]);
  });
});
