// OpenTelemetry in this process (docs/operating.md, "Tracing"). Nothing of the SDK loads unless
// tracing is asked for: an OTLP endpoint to export to, or trace context for receivers (which
// needs span ids even with nowhere to send the spans). It must start before the HTTP server is
// loaded, so that its instrumentation patches it: src/main.ts loads the service after. Koa's
// instrumentation is not used: it does not see @koa/router's routes, so the request log
// middleware names each request's span by its route (nameRequestSpan).
import type { IncomingMessage } from 'node:http';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { version } from '../../package.json';
import type { TracingConfig } from '../config';

/** Whether spans are made and trace context travels: through the API, Temporal and every delivery. */
export type Tracing =
  | { readonly on: false; shutdown(): Promise<void> }
  | {
      readonly on: true;
      /** Receivers get `traceparent` (TRACE_RECEIVERS=on). */
      readonly traceReceivers: boolean;
      /** Where the worker's sink hands the spans its workflows make: to the exporter, or nowhere. */
      readonly spanProcessor: SpanProcessor;
      readonly resource: Resource;
      /** Sends the spans still buffered. */
      shutdown(): Promise<void>;
    };

export const TRACING_OFF: Tracing = { on: false, shutdown: async () => {} };

/** Requests that are not worth a trace: probes and scrapes, every few seconds. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Starts the SDK when `config` asks for tracing: a tracer provider with the W3C trace context
 * propagator alone (never baggage), the sampler of OTEL_TRACES_SAMPLER, and an OTLP/HTTP
 * exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter reads the standard variables).
 */
export async function startTracing(config: TracingConfig): Promise<Tracing> {
  if (!config.exporting && !config.traceReceivers) return TRACING_OFF;
  const [{ W3CTraceContextPropagator }, { registerInstrumentations }, http, resources, base, node, otlp] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the defaults.
  const resource = new resources.Resource({ 'service.name': 'svc-webhooks', 'service.version': version }).merge(
    resources.envDetectorSync.detect(),
  );
  const spanProcessor = config.exporting ? new base.BatchSpanProcessor(new otlp.OTLPTraceExporter()) : new base.NoopSpanProcessor();
  const provider = new node.NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new http.HttpInstrumentation({
        // Our only outbound HTTP is undici's (deliveries: their spans are src/delivery/traced-sender.ts's).
        disableOutgoingRequestInstrumentation: true,
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has(pathOf(request)),
        // A URL's query string never enters a span: these replace the attributes that carry it.
        startIncomingSpanHook: (request) => {
          const target = pathOf(request);
          return { 'http.target': target, 'http.url': `http://${request.headers.host ?? 'localhost'}${target}` };
        },
      }),
    ],
  });
  return { on: true, traceReceivers: config.traceReceivers, spanProcessor, resource, shutdown: () => provider.shutdown() };
}

function pathOf(request: IncomingMessage): string {
  return (request.url ?? '/').split('?')[0];
}
