// Concurrency (issue 6, item 5): registrations racing each other never make two webhooks
// with one URL nor a sixth webhook, and PATCH status: active racing failing deliveries
// never leaves the per-webhook workflow and the API disagreeing, nor a paused webhook with
// a count other than 20 (or an active one at 20).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONSECUTIVE_FAILURES } from '../../src/contract/rules';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../../src/limits';
import { lifecycleWorkflowId } from '../../src/contract/workflows';
import { lifecycleStateQuery } from '../../src/contract/messages';
import type { Receiver } from '../support/receiver';
import { startTestStack, type ApiResponse, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';
import { recordScenario } from './support/scenarios';

let stack: TestStack;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startTestStack({ DELIVERY_TIMEOUT_MS: '10000' });
  receiver = await stack.startReceiver();
  // Pings are answered 200 (so webhooks register); events to a /failing path get 500.
  receiver.respondWith((request) => ({
    status: request.headers['svc-event'] !== 'ping' && request.path.startsWith('/failing') ? 500 : 200,
  }));
});
afterAll(() => stack?.stop());

const histogram = (responses: ApiResponse[]) => {
  const counts = new Map<number, number>();
  for (const { status } of responses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts]
    .sort(([x], [y]) => x - y)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
};

describe('concurrent registrations', () => {
  it('100 concurrent registrations of the same URL make exactly one webhook', async ({ task }) => {
    const row = recordScenario(task, { scenario: '100 concurrent registrations of one URL', requests: 100 });
    const account = await stack.createAccount();
    const url = receiver.urlFor(`/same/${randomBytes(4).toString('hex')}`);
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => stack.request('POST', '/v3/webhooks', { token: account.token, body: { url } })),
    );
    row.durationMs = Math.round(performance.now() - started);
    row.outcome = histogram(responses);
    row.fiveXx = responses.filter((response) => response.status >= 500).length;

    // One creates it, the rest update it. On a loaded machine some pings can miss their
    // deadline: those answer 422 and change nothing, which is right too; nothing else may happen.
    const stored2xx = responses.filter((response) => response.status === 200 || response.status === 201);
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
    expect(responses.every((response) => [200, 201].includes(response.status) || response.body.error?.code === 'WEBHOOK_UNREACHABLE')).toBe(
      true,
    );
    expect(stored2xx.length).toBeGreaterThan(1);
    const ids = new Set(stored2xx.map((response) => response.body.id));
    expect(ids.size).toBe(1);
    const listed = (await stack.request('GET', '/v3/webhooks', { token: account.token })).body.data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: [...ids][0], url, status: 'active' });
    const [stored] = await stack.service.sql<
      { count: number }[]
    >`SELECT count(*)::int AS count FROM webhooks WHERE account_id = ${account.id}`;
    expect(stored.count).toBe(1);
    row.note = 'one webhook, one id in every 2xx answer';
  });

  it(`20 concurrent registrations of new URLs make exactly ${MAX_WEBHOOKS_PER_ACCOUNT}`, async ({ task }) => {
    const row = recordScenario(task, { scenario: '20 concurrent registrations of new URLs by one account', requests: 20 });
    const account = await stack.createAccount();
    const urls = Array.from({ length: 20 }, (_, i) => receiver.urlFor(`/limit/${randomBytes(4).toString('hex')}/${i}`));
    const started = performance.now();
    const responses = await Promise.all(urls.map((url) => stack.request('POST', '/v3/webhooks', { token: account.token, body: { url } })));
    row.durationMs = Math.round(performance.now() - started);
    row.outcome = histogram(responses);
    row.fiveXx = responses.filter((response) => response.status >= 500).length;

    const created = responses.filter((response) => response.status === 201);
    expect(created).toHaveLength(MAX_WEBHOOKS_PER_ACCOUNT);
    const refused = responses.filter((response) => response.status === 409);
    expect(refused).toHaveLength(20 - MAX_WEBHOOKS_PER_ACCOUNT);
    for (const response of refused) expect(response.body.error.code).toBe('WEBHOOK_LIMIT_EXCEEDED');
    const listed = (await stack.request('GET', '/v3/webhooks', { token: account.token })).body.data;
    expect(listed.map((webhook: { id: string }) => webhook.id).sort()).toEqual(created.map((response) => response.body.id).sort());
    row.note = `${MAX_WEBHOOKS_PER_ACCOUNT} stored, the ones answered 201`;
  });
});

describe('PATCH status: active racing failing deliveries', () => {
  /**
   * Each round starts active at 19 failures. `failing` writes that fail race `patches`
   * reactivations, started together, once the webhook shows paused (while writes are
   * still in flight), or each as soon as one write's outcomes are in. The last round
   * reactivates nothing: it must end paused at 20.
   */
  const ROUNDS: Array<{ trigger: 'together' | 'after the pause' | 'between outcomes' | 'none'; failing: number; patches: number }> = [
    { trigger: 'together', failing: 5, patches: 3 },
    { trigger: 'together', failing: 1, patches: 1 },
    { trigger: 'after the pause', failing: 8, patches: 3 },
    { trigger: 'after the pause', failing: 3, patches: 1 },
    { trigger: 'between outcomes', failing: 6, patches: 6 },
    { trigger: 'between outcomes', failing: 2, patches: 2 },
    { trigger: 'none', failing: 3, patches: 0 },
  ];

  it(`never leaves a paused webhook with a stale count (${ROUNDS.length} rounds)`, async ({ task }) => {
    const row = recordScenario(task, { scenario: 'PATCH active racing failing deliveries', requests: 0, fiveXx: 0 });
    const owner = await stack.createAccount();
    const webhook = await stack.registerWebhook(owner.token, receiver.urlFor(`/failing/${randomBytes(4).toString('hex')}`));
    const listId = `race-${randomBytes(6).toString('hex')}`;
    expect((await stack.putList(listId, owner.id)).status).toBe(201);
    const lifecycle = stack.service.client.workflow.getHandle(lifecycleWorkflowId(webhook.id));
    let writes = 0;
    const patchAnswers: ApiResponse[] = [];
    const write = () => stack.reportWrite(listId, `race-${writes++}`);
    const patchActive = async () => {
      const answer = await stack.request('PATCH', `/v3/webhooks/${webhook.id}`, { token: owner.token, body: { status: 'active' } });
      patchAnswers.push(answer);
      return answer;
    };
    const current = async () => (await stack.request('GET', `/v3/webhooks/${webhook.id}`, { token: owner.token })).body;
    const finals: string[] = [];

    for (const { trigger, failing, patches } of ROUNDS) {
      // From active with 0 failures to 19, one short of the pause.
      expect((await patchActive()).body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
      await Promise.all(Array.from({ length: MAX_CONSECUTIVE_FAILURES - 1 }, write));
      await stack.waitForFailureCount(owner.token, webhook.id, MAX_CONSECUTIVE_FAILURES - 1);

      if (trigger === 'together') {
        const racers = [...Array.from({ length: failing }, () => write), ...Array.from({ length: patches }, () => patchActive)];
        await Promise.all(racers.map((start) => start()));
      } else if (trigger === 'after the pause') {
        const writing = Promise.all(Array.from({ length: failing }, write));
        await waitFor(async () => ((await current()).status === 'paused' ? true : undefined), { what: 'the pause' });
        await Promise.all([writing, ...Array.from({ length: patches }, patchActive)]);
      } else if (trigger === 'between outcomes') {
        await Promise.all(Array.from({ length: failing }, (_, i) => write().then(() => (i < patches ? patchActive() : undefined))));
      } else {
        await Promise.all(Array.from({ length: failing }, write));
      }

      // Every write has been delivered (or skipped) and reported: once the workflow has counted
      // every failure reported (each held 5 s after it ended), it and the API must agree.
      const agreed = await waitFor(
        async () => {
          const pick = (s: { status: string; pausedReason: string | null; consecutiveFailures: number }) => ({
            status: s.status,
            pausedReason: s.pausedReason,
            consecutiveFailures: s.consecutiveFailures,
          });
          const counted = await lifecycle.query(lifecycleStateQuery);
          const [{ reported }] = await stack.service.sql<{ reported: number }[]>`
            SELECT failures_reported::int AS reported FROM webhooks WHERE id = ${webhook.id}`;
          if (counted.failuresCounted !== reported) return undefined;
          const [state, api] = [pick(counted), pick(await current())];
          return JSON.stringify(state) === JSON.stringify(api) ? api : undefined;
        },
        { what: `the workflow and the API to agree on ${webhook.id}` },
      );
      finals.push(`${trigger}: ${agreed.status}@${agreed.consecutiveFailures}`);
      if (agreed.status === 'paused') {
        expect(agreed).toEqual({ status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: MAX_CONSECUTIVE_FAILURES });
      } else {
        expect(agreed.pausedReason).toBeNull();
        expect(agreed.consecutiveFailures).toBeLessThan(MAX_CONSECUTIVE_FAILURES);
      }
      if (trigger === 'none') expect(agreed.status).toBe('paused');
    }
    row.requests = writes + patchAnswers.length;
    row.fiveXx = patchAnswers.filter((answer) => answer.status >= 500).length;
    for (const answer of patchAnswers) expect(answer.status).toBe(200);
    const paused = finals.filter((final) => final.includes('paused')).length;
    row.outcome = `agreed ${finals.length}/${ROUNDS.length}: paused@20 ×${paused}, active<20 ×${finals.length - paused}`;
    row.note = `${writes} failing writes, ${patchAnswers.length} PATCHes; ends: ${finals.map((final) => final.split(': ')[1]).join(' ')}`;
    // Two holds of 5 s a round (the 19 failures, then the race's outcomes), seven rounds.
  }, 240_000);
});
