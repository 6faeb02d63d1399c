// Recovery (POST/GET/DELETE /v3/webhooks/{id}/recoveries): an owner whose receiver broke
// sends again, in one action, every event delivery it missed, on the real stack.
import { describe, expect, it } from 'vitest';
import { recoveryProgressQuery } from '../../src/contract/messages';
import { recoveryWorkflowId } from '../../src/contract/workflows';
import type { ReceivedRequest } from '../support/receiver';
import { startApiWithTemporalDown, useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();

const received = (path: string) => suite.receiver.requests.filter((request) => request.path === path);
const bodyOf = (request: ReceivedRequest) => JSON.parse(request.rawBody.toString('utf8')) as { cursor: number; listId: string };

/** A webhook on `path` whose receiver answered 503 to `writes` writes (one list.changed delivery each). */
async function webhookThatMissed(path: string, writes: number) {
  const setUp = await suite.stack.setUpListWebhook(suite.receiver.urlFor(path));
  const since = new Date().toISOString();
  suite.receiver.respondWith((request) => ({ status: request.path === path ? 503 : 200 }));
  for (let i = 1; i <= writes; i++) await suite.stack.reportWrite(setUp.listId, `missed-${i}`);
  suite.receiver.respondWith({});
  return { ...setUp, token: setUp.owner.token, since };
}

const recover = (token: string, webhookId: string, body: Record<string, unknown>) =>
  suite.stack.request('POST', `/v3/webhooks/${webhookId}/recoveries`, { token, body });
const recovery = (token: string, webhookId: string, recoveryId: string) =>
  suite.stack.request('GET', `/v3/webhooks/${webhookId}/recoveries/${recoveryId}`, { token });

/** Waits until the recovery has ended and settled (its workflow closed), and returns it. */
async function ended(token: string, webhookId: string, recoveryId: string) {
  await suite.stack.service.client.workflow.getHandle(recoveryWorkflowId(webhookId, recoveryId)).result();
  return (await recovery(token, webhookId, recoveryId)).body;
}

/** Makes the receiver hold every request to `path` from now until `release()`; others answer 200. */
function holdAt(path: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  suite.receiver.respondWith(async (request) => {
    if (request.path === path) await released;
    return {};
  });
  const before = received(path).length;
  /** Resolves once the next request to `path` is held. */
  const firstHeld = () => waitFor(async () => (received(path).length > before ? true : undefined));
  return { release, firstHeld, before };
}

describe('a recovery', () => {
  it('after a pause and a reactivation, sends every failed and skipped event once, oldest first, each a redelivery never counted', async () => {
    const path = '/recover/story';
    const { token, webhookId, listId, since } = await webhookThatMissed(path, 20);
    expect(await suite.stack.waitForFailureCount(token, webhookId, 20)).toMatchObject({ status: 'paused' });
    const failedAttempts = received(path).filter((request) => request.headers['svc-event'] === 'list.changed');
    // Three writes while it is paused: logged as skipped, never sent.
    for (let i = 1; i <= 3; i++) await suite.stack.reportWrite(listId, `while-paused-${i}`);
    const skipped = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?outcome=skipped`, { token });
    expect(skipped.body.data.map((entry: { cursor: number }) => entry.cursor)).toEqual([23, 22, 21]);
    expect(received(path).filter((request) => request.headers['svc-event'] === 'list.changed')).toHaveLength(20);
    const paused = await recover(token, webhookId, { since });
    expect(paused).toMatchObject({ status: 409, body: { error: { code: 'WEBHOOK_PAUSED' } } });

    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token, body: { status: 'active' } });
    const signalsBefore = (await suite.stack.outcomeSignals(webhookId)).length;
    const receivedBefore = received(path).length;
    const started = await recover(token, webhookId, { since });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({
      id: expect.stringMatching(/^rcv_[0-9a-f]{24}$/),
      webhookId,
      since,
      until: expect.any(String),
      status: 'running',
      stoppedReason: null,
      total: 23,
      sent: expect.any(Number),
      delivered: expect.any(Number),
      failed: expect.any(Number),
      createdAt: expect.any(String),
      finishedAt: null,
    });
    expect(started.headers.get('location')).toBe(`/v3/webhooks/${webhookId}/recoveries/${started.body.id}`);
    // Live deliveries go on meanwhile.
    await suite.stack.reportWrite(listId, 'live');

    const done = await ended(token, webhookId, started.body.id);
    expect(done).toMatchObject({ status: 'completed', stoppedReason: null, total: 23, sent: 23, delivered: 23, failed: 0 });
    expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.createdAt));

    const sinceStarted = received(path).slice(receivedBefore);
    const recovered = sinceStarted.filter((request) => bodyOf(request).cursor <= 23);
    expect(recovered.map((request) => bodyOf(request).cursor)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    expect(sinceStarted.map((request) => bodyOf(request).cursor).filter((cursor) => cursor > 23)).toEqual([24]); // the live one
    // Each the same body byte for byte as the attempt it repeats, under a new SVC-Delivery id.
    for (const again of recovered.filter((request) => bodyOf(request).cursor <= 20)) {
      const original = failedAttempts.find((request) => bodyOf(request).cursor === bodyOf(again).cursor)!;
      expect(again.rawBody.equals(original.rawBody)).toBe(true);
      expect(again.headers['svc-delivery']).not.toBe(original.headers['svc-delivery']);
    }
    const log = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=redelivery&limit=100`, { token });
    expect(log.body.data).toHaveLength(23);
    const events = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=event&limit=100`, { token });
    const missedIds = new Set(
      events.body.data.filter((entry: { outcome: string }) => entry.outcome !== 'delivered').map((entry: { id: string }) => entry.id),
    );
    expect(missedIds.size).toBe(23);
    for (const entry of log.body.data) {
      expect(entry).toMatchObject({ kind: 'redelivery', outcome: 'delivered', listId });
      expect(missedIds.has(entry.redeliveryOf)).toBe(true);
      expect(recovered.map((request) => request.headers['svc-delivery'])).toContain(entry.id);
    }
    // Never counted: webhook/{id} heard of none of them.
    expect((await suite.stack.outcomeSignals(webhookId)).length).toBe(signalsBefore);
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body.consecutiveFailures).toBe(0);

    // Everything was redelivered: the same window again holds nothing, and completes at once.
    const again = await recover(token, webhookId, { since });
    expect(again.body.total).toBe(0);
    expect(await ended(token, webhookId, again.body.id)).toMatchObject({ status: 'completed', sent: 0 });
    const listed = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/recoveries`, { token });
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toEqual([again.body.id, started.body.id]);
  });

  it('takes only failed event deliveries logged in [since, until) that no delivered redelivery has repeated', async () => {
    const path = '/recover/set';
    const { token, webhookId, listId, since } = await webhookThatMissed(path, 3);
    const failed = (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?outcome=failed`, { token })).body.data;
    // The newest failure repeated by hand, a ping and a delivered write: none is in the set.
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/deliveries/${failed[0].id}/redeliveries`, { token });
    await suite.stack.request('POST', `/v3/webhooks/${webhookId}/pings`, { token });
    await suite.stack.reportWrite(listId, 'delivered');
    // A failure after `until` is left out too.
    const until = new Date().toISOString();
    suite.receiver.respondWith((request) => ({ status: request.path === path ? 503 : 200 }));
    await suite.stack.reportWrite(listId, 'after-until');
    suite.receiver.respondWith({});
    const sentBefore = received(path).length;

    const started = await recover(token, webhookId, { since, until });
    expect(started.body).toMatchObject({ since, until, total: 2 });
    expect(await ended(token, webhookId, started.body.id)).toMatchObject({ status: 'completed', delivered: 2 });
    expect(
      received(path)
        .slice(sentBefore)
        .map((request) => bodyOf(request).cursor),
    ).toEqual([1, 2]);
  });

  it('stops after 5 failed sends in a row (receiver_failing), leaving the failure count as it was', async () => {
    const path = '/recover/failing';
    const { token, webhookId, since } = await webhookThatMissed(path, 8);
    await suite.stack.waitForFailureCount(token, webhookId, 8);
    suite.receiver.respondWith((request) => ({ status: request.path === path ? 500 : 200 }));
    const sentBefore = received(path).length;
    const started = await recover(token, webhookId, { since });
    const done = await ended(token, webhookId, started.body.id);
    expect(done).toMatchObject({ status: 'stopped', stoppedReason: 'receiver_failing', total: 8, sent: 5, delivered: 0, failed: 5 });
    expect(received(path).length - sentBefore).toBe(5);
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body).toMatchObject({
      status: 'active',
      consecutiveFailures: 8,
    });
    const log = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=redelivery`, { token });
    expect(log.body.data.map((entry: { statusCode: number }) => entry.statusCode)).toEqual([500, 500, 500, 500, 500]);
  });

  it('stops when the webhook is paused (webhook_paused) or deleted (webhook_deleted)', async () => {
    const pausedPath = '/recover/paused';
    const paused = await webhookThatMissed(pausedPath, 3);
    const held = holdAt(pausedPath);
    const pausing = await recover(paused.token, paused.webhookId, { since: paused.since });
    await held.firstHeld();
    await suite.stack.request('PATCH', `/v3/webhooks/${paused.webhookId}`, { token: paused.token, body: { status: 'paused' } });
    held.release();
    expect(await ended(paused.token, paused.webhookId, pausing.body.id)).toMatchObject({
      status: 'stopped',
      stoppedReason: 'webhook_paused',
      sent: 1,
      delivered: 1,
    });
    expect(received(pausedPath)).toHaveLength(held.before + 1);

    const deletedPath = '/recover/deleted';
    const deleted = await webhookThatMissed(deletedPath, 3);
    const heldAgain = holdAt(deletedPath);
    const deleting = await recover(deleted.token, deleted.webhookId, { since: deleted.since });
    await heldAgain.firstHeld();
    await suite.stack.request('DELETE', `/v3/webhooks/${deleted.webhookId}`, { token: deleted.token });
    heldAgain.release();
    const handle = suite.stack.service.client.workflow.getHandle(recoveryWorkflowId(deleted.webhookId, deleting.body.id));
    expect(await handle.result()).toMatchObject({ status: 'stopped', stoppedReason: 'webhook_deleted', sent: 1 });
    expect(received(deletedPath)).toHaveLength(heldAgain.before + 1);
    const gone = await recovery(deleted.token, deleted.webhookId, deleting.body.id);
    expect(gone).toMatchObject({ status: 404, body: { error: { code: 'WEBHOOK_NOT_FOUND' } } });
  });

  it('is cancelled by DELETE: no further send starts, the send under way finishes, and it reads cancelled', async () => {
    const path = '/recover/cancel';
    const { token, webhookId, since } = await webhookThatMissed(path, 4);
    const held = holdAt(path);
    const started = await recover(token, webhookId, { since });
    await held.firstHeld();
    const inProgress = await recover(token, webhookId, { since });
    expect(inProgress).toMatchObject({ status: 409, body: { error: { code: 'RECOVERY_IN_PROGRESS', recoveryId: started.body.id } } });

    const cancelled = await suite.stack.request('DELETE', `/v3/webhooks/${webhookId}/recoveries/${started.body.id}`, { token });
    expect(cancelled).toMatchObject({ status: 200, body: { id: started.body.id, status: 'cancelled', stoppedReason: null } });
    expect(cancelled.body.finishedAt).toEqual(expect.any(String));
    held.release();
    const done = await ended(token, webhookId, started.body.id);
    expect(done).toMatchObject({ status: 'cancelled', sent: 1, delivered: 1, finishedAt: cancelled.body.finishedAt });
    expect(received(path)).toHaveLength(held.before + 1);
    // Cancelling an ended recovery answers it as it ended.
    const again = await suite.stack.request('DELETE', `/v3/webhooks/${webhookId}/recoveries/${started.body.id}`, { token });
    expect(again).toMatchObject({ status: 200, body: done });

    // Settled: another may start, and takes the 3 not sent.
    const next = await recover(token, webhookId, { since });
    expect(next).toMatchObject({ status: 202, body: { total: 3 } });
    expect(await ended(token, webhookId, next.body.id)).toMatchObject({ status: 'completed', delivered: 3 });
  });

  it('runs as the workflow recovery/{webhookId}/{recoveryId}, with WebhookId and AccountId and its progress as a query', async () => {
    const path = '/recover/workflow';
    const { owner, token, webhookId, since } = await webhookThatMissed(path, 2);
    const started = await recover(token, webhookId, { since });
    const handle = suite.stack.service.client.workflow.getHandle(recoveryWorkflowId(webhookId, started.body.id));
    const result = await handle.result();
    expect(result).toMatchObject({ recoveryId: started.body.id, webhookId, total: 2, status: 'completed', sent: 2, delivered: 2, next: 3 });
    expect(await handle.query(recoveryProgressQuery)).toEqual(result);
    const { searchAttributes, type } = await handle.describe();
    expect(type).toBe('recoverDeliveries');
    expect(searchAttributes).toMatchObject({ WebhookId: [webhookId], AccountId: [owner.id] });
  });

  it('frees the webhook of a recovery whose workflow an operator terminated', async () => {
    const path = '/recover/terminated';
    const { token, webhookId, since } = await webhookThatMissed(path, 2);
    const held = holdAt(path);
    const started = await recover(token, webhookId, { since });
    await held.firstHeld();
    await suite.stack.service.client.workflow.getHandle(recoveryWorkflowId(webhookId, started.body.id)).terminate('test');
    held.release();
    const next = await recover(token, webhookId, { since });
    expect(next.status).toBe(202);
    expect((await recovery(token, webhookId, started.body.id)).body).toMatchObject({ status: 'cancelled', finishedAt: expect.any(String) });
    expect(await ended(token, webhookId, next.body.id)).toMatchObject({ status: 'completed' });
  });
});

describe('a recovery while Temporal is unreachable', () => {
  it('is not started (503, nothing recorded), and is cancelled all the same (200): its next send finds it cancelled', async () => {
    const path = '/recover/outage';
    const { token, webhookId, since } = await webhookThatMissed(path, 3);
    const other = await webhookThatMissed('/recover/outage-other', 1);
    // The same API, on the same database, with a Temporal frontend that does not answer.
    const api = await startApiWithTemporalDown(suite.stack);
    try {
      const refused = await api.request('POST', `/v3/webhooks/${other.webhookId}/recoveries`, {
        token: other.token,
        body: { since: other.since },
      });
      expect(refused).toMatchObject({ status: 503, body: { error: { code: 'UNAVAILABLE' } } });
      expect((await suite.stack.request('GET', `/v3/webhooks/${other.webhookId}/recoveries`, { token: other.token })).body).toEqual({
        data: [],
      });

      // A recovery started while Temporal answered, cancelled while its first send waits at the receiver.
      const held = holdAt(path);
      const started = await recover(token, webhookId, { since });
      await held.firstHeld();
      const cancelled = await api.request('DELETE', `/v3/webhooks/${webhookId}/recoveries/${started.body.id}`, { token });
      expect(cancelled).toMatchObject({ status: 200, body: { status: 'cancelled' } });
      held.release();
      // The send under way ends (answered, or timed out meanwhile); no other starts.
      expect(await ended(token, webhookId, started.body.id)).toMatchObject({ status: 'cancelled', sent: 1 });
      expect(received(path)).toHaveLength(held.before + 1);
    } finally {
      await api.close();
    }
  });
});

describe('the recovery routes refuse', () => {
  it('a window with since not before until, until in the future, or a time that is none: 400 VALIDATION_FAILED', async () => {
    const { token, webhookId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/recover/invalid')).then((s) => ({
      ...s,
      token: s.owner.token,
    }));
    const now = Date.now();
    const at = (offsetMs: number) => new Date(now + offsetMs).toISOString();
    for (const [body, path] of [
      [{ since: at(-1000), until: at(-1000) }, '/since'],
      [{ since: at(-1000), until: at(-2000) }, '/since'],
      [{ since: at(-1000), until: at(60_000) }, '/until'],
      [{ since: at(60_000) }, '/since'],
      [{ since: '2026-13-45T99:99:99Z' }, '/since'],
      [{ since: 'yesterday' }, '/since'],
      [{}, '/since'],
      [{ since: at(-1000), extra: 1 }, '/extra'],
    ] as const) {
      const refused = await recover(token, webhookId, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path, message: expect.any(String) }] });
    }
    expect((await suite.stack.request('GET', `/v3/webhooks/${webhookId}/recoveries`, { token })).body).toEqual({ data: [] });
  });

  it("another webhook's or account's recovery ids: 404", async () => {
    const { token, webhookId, since } = await webhookThatMissed('/recover/mine', 1);
    const mine = await recover(token, webhookId, { since });
    await ended(token, webhookId, mine.body.id);
    const other = await suite.stack.registerWebhook(token, suite.receiver.urlFor('/recover/other'));
    for (const method of ['GET', 'DELETE']) {
      for (const recoveryId of ['rcv_000000000000000000000000', 'nope', mine.body.id]) {
        const path = `/v3/webhooks/${recoveryId === mine.body.id ? other.id : webhookId}/recoveries/${recoveryId}`;
        const answer = await suite.stack.request(method, path, { token });
        expect(answer, `${method} ${path}`).toMatchObject({ status: 404, body: { error: { code: 'RECOVERY_NOT_FOUND' } } });
      }
    }
    const stranger = await suite.stack.createAccount();
    for (const [method, path] of [
      ['GET', `/v3/webhooks/${webhookId}/recoveries/${mine.body.id}`],
      ['DELETE', `/v3/webhooks/${webhookId}/recoveries/${mine.body.id}`],
      ['GET', `/v3/webhooks/${webhookId}/recoveries`],
      ['POST', `/v3/webhooks/${webhookId}/recoveries`],
    ] as const) {
      const answer = await suite.stack.request(method, path, { token: stranger.token, body: method === 'POST' ? { since } : undefined });
      expect(answer, `${method} ${path}`).toMatchObject({ status: 404, body: { error: { code: 'WEBHOOK_NOT_FOUND' } } });
    }
  });
});
