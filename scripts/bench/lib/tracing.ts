// BENCH_TRACING=on: the service traced as docs/operating.md turns it on (every trace sampled,
// exported by OTLP/HTTP, traceparent to receivers), its spans sent to the bench's own sink
// (trace-sink.ts); and what the sink received over each step.
import { type TraceSinkApi } from '../trace-sink';
import { forkChild } from './children';
import { rpcClient } from './ipc';
import { type Measured, type ProcessSampler } from './proc';
import { sleep } from './stack';
import { round } from './stats';
import { type TraceExport, type TraceSink } from './types';

/** The sink's process group: sampled, but in none of the service's figures nor "all processes". */
export const TRACE_SINK_GROUP = 'trace-sink';

/**
 * How long after a step its last spans may still be on their way: the batch span processor
 * sends a batch at most OTEL_BSP_SCHEDULE_DELAY (5 s by default) after its first span ended,
 * and the export itself takes a moment.
 */
const EXPORT_SETTLE_MS = 6_000;

/** Forks the sink (trace-sink.ts) on a free loopback port and samples its process. */
export async function startTraceSink(sampler: ProcessSampler): Promise<TraceSink> {
  const child = forkChild('trace sink', 'trace-sink.js', {});
  const rpc = rpcClient<TraceSinkApi>(child);
  const { port } = await rpc('start');
  sampler.addGroup(TRACE_SINK_GROUP, () => [child.pid!]);
  return { endpoint: `http://127.0.0.1:${port}`, counts: () => rpc('counts') };
}

/**
 * The tracing variables of the service's processes: with a sink, every trace exported to it
 * (the default sampler) and traceparent to receivers; without one, none. Those of the bench's
 * own environment are dropped, so that BENCH_TRACING alone decides.
 */
export function serviceTracingEnvironment(sink: TraceSink | null): NodeJS.ProcessEnv {
  const inherited = Object.keys(process.env).filter((name) => name.startsWith('OTEL_') || name === 'TRACE_RECEIVERS');
  const unset = Object.fromEntries(inherited.map((name) => [name, undefined]));
  return sink ? { ...unset, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, TRACE_RECEIVERS: 'on' } : unset;
}

/**
 * Starts counting what the sink receives over a step (null without a sink). The function it
 * returns, called once the step's CPU window is closed, waits for the step's last spans and
 * gives the counts per delivery; those last exports fall outside the CPU window, as the spans
 * of the step before fall outside this one.
 */
export async function countTraceExports(sink: TraceSink | null) {
  if (!sink) return null;
  const before = await sink.counts();
  return async (measured: Measured, deliveries: number): Promise<TraceExport> => {
    await sleep(EXPORT_SETTLE_MS);
    const after = await sink.counts();
    const spans = after.spans - before.spans;
    const bytes = after.bytes - before.bytes;
    const per = Math.max(1, deliveries);
    return {
      requests: after.requests - before.requests,
      bytes,
      spans,
      uncounted: after.uncounted - before.uncounted,
      spansPerDelivery: round(spans / per, 2),
      bytesPerDelivery: round(bytes / per, 0),
      sinkCpuMsPerDelivery: round((measured.groups[TRACE_SINK_GROUP]?.cpuMs ?? 0) / per, 3),
    };
  };
}
