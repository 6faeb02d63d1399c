// Temporal's part of a trace: the client's interceptor puts the span under way in the headers
// of each workflow it starts, signals, updates or queries; the workflows' interceptors (run in
// the sandbox, workflows/tracing-interceptors.ts) make their spans and pass the context on
// to activities; the activities' interceptor continues it. None of them changes a workflow's
// commands: histories recorded with tracing on replay with it off, and the other way round.
import path from 'node:path';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import { OpenTelemetryActivityInboundInterceptor, makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { ClientOptions } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../tracing/setup';

/** A Temporal client's interceptors: none with tracing off. */
export function clientTracing(tracing: Tracing): Pick<ClientOptions, 'interceptors'> {
  return tracing.on ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {};
}

/** A worker's interceptors and the sink its workflows' spans leave the sandbox by: none with tracing off. */
export function workerTracing(tracing: Tracing): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!tracing.on) return {};
  return {
    interceptors: {
      // A path without extension: the workflow bundler finds the .ts in the sources and the .js when built.
      workflowModules: [path.join(__dirname, '../../workflows/tracing-interceptors')],
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
