// The audit log in PostgreSQL: the entries the stores of `webhook/{id}`'s state make (a pause
// by hand or by failures, a reactivation; none for counting, none twice for one store), those
// of the attempts an owner asked for (only with their log row), a relay session closed past its
// grace, paging within one account, and retention.
import { describe, expect, it } from 'vitest';
import type { WebhookLifecycleState } from '../../src/contract/payloads';
import { createAccount } from '../../src/db/accounts';
import { listAuditLog } from '../../src/db/audit-log';
import { recordAskedDeliveries } from '../../src/db/deliveries';
import { createRelaySession, sweepRelaySessions } from '../../src/db/relay-sessions';
import { deleteRecordsOlderThan } from '../../src/db/retention';
import { deleteWebhookRow, mirrorWebhookState } from '../../src/db/webhooks';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { attemptRecord, insertWebhook } from '../../scripts/lib/webhook-rows';
import { TEST_ACTOR, useMigratedDatabase } from '../support/database';
import { initialLifecycleState, storeRules } from '../support/lifecycle-state';

const database = useMigratedDatabase({ connections: 4 });

async function newWebhook() {
  const account = await createAccount(database.sql, 'audit log test');
  const webhookId = await insertWebhook(database.sql, account.id);
  return { accountId: account.id, webhookId, state: initialLifecycleState(webhookId, account.id) };
}

/** The account's entries, oldest first, as action, actor and details. */
async function entries(accountId: string) {
  const newestFirst = await listAuditLog(database.sql, accountId, { limit: 100 });
  return newestFirst.reverse().map(({ action, actor, details }) => ({ action, actor, details }));
}

const other = { ...TEST_ACTOR, tokenName: 'other' };

describe('mirrorWebhookState', () => {
  it('records a pause by hand and a reactivation with who asked, a pause by failures with no actor, and nothing for counting', async () => {
    const { accountId, state } = await newWebhook();
    const store = (next: Partial<WebhookLifecycleState>, requester?: typeof TEST_ACTOR) =>
      mirrorWebhookState(database.sql, { ...state, ...next }, storeRules(), requester);
    await store({ consecutiveFailures: 3, failuresCounted: 3 });
    await store({ status: 'paused', pausedReason: 'manual', consecutiveFailures: 3, failuresCounted: 3 }, TEST_ACTOR);
    // The same store again (a retried activity) records nothing more.
    await store({ status: 'paused', pausedReason: 'manual', consecutiveFailures: 3, failuresCounted: 3 }, TEST_ACTOR);
    await store({ status: 'active', consecutiveFailures: 0, failuresCounted: 3 }, other);
    await store({ consecutiveFailures: 19, failuresCounted: 22 });
    await store({ status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20, failuresCounted: 23 });
    await store({ status: 'active', consecutiveFailures: 0, failuresCounted: 23 }, TEST_ACTOR);
    // A 2xx resets the count: no one asked, nothing recorded; a reactivation of an active webhook resets it too, and is.
    await store({ consecutiveFailures: 2, failuresCounted: 25 });
    await store({ consecutiveFailures: 0, failuresCounted: 25 });
    await store({ consecutiveFailures: 4, failuresCounted: 29 });
    await store({ consecutiveFailures: 0, failuresCounted: 29 }, other);

    expect(await entries(accountId)).toEqual([
      { action: 'webhook.paused', actor: TEST_ACTOR, details: { pausedReason: 'manual' } },
      {
        action: 'webhook.reactivated',
        actor: other,
        details: { previous: { status: 'paused', pausedReason: 'manual', consecutiveFailures: 3 } },
      },
      { action: 'webhook.paused', actor: null, details: { pausedReason: 'auto_failures', consecutiveFailures: 20 } },
      {
        action: 'webhook.reactivated',
        actor: TEST_ACTOR,
        details: { previous: { status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 } },
      },
      {
        action: 'webhook.reactivated',
        actor: other,
        details: { previous: { status: 'active', pausedReason: null, consecutiveFailures: 4 } },
      },
    ]);
  });
});

describe('recordAskedDeliveries', () => {
  it("records an asked attempt's entry with its log row, in its webhook's account; nothing for the others or for a webhook gone", async () => {
    const { accountId, webhookId } = await newWebhook();
    const gone = await newWebhook();
    const ping = attemptRecord(webhookId, { kind: 'ping' });
    const pinged = { action: 'webhook.pinged', target: { type: 'webhook', id: webhookId }, details: { deliveryId: ping.id } } as const;
    await deleteWebhookRow(database.sql, gone.webhookId, TEST_ACTOR);
    const goneRecord = attemptRecord(gone.webhookId, { kind: 'ping' });
    await recordAskedDeliveries(database.sql, [
      attemptRecord(webhookId),
      { ...ping, audit: { ...pinged, actor: TEST_ACTOR } },
      { ...goneRecord, audit: { ...pinged, target: { type: 'webhook', id: gone.webhookId }, actor: TEST_ACTOR } },
    ]);
    const [entry] = await listAuditLog(database.sql, accountId, { limit: 10 });
    expect(entry).toEqual({ id: expect.stringMatching(/^aud_/), at: expect.any(String), ...pinged, actor: TEST_ACTOR });
    expect(await entries(accountId)).toHaveLength(1);
    // The deleted webhook's account has its deletion only.
    expect((await entries(gone.accountId)).map(({ action }) => action)).toEqual(['webhook.deleted']);
  });
});

describe('relay sessions', () => {
  it('records relay.opened with who opened it, and relay.closed with no actor when the service deletes it past its grace', async () => {
    const { id: accountId } = await createAccount(database.sql, 'relay audit');
    const session = (await createRelaySession(
      database.sql,
      fixedSecretBox(),
      { accountId, events: ['list.changed'], listIds: [] },
      TEST_ACTOR,
    ))!;
    await database.sql`UPDATE webhooks SET relay_closed_at = now() - interval '2 minutes' WHERE id = ${session.id}`;
    expect((await sweepRelaySessions(database.sql, 60)).deleted).toContain(session.id);
    expect(await entries(accountId)).toEqual([
      { action: 'relay.opened', actor: TEST_ACTOR, details: { events: ['list.changed'], listIds: [] } },
      { action: 'relay.closed', actor: null, details: {} },
    ]);
  });
});

describe('listAuditLog', () => {
  it("pages newest first within one account, of one action if asked, and never shows another account's", async () => {
    const { accountId, state } = await newWebhook();
    const theirs = await newWebhook();
    for (let i = 0; i < 3; i++) {
      await mirrorWebhookState(database.sql, { ...state, status: 'paused', pausedReason: 'manual' }, storeRules(), TEST_ACTOR);
      await mirrorWebhookState(database.sql, state, storeRules(), TEST_ACTOR);
    }
    await mirrorWebhookState(database.sql, { ...theirs.state, status: 'paused', pausedReason: 'manual' }, storeRules(), TEST_ACTOR);

    const all = await listAuditLog(database.sql, accountId, { limit: 100 });
    expect(all.map((entry) => entry.action)).toEqual(Array(3).fill(['webhook.reactivated', 'webhook.paused']).flat());
    const times = all.map((entry) => entry.at);
    expect([...times].sort().reverse()).toEqual(times);
    const second = await listAuditLog(database.sql, accountId, { limit: 2, before: all[1].id });
    expect(second).toEqual(all.slice(2, 4));
    const paused = await listAuditLog(database.sql, accountId, { limit: 2, action: 'webhook.paused' });
    expect(paused).toEqual([all[1], all[3]]);
    // Another account's entry as the cursor finds nothing of this one.
    const [their] = await listAuditLog(database.sql, theirs.accountId, { limit: 1 });
    expect(await listAuditLog(database.sql, accountId, { limit: 10, before: their.id })).toEqual([]);
  });
});

describe('retention', () => {
  it('prunes the entries older than the window and keeps the rest', async () => {
    const { accountId, state } = await newWebhook();
    await mirrorWebhookState(database.sql, { ...state, status: 'paused', pausedReason: 'manual' }, storeRules(), TEST_ACTOR);
    await mirrorWebhookState(database.sql, state, storeRules(), TEST_ACTOR);
    const [recent, old] = await listAuditLog(database.sql, accountId, { limit: 2 });
    await database.sql`UPDATE audit_log SET at = now() - interval '31 days' WHERE id = ${old.id}`;
    const pruned = await deleteRecordsOlderThan(database.sql, 30);
    expect(pruned.auditLog).toBeGreaterThanOrEqual(1);
    expect(await listAuditLog(database.sql, accountId, { limit: 10 })).toEqual([recent]);
  });
});
