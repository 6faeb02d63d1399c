// Trace context for receivers (TRACE_RECEIVERS=on), with no exporter: every POST to a receiver
// carries a `traceparent` naming its own span in the trace of what caused it, never `tracestate`
// or `baggage`, and the delivery log names that trace.
import { expect, it } from 'vitest';
import type { IncomingHttpHeaders } from 'node:http';
import { TOPICS } from '../../src/topics';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver({ TRACE_RECEIVERS: 'on' });

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/** The trace id and parent id a receiver was given. */
function traceContext(headers: IncomingHttpHeaders): { traceId: string; parentId: string } {
  const match = TRACEPARENT.exec(String(headers.traceparent));
  if (match === null) throw new Error(`no valid traceparent: ${String(headers.traceparent)}`);
  expect(headers).not.toHaveProperty('tracestate');
  expect(headers).not.toHaveProperty('baggage');
  return { traceId: match[1], parentId: match[2] };
}

async function logOf(token: string, webhookId: string): Promise<{ id: string; kind: string; traceId: string | null }[]> {
  return (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries`, { token })).body.data;
}

it("gives each delivery of a write the write's trace and a parent of its own, and logs the trace", async () => {
  const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/traced/write'), { events: [...TOPICS] });
  const pinged = suite.receiver.requests.find((request) => request.path === '/traced/write');
  expect(traceContext(pinged!.headers).traceId).toMatch(/^[0-9a-f]{32}$/);
  await suite.stack.reportWrite(listId, 'traced-write', [{ type: 'item.added' }]);

  const deliveries = suite.receiver.requests.filter(
    (request) => request.path === '/traced/write' && request.headers['svc-event'] !== 'ping',
  );
  expect(deliveries.map((request) => request.headers['svc-event']).sort()).toEqual(['item.added', 'list.changed']);
  const contexts = deliveries.map((request) => traceContext(request.headers));
  expect(new Set(contexts.map((context) => context.traceId)).size).toBe(1);
  expect(new Set(contexts.map((context) => context.parentId)).size).toBe(2);

  const log = await logOf(owner.token, webhookId);
  for (const request of deliveries) {
    const entry = log.find((logged) => logged.id === request.headers['svc-delivery']);
    expect(entry?.traceId).toBe(traceContext(request.headers).traceId);
  }
  // What the log kept of the request shows the header as it was sent.
  const [first] = deliveries;
  const detail = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries/${String(first.headers['svc-delivery'])}`, {
    token: owner.token,
  });
  expect(detail.body.request.headers.traceparent).toBe(first.headers.traceparent);
});

it('traces pings, test events and redeliveries too, each in a trace of its own request', async () => {
  const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/traced/manual'));
  await suite.stack.reportWrite(listId, 'traced-manual', [{ type: 'item.added' }]);
  const [original] = (await logOf(owner.token, webhookId)).filter((entry) => entry.kind === 'event');
  const token = { token: owner.token };
  const ping = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, token);
  const test = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/test-events`, { ...token, body: { event: 'item.checked' } });
  const redelivery = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${original.id}/redeliveries`, token);
  expect([ping.status, test.status, redelivery.status]).toEqual([200, 200, 200]);

  const log = await logOf(owner.token, webhookId);
  const byKind = (kind: string) => log.find((entry) => entry.kind === kind);
  const traces = ['ping', 'test', 'redelivery'].map((kind) => byKind(kind)?.traceId);
  expect(traces.every((traceId) => /^[0-9a-f]{32}$/.test(traceId ?? ''))).toBe(true);
  expect(new Set([...traces, original.traceId]).size).toBe(4);
  for (const entry of [byKind('ping'), byKind('test'), byKind('redelivery')]) {
    const request = suite.receiver.requests.find((received) => received.headers['svc-delivery'] === entry?.id);
    expect(traceContext(request!.headers).traceId).toBe(entry?.traceId);
  }
});
