// Each webhook's health over the API, on the whole stack with a real receiver: `health` on
// every webhook the API answers with, counting event deliveries only, and
// GET /v3/webhooks/{id}/health, the same totals hour by hour.
import { describe, expect, it } from 'vitest';
import { HEALTH_HOURS } from '../../src/limits';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

const NO_DELIVERIES = { delivered24h: 0, failed24h: 0, skipped24h: 0, lastDeliveredAt: null, lastFailedAt: null };

/** The receiver answers 500 to what reaches `path` (pings included), 200 to the rest. */
const failAt = (path: string) => suite.receiver.respondWith((request) => (request.path === path ? { status: 500 } : {}));

/** The newest event delivery of the log with this outcome. */
async function newestEvent(token: string, webhookId: string, outcome: string) {
  const page = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event&outcome=${outcome}&limit=1`, { token });
  return page.body.data[0];
}

/**
 * A webhook at /health/{name} that was sent two event deliveries delivered, one failed, and
 * one skipped while paused; then pings, test events and a redelivery, failed and delivered,
 * which are not counted.
 */
async function webhookWithDeliveries(name: string) {
  const path = `/health/${name}`;
  const owner = await suite.stack.createAccount();
  const registered = await suite.stack.request('POST', '/v3/webhooks', { token: owner.token, body: { url: suite.receiver.urlFor(path) } });
  expect(registered.status).toBe(201);
  expect(registered.body.health).toEqual(NO_DELIVERIES);
  const webhookId: string = registered.body.id;
  const token = owner.token;
  const listId = `health-${webhookId}`;
  await suite.stack.putList(listId, owner.id);

  await suite.stack.reportWrite(listId, 'w1');
  await suite.stack.reportWrite(listId, 'w2');
  failAt(path);
  await suite.stack.reportWrite(listId, 'w3');
  await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'paused' } });
  await suite.stack.reportWrite(listId, 'w4');
  const reactivated = await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'active' } });

  const delivered = await newestEvent(token, webhookId, 'delivered');
  for (const failing of [true, false]) {
    suite.receiver.reset();
    if (failing) failAt(path);
    expect((await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token })).body.delivered).toBe(!failing);
    const test = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/test-events`, { token, body: { event: 'list.changed' } });
    expect(test.body.delivered).toBe(!failing);
    const redelivery = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${delivered.id}/redeliveries`, { token });
    expect(redelivery.body.delivered).toBe(!failing);
  }
  const failed = await newestEvent(token, webhookId, 'failed');
  const expected = {
    delivered24h: 2,
    failed24h: 1,
    skipped24h: 1,
    lastDeliveredAt: delivered.attemptedAt,
    lastFailedAt: failed.attemptedAt,
  };
  return { token, webhookId, path, reactivated: reactivated.body, expected };
}

describe('health on the webhook', () => {
  it('counts event deliveries delivered, failed and skipped, with the last times, on every webhook the API answers with; never pings, test events or redeliveries', async () => {
    const { token, webhookId, path, reactivated, expected } = await webhookWithDeliveries('everywhere');
    expect(reactivated).toMatchObject({ status: 'active', health: expected });

    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body.health).toEqual(expected);
    const listed = await suite.stack.request('GET', '/v3/webhooks', { token });
    expect(listed.body.data).toEqual([expect.objectContaining({ id: webhookId, health: expected })]);
    const patched = await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { events: ['item.added'] } });
    expect(patched.body).toMatchObject({ events: ['item.added'], health: expected });
    // Registering the same URL again answers the webhook as updated, its health with it.
    const again = await suite.stack.request('POST', '/v3/webhooks', { token, body: { url: suite.receiver.urlFor(path) } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: webhookId, health: expected });
  });
});

describe('GET /v3/webhooks/{id}/health', () => {
  it('answers the 24 UTC hours oldest first, each delivery in the hour it was logged, and the totals they sum to', async () => {
    const { token, webhookId, expected } = await webhookWithDeliveries('hourly');
    const response = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/health`, { token });
    expect(response.status).toBe(200);
    const { hours, ...totals } = response.body;
    expect(totals).toEqual(expected);

    expect(hours).toHaveLength(HEALTH_HOURS);
    const starts = hours.map((hour: { hour: string }) => Date.parse(hour.hour));
    expect(starts.every((start: number) => start % 3_600_000 === 0)).toBe(true);
    expect(starts.slice(1).map((start: number, i: number) => start - starts[i])).toEqual(Array(HEALTH_HOURS - 1).fill(3_600_000));
    const sum = (key: string) => hours.reduce((total: number, hour: Record<string, number>) => total + hour[key], 0);
    expect({ delivered: sum('delivered'), failed: sum('failed'), skipped: sum('skipped') }).toEqual({
      delivered: 2,
      failed: 1,
      skipped: 1,
    });
    // The failure is in the hour it was logged.
    const failedHour = new Date(Math.floor(Date.parse(expected.lastFailedAt) / 3_600_000) * 3_600_000).toISOString();
    expect(hours.find((hour: { hour: string }) => hour.hour === failedHour)).toMatchObject({ failed: 1 });
  });

  it("answers a webhook with no deliveries with zeros, and another account's webhook as an unknown one: 404", async () => {
    const owner = await suite.stack.createAccount();
    const webhook = await suite.stack.registerWebhook(owner.token, suite.receiver.urlFor('/health/quiet'));
    const quiet = await suite.stack.request('GET', `/v3/webhooks/${webhook.id}/health`, { token: owner.token });
    expect(quiet.status).toBe(200);
    expect(quiet.body).toEqual({ ...NO_DELIVERIES, hours: expect.any(Array) });
    expect(quiet.body.hours.every((hour: Record<string, number>) => hour.delivered + hour.failed + hour.skipped === 0)).toBe(true);

    const intruder = await suite.stack.createAccount();
    const foreign = await suite.stack.request('GET', `/v3/webhooks/${webhook.id}/health`, { token: intruder.token });
    const unknown = await suite.stack.request('GET', '/v3/webhooks/wh_000000000000000000000000/health', { token: intruder.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: { code: 'WEBHOOK_NOT_FOUND', message: expect.any(String) } });
    expect(JSON.stringify(foreign.body)).toBe(JSON.stringify(unknown.body));
    expect((await suite.stack.request('GET', '/v3/webhooks/not-an-id/health', { token: owner.token })).status).toBe(404);

    expect((await suite.stack.request('DELETE', `/v3/webhooks/${webhook.id}`, { token: owner.token })).status).toBe(204);
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhook.id}/health`, { token: owner.token })).status).toBe(404);
  });
});
