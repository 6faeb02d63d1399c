// The way back from a pause (docs/api.md, "Probes"): a webhook paused by failures is probed
// by `probes/{taskQueue}/{shard}` until it answers, and its owner is told; the service never
// reactivates it. PROBE_INTERVALS of a second keep the suite short.
import { describe, expect, it } from 'vitest';
import type { ProbeState } from '../../src/contract/payloads';
import { addPauseSignal, lifecycleStateQuery, pausesQuery, removePauseSignal } from '../../src/contract/messages';
import { bulkTaskQueue, probesWorkflowId } from '../../src/contract/workflows';
import { signalWithStartProbes } from '../../src/temporal/probes-client';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver({ PROBE_INTERVALS: '1s' });

/** A webhook at `path`, its receiver failing, paused by 20 failed deliveries. */
async function pausedByFailures(path: string) {
  const set = await suite.stack.setUpListWebhook(suite.receiver.urlFor(path));
  suite.receiver.respondWith((request) => (request.path === path ? { status: 503 } : {}));
  for (let i = 0; i < 20; i++) await suite.stack.reportWrite(set.listId, `fail-${i}`);
  const webhook = await suite.stack.waitForFailureCount(set.owner.token, set.webhookId, 20);
  expect(webhook).toMatchObject({ status: 'paused', pausedReason: 'auto_failures' });
  return set;
}

/** The probes the log holds, newest first (the `kind` filter). */
async function probesLogged(token: string, webhookId: string) {
  const page = await suite.stack.request('GET', `/v3/webhooks/${webhookId}/deliveries?kind=probe&limit=100`, { token });
  expect(page.status).toBe(200);
  return page.body.data as { kind: string; event: string; outcome: string; statusCode: number | null }[];
}

/** The lifecycle's state once its probes are `probes`. */
function probesReach(webhookId: string, probes: ProbeState | null) {
  return waitFor(
    async () => {
      const state = await suite.stack.lifecycle(webhookId).query(lifecycleStateQuery);
      return (state.probes ?? null) === probes ? state : undefined;
    },
    { what: `the probes of ${webhookId} to be ${probes}` },
  );
}

/** The pause of `webhookId` as its shard's workflow probes it; undefined: it probes none. */
async function pauseInShard(webhookId: string) {
  const shard = suite.stack.service.client.workflow.getHandle(probesWorkflowId(bulkTaskQueue(suite.stack.taskQueue), webhookId));
  return (await shard.query(pausesQuery)).find((pause) => pause.webhookId === webhookId);
}

describe('probes/{taskQueue}/{shard}', () => {
  it('probes a webhook paused by failures until it answers, tells its owner once, and leaves it paused', async () => {
    const path = '/probe/comes-back';
    const { owner, webhookId } = await pausedByFailures(path);
    const { probesSince } = await probesReach(webhookId, 'probing');
    expect(await stateOfProbeColumn(webhookId)).toBe('probing');
    expect(await pauseInShard(webhookId)).toMatchObject({ since: probesSince });

    // Failing probes: logged as probes of the ping, never counted against the webhook.
    const failed = await waitFor(async () => {
      const probes = await probesLogged(owner.token, webhookId);
      return probes.length >= 2 ? probes : undefined;
    });
    expect(failed.every((probe) => probe.kind === 'probe' && probe.event === 'ping' && probe.outcome === 'failed')).toBe(true);
    expect(failed[0].statusCode).toBe(503);
    const probed = await suite.receiver.waitForRequests(1);
    const probeBody = probed
      .filter((request) => request.path === path)
      .at(-1)!
      .rawBody.toString();
    expect(JSON.parse(probeBody)).toMatchObject({ event: 'ping', webhookId });

    // The receiver comes back: the next probe gets a 2xx, the owner gets one notice.
    suite.receiver.respondWith({});
    const notice = await waitFor(async () => {
      const page = await suite.stack.request('GET', `/v3/account/notices?webhookId=${webhookId}`, { token: owner.token });
      return page.body.data.find((found: { type: string }) => found.type === 'webhook.reachable');
    });
    expect(notice).toMatchObject({ type: 'webhook.reachable', webhookId, consecutiveFailures: 20, lastError: 'non_2xx' });
    await probesReach(webhookId, 'reachable');
    expect(await pauseInShard(webhookId)).toBeUndefined();

    // Still paused, the count where the pause left it: only the owner reactivates.
    const webhook = await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token: owner.token });
    expect(webhook.body).toMatchObject({ status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 });
    const probes = await probesLogged(owner.token, webhookId);
    expect(probes[0]).toMatchObject({ outcome: 'delivered', statusCode: 200 });
    expect(probes.filter((probe) => probe.outcome === 'delivered')).toHaveLength(1);
    const notices = await suite.stack.request('GET', `/v3/account/notices?webhookId=${webhookId}`, { token: owner.token });
    expect(notices.body.data.map((found: { type: string }) => found.type)).toEqual([
      'webhook.reachable',
      'webhook.paused',
      'webhook.failing',
    ]);

    // Reactivated, the webhook forgets the pause's probes.
    const reactivated = await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token: owner.token, body: { status: 'active' } });
    expect(reactivated.body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    await probesReach(webhookId, null);
    expect(await stateOfProbeColumn(webhookId)).toBeNull();
  });

  it('ends the probing when the owner reactivates or deletes the webhook', async () => {
    for (const end of ['reactivate', 'delete'] as const) {
      const { owner, webhookId } = await pausedByFailures(`/probe/${end}`);
      const { probesSince } = await probesReach(webhookId, 'probing');
      expect(await pauseInShard(webhookId)).toMatchObject({ since: probesSince });
      const ended =
        end === 'reactivate'
          ? await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token: owner.token, body: { status: 'active' } })
          : await suite.stack.request('DELETE', `/v3/webhooks/${webhookId}`, { token: owner.token });
      expect(ended.status).toBeLessThan(300);
      await waitFor(async () => ((await pauseInShard(webhookId)) === undefined ? true : undefined), {
        what: `the probes of ${webhookId} to stop (${end})`,
      });
    }
  });

  it('sends no probe to a webhook that is no longer paused when its probe would leave', async () => {
    const path = '/probe/active-again';
    const { owner, webhookId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor(path));
    const requestsBefore = suite.receiver.requests.filter((request) => request.path === path).length; // the registration's ping
    // The shard holds a pause of an active webhook, as after a reactivation whose stop has not reached it yet: a probe due at once.
    const since = Date.now() - 1_000;
    const plan = { intervalsMs: [1_000], forMs: 60_000, deliveryTimeoutMs: 2_000 };
    await signalWithStartProbes(suite.stack.service.client, bulkTaskQueue(suite.stack.taskQueue), { webhookId, since, plan });
    await waitFor(async () => (((await pauseInShard(webhookId))?.sent ?? 0) >= 1 ? true : undefined), {
      what: `the shard to have tried the probe of ${webhookId}`,
    });
    expect(suite.receiver.requests.filter((request) => request.path === path)).toHaveLength(requestsBefore);
    expect(await probesLogged(owner.token, webhookId)).toEqual([]);
    const shard = suite.stack.service.client.workflow.getHandle(probesWorkflowId(bulkTaskQueue(suite.stack.taskQueue), webhookId));
    await shard.signal(removePauseSignal, { webhookId, since });
  });

  it('ends by itself once PROBE_MAX_DAYS have passed, and the webhook stays paused', async () => {
    const { owner, webhookId } = await pausedByFailures('/probe/never-back');
    const { probesSince } = await probesReach(webhookId, 'probing');
    // The same pause handed over again with a plan a test can outlive: two more probes, half a second apart.
    const shard = suite.stack.service.client.workflow.getHandle(probesWorkflowId(bulkTaskQueue(suite.stack.taskQueue), webhookId));
    await shard.signal(removePauseSignal, { webhookId, since: probesSince! });
    const forMs = Date.now() - probesSince! + 1_200;
    await shard.signal(addPauseSignal, {
      webhookId,
      since: probesSince!,
      plan: { intervalsMs: [500], forMs, deliveryTimeoutMs: 2_000 },
    });
    await probesReach(webhookId, 'expired');
    expect(await pauseInShard(webhookId)).toBeUndefined();
    expect(await stateOfProbeColumn(webhookId)).toBe('expired');
    const webhook = await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token: owner.token });
    expect(webhook.body).toMatchObject({ status: 'paused', pausedReason: 'auto_failures' });
    const notices = await suite.stack.request('GET', `/v3/account/notices?webhookId=${webhookId}`, { token: owner.token });
    expect(notices.body.data.map((found: { type: string }) => found.type)).not.toContain('webhook.reachable');
  });
});

async function stateOfProbeColumn(webhookId: string): Promise<string | null> {
  const [row] = await suite.stack.service.sql<
    { probeState: string | null }[]
  >`SELECT probe_state AS "probeState" FROM webhooks WHERE id = ${webhookId}`;
  return row.probeState;
}
