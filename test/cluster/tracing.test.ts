// One trace per write on the full Temporal server, with the API and two workers as processes
// of their own, each exporting its spans: whichever worker runs the workflow and whichever
// runs each delivery, the trace reads as it does on the dev server (test/tracing).
import { describe, expect, it } from 'vitest';
import {
  checkWriteTrace,
  reportTracedWrite,
  setUpTracedWebhook,
  upstreamTraceparent,
  useTracedService,
  waitForWriteTrace,
  writeIdOf,
} from '../tracing/support/write-traces';

const WRITES = 6;

const service = useTracedService([
  { part: 'worker', serviceName: 'worker-1' },
  { part: 'worker', serviceName: 'worker-2' },
  { part: 'api', serviceName: 'api' },
]);

describe('on the full Temporal server, with the API and two workers as processes', () => {
  it("continues each write's upstream trace through whichever worker runs it", async () => {
    const webhook = await setUpTracedWebhook(service.processes, 'cluster-traces');
    const upstreams = Array.from({ length: WRITES }, () => upstreamTraceparent());
    const answers = await Promise.all(
      upstreams.map((upstream) =>
        reportTracedWrite(service.processes, webhook, writeIdOf('cluster'), { traceparent: upstream.traceparent }),
      ),
    );
    expect(answers).toEqual(Array(WRITES).fill(202));
    const workersSeen = new Set<string>();
    for (const upstream of upstreams) {
      const trace = await waitForWriteTrace(service.jaeger, upstream.traceId, 2);
      checkWriteTrace(trace, service.processes, webhook, upstream.spanId);
      for (const span of trace.spans) {
        const { serviceName } = trace.processes[span.processID];
        if (serviceName.startsWith('worker')) workersSeen.add(serviceName);
      }
    }
    // Which worker takes a task is Temporal's choice: the figure, not a condition.
    console.log(`${WRITES} traced writes, their spans from ${[...workersSeen].sort().join(' and ')}`);
  });
});
