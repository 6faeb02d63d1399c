// Tracing as the service starts it (src/tracing/setup.ts), with the spans kept in memory for
// the test to read rather than exported.
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Tracing } from '../../src/tracing/setup';

export function inMemoryTracing(): Tracing & { on: true; spans: InMemorySpanExporter } {
  const spans = new InMemorySpanExporter();
  const spanProcessor = new SimpleSpanProcessor(spans);
  const resource = new Resource({ 'service.name': 'svc-webhooks-test' });
  // Global, as the service's is: the client's and the activities' interceptors use the global tracer.
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { on: true, traceReceivers: false, spanProcessor, resource, spans, shutdown: () => provider.shutdown() };
}
