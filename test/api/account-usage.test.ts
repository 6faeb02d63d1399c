// The fair-use meter over HTTP (GET /v3/account/usage): the last 30 UTC days, the account's
// own API requests (not another's, not refused ones) and the deliveries to its webhooks.
import { describe, expect, it } from 'vitest';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

const utcDay = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

describe('GET /v3/account/usage', () => {
  it('answers the last 30 UTC days, oldest first, zeros for a new account but for the request itself', async () => {
    const { token } = await suite.stack.createAccount();
    const usage = await suite.stack.request('GET', '/v3/account/usage', { token });
    expect(usage.status).toBe(200);
    expect(usage.body.data).toHaveLength(30);
    expect(usage.body.data.map((day: { date: string }) => day.date)).toEqual(Array.from({ length: 30 }, (_, i) => utcDay(29 - i)));
    expect(usage.body.data.slice(0, 29).every((day: object) => JSON.stringify(day).endsWith('"apiRequests":0,"deliveries":0}'))).toBe(true);
    expect(usage.body.data[29]).toEqual({ date: utcDay(0), apiRequests: 1, deliveries: 0 });
  });

  it("counts the account's requests, with any of its tokens, and not another account's or refused ones", async () => {
    const [account, other] = [await suite.stack.createAccount(), await suite.stack.createAccount()];
    const second = (await suite.stack.request('POST', '/v3/account/tokens', { token: account.token, body: { name: 'second' } })).body.token;
    for (const token of [account.token, second, second]) await suite.stack.request('GET', '/v3/webhooks', { token });
    await suite.stack.request('GET', '/v3/webhooks', { token: other.token });
    await suite.stack.request('GET', '/v3/webhooks', { token: `${account.token}x` });
    const today = (await suite.stack.request('GET', '/v3/account/usage', { token: account.token })).body.data.at(-1);
    // The token's creation, three reads, and this one.
    expect(today).toEqual({ date: utcDay(0), apiRequests: 5, deliveries: 0 });
  });

  it('counts the deliveries to its webhooks: each event delivery, ping and redelivery its log shows', async () => {
    const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/usage/deliveries'));
    await suite.stack.reportWrite(listId, 'usage-1');
    await suite.stack.reportWrite(listId, 'usage-2');
    expect((await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token: owner.token })).status).toBe(200);
    const log = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=100`, { token: owner.token })).body.data;
    const [event] = log.filter((entry: { kind: string }) => entry.kind === 'event');
    const redelivered = await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${event.id}/redeliveries`, {
      token: owner.token,
    });
    expect(redelivered.status).toBe(200);
    const logged = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?limit=100`, { token: owner.token })).body.data;
    expect(logged.map((entry: { kind: string }) => entry.kind).sort()).toEqual(
      expect.arrayContaining(['event', 'event', 'ping', 'redelivery']),
    );
    const today = (await suite.stack.request('GET', '/v3/account/usage', { token: owner.token })).body.data.at(-1);
    expect(today.deliveries).toBe(logged.length);
    expect(suite.receiver.requests.filter((request) => request.path === '/usage/deliveries')).toHaveLength(logged.length + 1); // + the registration ping
  });
});
