// Prometheus metrics of this process, served at GET /metrics (with the Temporal SDK's own,
// where the runtime exports them).
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const metrics = {
  deliveries: new Counter({
    name: 'webhook_deliveries_total',
    help: 'Event deliveries attempted, by topic and outcome; error is the failure class or "none"',
    labelNames: ['topic', 'outcome', 'error'] as const,
    registers: [registry],
  }),
  deliveriesSkipped: new Counter({
    name: 'webhook_deliveries_skipped_total',
    help: 'Event deliveries not attempted because the webhook was paused or deleted after the write was accepted',
    labelNames: ['reason'] as const,
    registers: [registry],
  }),
  deliveryDuration: new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'Time of one event delivery, from dial to the end of the response',
    labelNames: ['outcome'] as const,
    buckets: SECONDS,
    registers: [registry],
  }),
  registrations: new Counter({
    name: 'webhook_registrations_total',
    help: 'POST /v3/webhooks by outcome: created, updated, unreachable, url_not_allowed, limit_exceeded, invalid_list_ids',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  pings: new Counter({
    name: 'webhook_pings_total',
    help: 'Pings sent on demand, by outcome',
    labelNames: ['outcome', 'error'] as const,
    registers: [registry],
  }),
  redeliveries: new Counter({
    name: 'webhook_redeliveries_total',
    help: 'Deliveries sent again at their owner\'s request, by outcome',
    labelNames: ['outcome', 'error'] as const,
    registers: [registry],
  }),
  webhooksPaused: new Counter({
    name: 'webhooks_paused_total',
    help: 'Webhooks paused, by reason: auto_failures (20 consecutive failures) or manual',
    labelNames: ['reason'] as const,
    registers: [registry],
  }),
  writesAccepted: new Counter({
    name: 'list_writes_accepted_total',
    help: 'List writes answered 202; repeated: a writeId seen before',
    labelNames: ['repeated'] as const,
    registers: [registry],
  }),
  httpRequests: new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  }),
  httpDuration: new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request time, by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: SECONDS,
    registers: [registry],
  }),
};

export type Metrics = typeof metrics;

/** This process's metrics, followed by the Temporal SDK's when its exporter runs at `sdkMetricsUrl`. */
export async function metricsText(sdkMetricsUrl?: string): Promise<string> {
  const own = await registry.metrics();
  if (!sdkMetricsUrl) return own;
  try {
    const sdk = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) });
    return `${own}\n# Temporal SDK\n${await sdk.text()}`;
  } catch {
    return own; // the SDK's exporter is an extra; our own metrics still answer
  }
}
