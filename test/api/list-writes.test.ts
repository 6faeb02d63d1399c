import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/delivery/signing';
import { TOPICS, type ChangeType } from '../../src/topics';
import type { ListChange, ListWriteBody } from '../../src/objects';
import { deliverListWrite } from '../../workflows';
import { lifecycleStateQuery } from '../../src/contract/messages';
import type { ReceivedRequest } from '../support/receiver';
import { startApiWithTemporalDown, useStackWithReceiver } from '../support/stack';
import { sample } from '../support/metrics';
import { freePort } from '../support/ports';
import { startReceiver } from '../support/receiver';
import { createSelfSignedCert } from '../../scripts/lib/tls';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();
let writes = 0;

const internal = () => ({ token: suite.stack.internalApiToken });
const at = (path: string) => suite.receiver.requests.filter((request) => request.path === path);
const json = (request: ReceivedRequest) => JSON.parse(request.rawBody.toString('utf8'));

async function account() {
  return suite.stack.createAccount();
}

function webhook(token: string, path: string, body: Record<string, unknown> = {}) {
  return suite.stack.registerWebhook(token, suite.receiver.urlFor(path), body);
}

async function list(ownerId: string, members: string[] = []) {
  const listId = `list-${++writes}-${Math.random().toString(36).slice(2, 8)}`;
  expect((await suite.stack.putList(listId, ownerId, members)).status).toBe(201);
  return listId;
}

/** Reports a write and waits until all its deliveries are made and their outcomes reported. */
function write(listId: string, changes: ListChange[], extra: Pick<ListWriteBody, 'at'> = {}) {
  return suite.stack.reportWrite(listId, `w-${++writes}`, changes, extra);
}

const countIs = (token: string, webhookId: string, count: number) => suite.stack.waitForFailureCount(token, webhookId, count);

describe('POST /internal/v3/lists/{listId}/writes', () => {
  it('answers 202 with the cursor and topics, counting 1, 2, 3 per list', async () => {
    const owner = await account();
    const [a, b] = [await list(owner.id), await list(owner.id)];
    const first = await write(a, [{ type: 'item.added', itemId: 'milk' }]);
    expect(first).toEqual({ writeId: first.writeId, listId: a, cursor: 1, topics: ['list.changed', 'item.added'] });
    expect((await write(a, [{ type: 'item.checked' }])).cursor).toBe(2);
    expect((await write(b, [{ type: 'list.updated' }])).cursor).toBe(1);
    expect((await write(a, [{ type: 'item.unchecked' }])).cursor).toBe(3);
  });

  it.each<[ChangeType, string[]]>([
    ['item.added', ['list.changed', 'item.added']],
    ['item.removed', ['list.changed', 'item.removed']],
    ['item.checked', ['list.changed', 'item.checked']],
    ['item.unchecked', ['list.changed']],
    ['item.updated', ['list.changed']],
    ['list.updated', ['list.changed']],
    ['member.joined', ['list.changed', 'list.members.changed']],
    ['member.left', ['list.changed', 'list.members.changed']],
  ])('delivers %s as %j, one delivery per topic however many changes', async (type, topics) => {
    const owner = await account();
    const other = await account();
    const path = `/writes/topics/${type}`;
    await webhook(owner.token, path, { events: [...TOPICS] });
    const listId = await list(owner.id, type === 'member.left' ? [other.id] : []);
    const change = type.startsWith('member.') ? { type, accountId: other.id } : { type, itemId: 'x' };
    await write(listId, [change, change, change]);
    const received = at(path).filter((r) => r.headers['svc-event'] !== 'ping');
    expect(received.map((r) => r.headers['svc-event']).sort()).toEqual([...topics].sort());
  });

  it('sends exactly {"event","listId","cursor","at"}, signed over those bytes, with the same cursor and at for every delivery of a write', async () => {
    const owner = await account();
    const hook = await webhook(owner.token, '/writes/body', { events: ['item.added', 'list.changed'] });
    const listId = await list(owner.id);
    const accepted = await write(listId, [{ type: 'item.added', itemId: 'eggs' }], { at: '2026-11-21T11:00:00.5+01:00' });

    const deliveries = at('/writes/body').filter((r) => r.headers['svc-event'] !== 'ping');
    expect(deliveries).toHaveLength(2);
    const ids = new Set<string>();
    for (const delivery of deliveries) {
      const topic = delivery.headers['svc-event'] as string;
      expect(delivery.rawBody.toString('utf8')).toBe(
        `{"event":"${topic}","listId":"${listId}","cursor":${accepted.cursor},"at":"2026-11-21T10:00:00.500Z"}`,
      );
      expect(verifySignature(delivery.rawBody, delivery.headers['svc-signature'] as string, hook.secret)).toBe(true);
      expect(delivery.headers['svc-webhook']).toBe(hook.id);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['user-agent']).toMatch(/^svc-webhooks\//);
      ids.add(delivery.headers['svc-delivery'] as string);
    }
    expect(ids.size).toBe(2);
    // The SVC-Delivery id is the id in the delivery log.
    const log = await suite.stack.request('GET', `/v3/webhooks/${hook.id}/deliveries`, { token: owner.token });
    expect(new Set(log.body.data.filter((d: { kind: string }) => d.kind === 'event').map((d: { id: string }) => d.id))).toEqual(ids);
  });

  it('delivers only to subscribed topics and, with listIds, only for those lists', async () => {
    const owner = await account();
    const [a, b] = [await list(owner.id), await list(owner.id)];
    await webhook(owner.token, '/writes/filter/only-a', { listIds: [a] });
    await webhook(owner.token, '/writes/filter/checked', { events: ['item.checked'] });
    await write(a, [{ type: 'item.added' }]);
    await write(b, [{ type: 'item.checked' }]);
    expect(
      at('/writes/filter/only-a')
        .filter((r) => r.headers['svc-event'] !== 'ping')
        .map(json),
    ).toEqual([expect.objectContaining({ event: 'list.changed', listId: a })]);
    expect(
      at('/writes/filter/checked')
        .filter((r) => r.headers['svc-event'] !== 'ping')
        .map(json),
    ).toEqual([expect.objectContaining({ event: 'item.checked', listId: b })]);
  });

  it('delivers to the owner and members, including those who join or leave in the write, and updates membership', async () => {
    const [owner, member, joiner, leaver, stranger] = [await account(), await account(), await account(), await account(), await account()];
    for (const [who, name] of [
      [owner, 'owner'],
      [member, 'member'],
      [joiner, 'joiner'],
      [leaver, 'leaver'],
      [stranger, 'stranger'],
    ] as const) {
      await webhook(who.token, `/writes/members/${name}`);
    }
    const listId = await list(owner.id, [member.id, leaver.id]);
    await write(listId, [
      { type: 'member.joined', accountId: joiner.id },
      { type: 'member.left', accountId: leaver.id },
    ]);
    const events = (name: string) => at(`/writes/members/${name}`).filter((r) => r.headers['svc-event'] !== 'ping').length;
    expect([events('owner'), events('member'), events('joiner'), events('leaver'), events('stranger')]).toEqual([1, 1, 1, 1, 0]);

    await write(listId, [{ type: 'item.added' }]);
    expect([events('owner'), events('member'), events('joiner'), events('leaver'), events('stranger')]).toEqual([2, 2, 2, 1, 0]);
    const members = await suite.stack.service.sql`SELECT account_id FROM list_members WHERE list_id = ${listId} ORDER BY account_id`;
    expect(members.map((row) => row.account_id)).toEqual([member.id, joiner.id].sort());
  });

  it('answers a repeated writeId with the same body again and delivers once, also when the repeats race', async () => {
    const owner = await account();
    await webhook(owner.token, '/writes/idempotent');
    const listId = await list(owner.id);
    const body = { writeId: 'same-write', changes: [{ type: 'item.added', itemId: 'bread' }] };
    const send = () => suite.stack.request('POST', `/internal/v3/lists/${listId}/writes`, { ...internal(), body });
    const answers = await Promise.all([send(), send(), send(), send(), send()]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    await suite.stack.service.client.workflow.getHandle(`list-write/${listId}/same-write`).result();
    const again = await send();
    expect(again.body).toEqual(answers[0].body);
    expect(at('/writes/idempotent').filter((r) => r.headers['svc-event'] !== 'ping')).toHaveLength(1);

    const reused = await suite.stack.request('POST', `/internal/v3/lists/${listId}/writes`, {
      ...internal(),
      body: { writeId: 'same-write', changes: [{ type: 'item.removed', itemId: 'bread' }] },
    });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('WRITE_ID_REUSED');
  });

  it('refuses an unknown list with 404 LIST_NOT_FOUND and invalid writes with 400', async () => {
    const owner = await account();
    const missing = await suite.stack.request('POST', '/internal/v3/lists/no-such-list/writes', {
      ...internal(),
      body: { writeId: 'w', changes: [{ type: 'item.added' }] },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('LIST_NOT_FOUND');

    const listId = await list(owner.id);
    const invalid: [unknown, string][] = [
      [{ writeId: 'w', changes: [] }, '/changes'],
      [{ writeId: 'w', changes: [{ type: 'item.moved' }] }, '/changes/0/type'],
      [{ writeId: 'w', changes: [{ type: 'member.joined' }] }, '/changes/0/accountId'],
      [{ writeId: 'w', changes: [{ type: 'member.left', accountId: 'acc_nobody' }] }, '/changes/0/accountId'],
      [{ writeId: 'w', changes: Array(1001).fill({ type: 'item.added' }) }, '/changes'],
      [{ writeId: 'w', at: 'yesterday', changes: [{ type: 'item.added' }] }, '/at'],
      [{ changes: [{ type: 'item.added' }] }, '/writeId'],
    ];
    for (const [body, path] of invalid) {
      const response = await suite.stack.request('POST', `/internal/v3/lists/${listId}/writes`, { ...internal(), body });
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_FAILED');
      expect(response.body.error.details[0].path).toBe(path);
    }
    const cursor = await suite.stack.service.sql`SELECT cursor FROM lists WHERE id = ${listId}`;
    expect(Number(cursor[0].cursor)).toBe(0);
  });
});

describe('a write while Temporal is unreachable', () => {
  it("answers 503 with Retry-After, and the upstream's retry finishes it: delivered once, same cursor", async () => {
    const owner = await account();
    await webhook(owner.token, '/writes/retried');
    const listId = await list(owner.id);
    // The same API, on the same database, with a Temporal frontend that does not answer.
    const api = await startApiWithTemporalDown(suite.stack);
    const body = JSON.stringify({ writeId: 'during-outage', changes: [{ type: 'item.added' }] });
    try {
      const refused = await api.request('POST', `/internal/v3/lists/${listId}/writes`, {
        ...internal(),
        rawBody: body,
        headers: { 'content-type': 'application/json' },
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body.error.code).toBe('UNAVAILABLE');
    } finally {
      await api.close();
    }

    const retried = await suite.stack.request('POST', `/internal/v3/lists/${listId}/writes`, {
      ...internal(),
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });
    expect(retried.status).toBe(202);
    expect(retried.body.cursor).toBe(1);
    await suite.stack.service.client.workflow.getHandle(`list-write/${listId}/during-outage`).result();
    expect(at('/writes/retried').filter((r) => r.headers['svc-event'] !== 'ping')).toHaveLength(1);
  });
});

describe('failed deliveries', () => {
  it('counts a 500, a redirect (not followed), a time-out, a TLS failure and a refused connection as failures', async () => {
    const owner = await account();
    const untrusted = await startReceiver(await createSelfSignedCert());
    try {
      // Registered while their receivers answer; failing from then on.
      const hooks = {
        non_2xx: await webhook(owner.token, '/fail/500'),
        redirect: await webhook(owner.token, '/fail/redirect'),
        timeout: await webhook(owner.token, '/fail/slow'),
      };
      suite.receiver.respondWith((request) => {
        if (request.path === '/fail/500') return { status: 500 };
        if (request.path === '/fail/redirect') return { status: 307, headers: { location: suite.receiver.urlFor('/fail/target') } };
        if (request.path === '/fail/slow') return { hang: true };
        return {};
      });
      // A receiver with an untrusted certificate, and a closed port: point registered webhooks at them.
      const tls = await webhook(owner.token, '/fail/tls');
      const refused = await webhook(owner.token, '/fail/refused');
      await suite.stack.service.sql`UPDATE webhooks SET url = ${untrusted.urlFor('/fail/tls')} WHERE id = ${tls.id}`;
      await suite.stack.service.sql`UPDATE webhooks SET url = ${`https://127.0.0.1:${await freePort()}/`} WHERE id = ${refused.id}`;

      const listId = await list(owner.id);
      await write(listId, [{ type: 'item.added' }]);
      const errors = { ...hooks, tls, connection: refused };
      for (const [error, hook] of Object.entries(errors)) {
        const log = await suite.stack.request('GET', `/v3/webhooks/${hook.id}/deliveries`, { token: owner.token });
        expect(log.body.data[0], error).toMatchObject({ kind: 'event', outcome: 'failed', error, event: 'list.changed', listId });
        await countIs(owner.token, hook.id, 1);
      }
      expect(at('/fail/target')).toHaveLength(0);
    } finally {
      suite.receiver.respondWith({});
      await untrusted.close();
    }
  });

  it('pauses after 20 consecutive failures, exactly once, and a paused webhook receives nothing while others do', async () => {
    const owner = await account();
    const failing = await webhook(owner.token, '/pause/failing');
    await webhook(owner.token, '/pause/control');
    const listId = await list(owner.id);
    const failingEvents = () => at('/pause/failing').filter((r) => r.headers['svc-event'] !== 'ping');

    suite.receiver.respondWith((request) => (request.path === '/pause/failing' ? { status: 503 } : {}));
    for (let i = 0; i < 19; i++) await write(listId, [{ type: 'item.added' }]);
    await countIs(owner.token, failing.id, 19);
    suite.receiver.respondWith({});
    await write(listId, [{ type: 'item.added' }]);
    await countIs(owner.token, failing.id, 0);
    const beforeFailures = failingEvents().length;

    suite.receiver.respondWith((request) => (request.path === '/pause/failing' ? { status: 500 } : {}));
    for (let i = 0; i < 20; i++) await write(listId, [{ type: 'item.added' }]);
    const paused = await countIs(owner.token, failing.id, 20);
    expect(paused).toMatchObject({ status: 'paused', pausedReason: 'auto_failures' });
    expect(failingEvents().length - beforeFailures).toBe(20);

    for (let i = 0; i < 3; i++) await write(listId, [{ type: 'item.added' }]);
    suite.receiver.respondWith({});
    expect(failingEvents().length - beforeFailures).toBe(20);
    expect(at('/pause/control').filter((r) => r.headers['svc-event'] !== 'ping')).toHaveLength(19 + 1 + 20 + 3);

    // The workflow paused once: its history holds one change of WebhookStatus, to paused.
    const lifecycle = suite.stack.lifecycle(failing.id);
    expect(await lifecycle.query(lifecycleStateQuery)).toMatchObject({
      status: 'paused',
      pausedReason: 'auto_failures',
      consecutiveFailures: 20,
    });
    const statusChanges = (await lifecycle.fetchHistory()).events!.filter(
      (event) => event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.WebhookStatus,
    );
    expect(statusChanges).toHaveLength(1);
    const pausedInUi = await waitFor(async () => {
      const found = [];
      for await (const e of suite.stack.service.client.workflow.list({ query: `WebhookId = '${failing.id}' AND WebhookStatus = 'paused'` }))
        found.push(e);
      return found.length === 1 ? found : undefined;
    });
    expect(pausedInUi[0].workflowId).toBe(`webhook/${failing.id}`);

    // Reactivation resumes with new writes only: nothing of the backlog is sent.
    const reactivated = await suite.stack.request('PATCH', `/v3/webhooks/${failing.id}`, {
      token: owner.token,
      body: { status: 'active' },
    });
    expect(reactivated.body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    expect(failingEvents().length - beforeFailures).toBe(20);
    const next = await write(listId, [{ type: 'item.added' }]);
    expect(json(failingEvents().at(-1)!)).toMatchObject({ cursor: next.cursor });
    expect(failingEvents().length - beforeFailures).toBe(21);
    await countIs(owner.token, failing.id, 0);
  });

  it('tells webhook/{id} of every failed delivery once, whatever its topic', async () => {
    const owner = await account();
    const hook = await webhook(owner.token, '/signals', { events: ['item.added', 'item.removed', 'list.changed'] });
    const listId = await list(owner.id);
    suite.receiver.respondWith((request) =>
      request.path === '/signals' && request.headers['svc-event'] !== 'ping' ? { status: 500 } : {},
    );
    for (let i = 0; i < 3; i++) await write(listId, [{ type: 'item.added' }, { type: 'item.removed' }]);
    suite.receiver.respondWith({});
    expect(at('/signals').filter((r) => r.headers['svc-event'] !== 'ping')).toHaveLength(9);
    await countIs(owner.token, hook.id, 9);
    // Each outcome told once; those of concurrent deliveries may share a signal.
    expect((await suite.stack.outcomeSignals(hook.id)).flat()).toEqual(Array.from({ length: 9 }, () => false));
  });

  it("wakes the webhook's workflow only for outcomes that can change its count", async () => {
    const owner = await account();
    const hook = await webhook(owner.token, '/quiet');
    const listId = await list(owner.id);
    // Successes while the count is 0 reset nothing: no signal.
    for (let i = 0; i < 3; i++) await write(listId, [{ type: 'item.added' }]);
    expect(await suite.stack.outcomeSignals(hook.id)).toEqual([]);

    suite.receiver.respondWith((request) => (request.path === '/quiet' ? { status: 500 } : {}));
    for (let i = 0; i < 2; i++) await write(listId, [{ type: 'item.added' }]);
    await countIs(owner.token, hook.id, 2);
    suite.receiver.respondWith({});
    // The first success after them resets the count (as do any that come while it waits to
    // settle, the count still standing); once it is 0, the next ones are quiet again.
    for (let i = 0; i < 3; i++) await write(listId, [{ type: 'item.added' }]);
    await countIs(owner.token, hook.id, 0);
    const signalled = await suite.stack.outcomeSignals(hook.id);
    expect(signalled.slice(0, 2)).toEqual([[false], [false]]);
    expect(signalled.slice(2).flat()).toContain(true);
    expect(signalled.slice(2).flat()).not.toContain(false);
    for (let i = 0; i < 3; i++) await write(listId, [{ type: 'item.added' }]);
    expect(at('/quiet').filter((r) => r.headers['svc-event'] !== 'ping')).toHaveLength(11);
    expect(await suite.stack.outcomeSignals(hook.id)).toEqual(signalled);
  });

  it('skips and counts a delivery whose webhook was paused or deleted after the write was accepted', async () => {
    const owner = await account();
    const paused = await webhook(owner.token, '/skipped/paused');
    const deleted = await webhook(owner.token, '/skipped/deleted');
    expect(
      (await suite.stack.request('PATCH', `/v3/webhooks/${paused.id}`, { token: owner.token, body: { status: 'paused' } })).status,
    ).toBe(200);
    expect((await suite.stack.request('DELETE', `/v3/webhooks/${deleted.id}`, { token: owner.token })).status).toBe(204);
    const skipped = async (reason: string) =>
      sample((await suite.stack.request('GET', '/metrics')).body, 'webhook_deliveries_skipped_total', { reason });
    const before = { paused: await skipped('paused'), deleted: await skipped('deleted') };

    // A write recorded while both were active, delivered after the changes.
    await suite.stack.service.client.workflow.execute(deliverListWrite, {
      taskQueue: suite.stack.taskQueue,
      workflowId: `list-write/skipped/${paused.id}`,
      args: [
        {
          write: { listId: 'list-skipped', writeId: 'w-1', cursor: 1, at: new Date().toISOString(), topics: ['list.changed'] },
          recipients: [
            { webhookId: paused.id, topics: ['list.changed'] },
            { webhookId: deleted.id, topics: ['list.changed'] },
          ],
          deliveryTimeoutMs: 5_000,
        },
      ],
    });
    expect(await skipped('paused')).toBe(before.paused + 1);
    expect(await skipped('deleted')).toBe(before.deleted + 1);
    // The paused one is logged as skipped; the deleted one matches nothing.
    const pausedLog = await suite.stack.request('GET', `/v3/webhooks/${paused.id}/deliveries?kind=event`, { token: owner.token });
    expect(pausedLog.body.data).toEqual([
      expect.objectContaining({ listId: 'list-skipped', cursor: 1, outcome: 'skipped', error: 'paused', statusCode: null, durationMs: 0 }),
    ]);
    expect([...at('/skipped/paused'), ...at('/skipped/deleted')].filter((r) => r.headers['svc-event'] !== 'ping')).toHaveLength(0);
    expect(await suite.stack.outcomeSignals(paused.id)).toEqual([]);
  });

  it('stops delivering to a deleted webhook at once', async () => {
    const owner = await account();
    const gone = await webhook(owner.token, '/deleted/gone');
    await webhook(owner.token, '/deleted/kept');
    const listId = await list(owner.id);
    await write(listId, [{ type: 'item.added' }]);
    expect((await suite.stack.request('DELETE', `/v3/webhooks/${gone.id}`, { token: owner.token })).status).toBe(204);
    await write(listId, [{ type: 'item.added' }]);
    const events = (path: string) => at(path).filter((r) => r.headers['svc-event'] !== 'ping').length;
    expect([events('/deleted/gone'), events('/deleted/kept')]).toEqual([1, 2]);
  });
});
