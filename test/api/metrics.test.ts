import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createWorkerApp } from '../../src/api/app';
import { createLogger } from '../../src/logger';
import { sample } from '../support/metrics';
import { sdkMetricsUrl } from '../support/runtime';
import { requestTo, useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

describe('GET /metrics', () => {
  it("counts deliveries by topic and outcome, registrations, pings, pauses, writes, requests and their token checks, with the SDK's metrics", async () => {
    const before = (await suite.stack.request('GET', '/metrics')).body as string;
    const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/metrics/hook'), {
      events: ['item.added', 'list.changed'],
    });
    await suite.stack.reportWrite(listId, 'delivered');
    suite.receiver.respondWith({ status: 500 });
    await suite.stack.reportWrite(listId, 'failed');
    suite.receiver.respondWith({});
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token: owner.token });
    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token: owner.token, body: { status: 'paused' } });
    await suite.stack.request('POST', '/v3/webhooks', { token: owner.token, body: { url: 'http://insecure.example/' } });

    const response = await suite.stack.request('GET', '/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const after = response.body as string;
    const grew = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);

    expect(grew('webhook_deliveries_total', { topic: 'item.added', outcome: 'delivered', error: 'none' })).toBe(1);
    expect(grew('webhook_deliveries_total', { topic: 'list.changed', outcome: 'failed', error: 'non_2xx' })).toBe(1);
    expect(grew('webhook_delivery_duration_seconds_count', { outcome: 'failed' })).toBe(2);
    expect(grew('webhook_registrations_total', { outcome: 'created' })).toBe(1);
    expect(grew('webhook_registrations_total', { outcome: 'url_not_allowed' })).toBe(1);
    expect(grew('webhook_pings_total', { outcome: 'delivered', error: 'none' })).toBe(1);
    expect(grew('webhooks_paused_total', { reason: 'manual' })).toBe(1);
    expect(grew('list_writes_accepted_total', { repeated: 'false' })).toBe(2);
    expect(grew('http_requests_total', { method: 'POST', route: '/v3/webhooks', status: '201' })).toBe(1);
    expect(grew('http_requests_total', { method: 'POST', route: '/internal/v3/lists/:listId/writes', status: '202' })).toBe(2);
    // The token check and rate limit are timed once per public API request (the two registrations, one refused for its URL, the ping, the PATCH).
    expect(grew('http_request_auth_seconds_count', {})).toBe(4);
    // The worker's Temporal SDK metrics follow ours.
    expect(after).toMatch(/^# Temporal SDK$/m);
    expect(after).toMatch(/^temporal_local_activity_execution_latency_(bucket|count)\{.*activity_type="deliverEvent"/m);
  });
});

describe('a worker running alone', () => {
  it('answers /healthz and /metrics, and nothing else', async () => {
    const server = createWorkerApp({ logger: createLogger('silent'), sdkMetricsUrl: sdkMetricsUrl() }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const request = requestTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      expect(await request('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
      const metrics = await request('GET', '/metrics');
      expect(metrics.body).toMatch(/^# HELP webhook_deliveries_total /m);
      expect(await request('GET', '/v3/webhooks')).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    } finally {
      server.close();
    }
  });
});
