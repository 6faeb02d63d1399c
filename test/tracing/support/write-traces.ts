// What one traced write must look like in the trace backend, whichever Temporal server and
// however many workers run it: the upstream's span as the parent, every span of the request, the
// record, the workflow and each delivery, each under the span that caused it, the attributes the
// operator filters on, and nothing secret. Shared by test/tracing (the dev server) and
// test/cluster (the full server, two workers).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { startJaeger, type Jaeger, type JaegerSpan, type JaegerTrace } from '../../support/jaeger';
import { freePort } from '../../support/ports';
import { prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../../support/processes';
import { waitFor } from '../../support/wait';

export interface TracedService {
  readonly jaeger: Jaeger;
  readonly processes: ServiceProcesses;
}

/**
 * For a test file: Jaeger, and the service's parts as processes on the run's Temporal server
 * and database, each exporting its spans to Jaeger (every 200 ms) under the OTEL_SERVICE_NAME
 * given, receivers getting traceparent. Workers start first: the first creates the schedules.
 */
export function useTracedService(parts: { part: 'api' | 'worker'; serviceName: string }[]): TracedService {
  const service = {} as { jaeger: Jaeger; processes: ServiceProcesses };
  let dir: string | undefined;
  const running: PartProcess[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'webhooks-traced-'));
    service.jaeger = await startJaeger();
    service.processes = await prepareServiceProcesses({
      databaseUrl: inject('databaseUrl'),
      temporalAddress: inject('temporalAddress'),
      dir,
    });
    const env = {
      ...service.processes.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: service.jaeger.otlpEndpoint,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      TRACE_RECEIVERS: 'on',
    };
    for (const { part, serviceName } of [...parts].sort((a, b) => (a.part === b.part ? 0 : a.part === 'worker' ? -1 : 1))) {
      const port = part === 'api' ? service.processes.apiPort : await freePort();
      running.push(await startPart(part, { ...env, OTEL_SERVICE_NAME: serviceName }, port));
    }
  }, 180_000);
  afterAll(async () => {
    await Promise.allSettled(running.map((part) => part.stop()));
    await service.processes?.close();
    await service.jaeger?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return service;
}

/** What the receiver answers, and what must therefore never reach a span. */
const RECEIVER_BODY = 'receiver-private-body';
const RECEIVER_HEADER = 'receiver-private-header';
const URL_QUERY_SECRET = 'url-query-secret';

export interface TracedWebhook {
  listId: string;
  webhookId: string;
  /** Where the receiver gets its deliveries: the path with the URL's query string. */
  path: string;
  /** The URL as its spans show it: without the query string. */
  shownUrl: string;
  /** Everything that must never be in a span: the signing secret, tokens, the URL's query, the receiver's answer. */
  secrets: string[];
}

/** An account with a list and a webhook on every topic, whose URL carries a query string, its receiver answering with a body and a header. */
export async function setUpTracedWebhook(processes: ServiceProcesses, name: string): Promise<TracedWebhook> {
  const { request, internal, receiver } = processes;
  const account = (await request('POST', '/internal/v3/accounts', { ...internal, body: { name } })).body;
  const listId = `traced-${name}`;
  await request('PUT', `/internal/v3/lists/${listId}`, { ...internal, body: { ownerAccountId: account.id } });
  const path = `/${name}?key=${URL_QUERY_SECRET}`;
  const url = receiver.urlFor(path);
  const webhook = await request('POST', '/v3/webhooks', { token: account.token, body: { url, events: ['item.added', 'list.changed'] } });
  expect(webhook.status).toBe(201);
  receiver.respondWith((received) =>
    received.path === path ? { status: 200, body: RECEIVER_BODY, headers: { 'x-private': RECEIVER_HEADER } } : {},
  );
  return {
    listId,
    webhookId: webhook.body.id,
    path,
    shownUrl: receiver.urlFor(`/${name}`),
    secrets: [webhook.body.secret, account.token, internal.token, URL_QUERY_SECRET, RECEIVER_BODY, RECEIVER_HEADER],
  };
}

/** A W3C traceparent of an upstream's span, as the upstream service would send it. */
export function upstreamTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** Reports a write of one item added, with the upstream's trace headers if given; its answer's status. */
export async function reportTracedWrite(
  processes: ServiceProcesses,
  webhook: TracedWebhook,
  writeId: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const body = { writeId, changes: [{ type: 'item.added' }] };
  const answer = await processes.request('POST', `/internal/v3/lists/${webhook.listId}/writes`, { ...processes.internal, headers, body });
  return answer.status;
}

const tag = (span: JaegerSpan, key: string) => span.tags.find((candidate) => candidate.key === key)?.value;
const parentOf = (span: JaegerSpan) => span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;

/** The spans one write's delivery to one receiver makes, the write's request first. */
const WRITE_SPANS = [
  'POST /internal/v3/lists/:listId/writes',
  'postgresql record_list_write',
  'StartWorkflow:deliverListWrite',
  'RunWorkflow:deliverListWrite',
  'RunActivity:deliverEvent',
  'postgresql claim delivery',
  'POST',
  'postgresql log delivery',
];

/** Waits for the write's trace in Jaeger, with the spans of `deliveries` deliveries. */
export function waitForWriteTrace(jaeger: Jaeger, traceId: string, deliveries: number): Promise<JaegerTrace> {
  const count = (trace: JaegerTrace, name: string) => trace.spans.filter((span) => span.operationName === name).length;
  return jaeger.waitForTrace(traceId, (trace) =>
    WRITE_SPANS.every(
      (name) => count(trace, name) >= (name.includes('Activity') || name === 'POST' || name.includes('delivery') ? deliveries : 1),
    ),
  );
}

/**
 * Checks a write's trace: each span under the one that caused it, the receiver's `traceparent`
 * naming its delivery's POST span, the attributes set, nothing secret. Returns the receiver's
 * requests of that write.
 */
export function checkWriteTrace(trace: JaegerTrace, processes: ServiceProcesses, webhook: TracedWebhook, upstreamSpanId: string | null) {
  const byId = new Map(trace.spans.map((span) => [span.spanID, span]));
  const named = (name: string) => trace.spans.filter((span) => span.operationName === name);
  const parentName = (span: JaegerSpan) => byId.get(parentOf(span) ?? '')?.operationName;
  const [request] = named('POST /internal/v3/lists/:listId/writes');
  expect(parentOf(request) ?? null).toBe(upstreamSpanId);
  expect(tag(request, 'http.status_code')).toBe(202);

  // Within the API process, each span is under the request (through Koa's route span).
  const underRequest = (span: JaegerSpan): boolean =>
    span === request || (parentOf(span) !== undefined && underRequest(byId.get(parentOf(span)!)!));
  for (const name of ['postgresql record_list_write', 'StartWorkflow:deliverListWrite'])
    expect(underRequest(named(name)[0]), name).toBe(true);
  expect(parentName(named('RunWorkflow:deliverListWrite')[0])).toBe('StartWorkflow:deliverListWrite');
  // The workflow's context reaches each delivery's activity; its scheduling makes no span of its own.
  expect(named('StartActivity:deliverEvent')).toEqual([]);
  for (const span of named('RunActivity:deliverEvent')) expect(parentName(span)).toBe('RunWorkflow:deliverListWrite');
  for (const name of ['postgresql claim delivery', 'POST', 'postgresql log delivery']) {
    for (const span of named(name)) expect(parentName(span), name).toBe('RunActivity:deliverEvent');
  }

  // Each delivery: the activity's attributes, and the receiver given its POST span as parent.
  const received = processes.receiver.requests.filter(
    (r) => r.path === webhook.path && r.headers['svc-event'] !== 'ping' && String(r.headers.traceparent).includes(trace.traceID),
  );
  expect(received.map((r) => r.headers['svc-event']).sort()).toEqual(['item.added', 'list.changed']);
  for (const delivery of received) {
    expect(delivery.headers).not.toHaveProperty('tracestate');
    expect(delivery.headers).not.toHaveProperty('baggage');
    const [, traceId, parentId, flags] = String(delivery.headers.traceparent).split('-');
    expect([traceId, flags]).toEqual([trace.traceID, '01']);
    const post = byId.get(parentId);
    expect(post?.operationName).toBe('POST');
    expect(tag(post!, 'delivery.id')).toBe(delivery.headers['svc-delivery']);
    expect(tag(post!, 'http.response.status_code')).toBe(200);
    expect(tag(post!, 'url.full')).toBe(webhook.shownUrl);
    const activity = byId.get(parentOf(post!)!)!;
    expect(
      Object.fromEntries(['webhook.id', 'delivery.id', 'event', 'list.id', 'outcome'].map((key) => [key, tag(activity, key)])),
    ).toEqual({
      'webhook.id': webhook.webhookId,
      'delivery.id': delivery.headers['svc-delivery'],
      event: delivery.headers['svc-event'],
      'list.id': webhook.listId,
      outcome: 'delivered',
    });
    expect(tag(activity, 'cursor')).toEqual(expect.any(Number));
  }

  const everything = JSON.stringify(trace);
  for (const secret of webhook.secrets) expect(everything).not.toContain(secret);
  return received;
}

export const writeIdOf = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** Waits for the traceparent of the receiver's requests of one write, for a write sent without one. */
export async function receivedTraceId(
  processes: ServiceProcesses,
  webhook: TracedWebhook,
  count: number,
  seen: Set<string>,
): Promise<string> {
  return waitFor(async () => {
    const fresh = processes.receiver.requests
      .filter((r) => r.path === webhook.path && r.headers['svc-event'] !== 'ping')
      .map((r) => String(r.headers.traceparent).split('-')[1])
      .filter((traceId) => !seen.has(traceId));
    return fresh.length >= count ? fresh[0] : undefined;
  });
}
