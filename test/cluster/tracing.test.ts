// One trace per write on the full Temporal server, with the API and two workers as processes
// of their own, each exporting its spans: whichever worker runs the workflow and whichever
// runs each delivery, the trace reads as it does on the dev server (test/tracing).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startJaeger, type Jaeger } from '../support/jaeger';
import { freePort } from '../support/ports';
import { prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import {
  checkWriteTrace,
  reportTracedWrite,
  setUpTracedWebhook,
  tracingEnv,
  upstreamTraceparent,
  waitForWriteTrace,
  writeIdOf,
} from '../tracing/support/write-traces';

const WRITES = 6;

let dir: string;
let jaeger: Jaeger;
let processes: ServiceProcesses;
const parts: PartProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-cluster-tracing-'));
  jaeger = await startJaeger();
  processes = await prepareServiceProcesses({ databaseUrl: inject('databaseUrl'), temporalAddress: inject('temporalAddress'), dir });
  const env = { ...processes.env, ...tracingEnv(jaeger) };
  for (const name of ['worker-1', 'worker-2']) parts.push(await startPart('worker', { ...env, OTEL_SERVICE_NAME: name }, await freePort()));
  parts.push(await startPart('api', { ...env, OTEL_SERVICE_NAME: 'api' }, processes.apiPort));
});

afterAll(async () => {
  await Promise.allSettled(parts.map((part) => part.stop()));
  await processes?.close();
  await jaeger?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('on the full Temporal server, with the API and two workers as processes', () => {
  it("continues each write's upstream trace through whichever worker runs it", async () => {
    const webhook = await setUpTracedWebhook(processes, 'cluster-traces');
    const upstreams = Array.from({ length: WRITES }, () => upstreamTraceparent());
    const answers = await Promise.all(
      upstreams.map((upstream) => reportTracedWrite(processes, webhook, writeIdOf('cluster'), { traceparent: upstream.traceparent })),
    );
    expect(answers).toEqual(Array(WRITES).fill(202));
    const workersSeen = new Set<string>();
    for (const upstream of upstreams) {
      const trace = await waitForWriteTrace(jaeger, upstream.traceId, 2);
      checkWriteTrace(trace, processes, webhook, upstream.spanId);
      for (const span of trace.spans) {
        const service = trace.processes[span.processID].serviceName;
        if (service.startsWith('worker')) workersSeen.add(service);
      }
    }
    // Which worker takes a task is Temporal's choice: the figure, not a condition.
    console.log(`${WRITES} traced writes, their spans from ${[...workersSeen].sort().join(' and ')}`);
  });
});
