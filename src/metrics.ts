// Prometheus metrics of this process, served at GET /metrics (with the Temporal SDK's own,
// where the runtime exports them).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Finer, for work whose target is a millisecond. */
const SUB_MILLISECONDS = [0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1];

function counter<const L extends string>(name: string, help: string, labelNames: readonly L[]) {
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

/** A time in seconds. */
function histogram<const L extends string>(name: string, help: string, labelNames: readonly L[], buckets = SECONDS) {
  return new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });
}

export const metrics = {
  deliveries: counter(
    'webhook_deliveries_total',
    'Event deliveries attempted, by topic and outcome; error is the failure class or "none"',
    ['topic', 'outcome', 'error'],
  ),
  deliveriesSkipped: counter(
    'webhook_deliveries_skipped_total',
    'Event deliveries not attempted because the webhook was paused or deleted after the write was accepted',
    ['reason'],
  ),
  deliveryDuration: histogram('webhook_delivery_duration_seconds', 'Time of one event delivery, from dial to the end of the response', [
    'outcome',
  ]),
  registrations: counter(
    'webhook_registrations_total',
    'POST /v3/webhooks by outcome: created, updated, unreachable, url_not_allowed, limit_exceeded, invalid_list_ids',
    ['outcome'],
  ),
  pings: counter('webhook_pings_total', 'Pings sent on demand, by outcome', ['outcome', 'error']),
  redeliveries: counter('webhook_redeliveries_total', "Deliveries sent again at their owner's request, by outcome", ['outcome', 'error']),
  testEvents: counter('webhook_test_events_total', 'Test events sent on demand, by outcome', ['outcome', 'error']),
  probes: counter('webhook_probes_total', 'Probes of webhooks paused by failures, by outcome', ['outcome', 'error']),
  webhooksPaused: counter('webhooks_paused_total', 'Webhooks paused, by reason: auto_failures (20 consecutive failures) or manual', [
    'reason',
  ]),
  notices: counter(
    'webhook_notices_total',
    'Notices made (webhook.failing, webhook.paused), by type and what their mail was set to: pending, no_address, not_configured',
    ['type', 'mail'],
  ),
  noticeMails: counter(
    'notice_mails_total',
    'Notice mails, by outcome: sent, capped, no_address, not_configured, gone; failed counts attempts that failed',
    ['outcome'],
  ),
  writesAccepted: counter(
    'list_writes_accepted_total',
    'List writes accepted (answered 202, or acked from a broker); repeated: a writeId seen before',
    ['repeated'],
  ),
  brokerConsumed: counter('broker_messages_consumed_total', 'Messages consumed from a broker (nats, amqp), redeliveries included', [
    'broker',
  ]),
  brokerAcked: counter(
    'broker_messages_acked_total',
    'Messages acked: their write accepted, or their refusal kept in the dead-letter (rejected counts those)',
    ['broker'],
  ),
  brokerRejected: counter(
    'broker_messages_rejected_total',
    'Messages the route would refuse, moved to the dead-letter with their error, by its code',
    ['broker', 'code'],
  ),
  brokerRedelivered: counter(
    'broker_messages_redelivered_total',
    'Messages consumed that the broker had delivered before (to this or another process)',
    ['broker'],
  ),
  brokerFailed: counter(
    'broker_messages_failed_total',
    'Messages left unacked for a failure of ours (PostgreSQL or Temporal unreachable): NATS naks them with a delay, RabbitMQ requeues them after a pause',
    ['broker'],
  ),
  rateLimited: counter(
    'http_requests_rate_limited_total',
    'Public API requests answered 429, by the limit they were over: account, or address (without a valid token)',
    ['limit'],
  ),
  requestsWaiting: new Gauge({
    name: 'http_requests_waiting_for_account_turn',
    help: 'Public API requests waiting because as many of their account are already running in this process (ACCOUNT_REQUESTS_IN_FLIGHT)',
    registers: [registry],
  }),
  connectionsOpen: new Gauge({
    name: 'http_connections_open',
    help: 'Connections open to the HTTP server of this process, WebSockets of relay sessions included',
    registers: [registry],
  }),
  feedWaiting: new Gauge({
    name: 'event_feed_waiting_requests',
    help: 'Requests of the event feed this process holds (wait), until an item is recorded or their time is up',
    registers: [registry],
  }),
  connectionsRefused: counter(
    'http_connections_refused_total',
    'Connections closed as they were accepted, by reason: per_address (the client address held MAX_CONNECTIONS_PER_ADDRESS already)',
    ['reason'],
  ),
  httpRefused: counter(
    'http_requests_refused_total',
    'Requests the front door refused before the app, from memory: 413 by their Content-Length, 429 over a limit (account or address)',
    ['status', 'reason'],
  ),
  httpRequests: counter('http_requests_total', 'HTTP requests answered by the app, by method, route and status', [
    'method',
    'route',
    'status',
  ]),
  httpDuration: histogram('http_request_duration_seconds', 'HTTP request time, by method and route', ['method', 'route']),
  httpAuthDuration: histogram(
    'http_request_auth_seconds',
    "Time spent authenticating the token, applying the rate limit and waiting for the account's turn (ACCOUNT_REQUESTS_IN_FLIGHT), per public API request (refused ones too)",
    [],
    SUB_MILLISECONDS,
  ),
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
