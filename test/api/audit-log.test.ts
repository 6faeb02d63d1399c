// The audit log over HTTP, on the whole stack: every action made through /v3 gives exactly one
// entry, with its target, the token and address that made it, and what it set (never a secret
// or a token), whether a route's own statement or a workflow's activity makes the change; the
// automatic pause has no actor; a refused request records nothing; an account sees its own
// entries only; paging and the action filter.
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, type AuditEntry, type AuditLogPage } from '../../src/objects';
import { useStackWithReceiver, type ApiResponse } from '../support/stack';

const suite = useStackWithReceiver();

/** The whole audit log of the account whose admin token this is, oldest first. */
async function auditLog(token: string): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  for (let before: string | null = null; ;) {
    const page: ApiResponse<AuditLogPage> = await suite.stack.request(
      'GET',
      `/v3/account/audit-log?limit=100${before ? `&before=${before}` : ''}`,
      { token },
    );
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    entries.push(...page.body.data);
    before = page.body.next;
    if (before === null) return entries.reverse();
  }
}

/** A new account, and a token of it named `name` (holding all six scopes) that the changes are made with. */
async function accountWithToken(name: string) {
  const account = await suite.stack.createAccount();
  const made = await suite.stack.request('POST', '/v3/account/tokens', { token: account.token, body: { name } });
  expect(made.status).toBe(201);
  return { account, admin: account.token, token: made.body.token as string, tokenId: made.body.id as string };
}

describe('every action made through /v3', () => {
  it('gives exactly one entry, with its target, the token and the address that made it, and what it set', async () => {
    const { account, admin, token, tokenId } = await accountWithToken('CI');
    const actor = { tokenId, tokenName: 'CI', clientAddress: '127.0.0.1' };
    const call = async (method: string, path: string, body?: unknown, status = 200) => {
      const response = await suite.stack.request(method, path, { token, body });
      expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(status);
      return response.body;
    };
    const url = suite.receiver.urlFor('/audit/every-action');
    const failing = suite.receiver.urlFor('/audit/missed');
    const listId = `audit-${account.id}`;
    expect((await suite.stack.putList(listId, account.id)).status).toBe(201);

    const webhook = await call('POST', '/v3/webhooks', { url }, 201);
    await call('POST', '/v3/webhooks', { url, events: ['item.added'], listIds: [listId] });
    await call('PATCH', `/v3/webhooks/${webhook.id}`, { events: ['list.changed', 'item.added'] });
    // Both at once: the topics are stored by the route, the pause by the webhook's workflow.
    await call('PATCH', `/v3/webhooks/${webhook.id}`, { listIds: [], status: 'paused' });
    // Paused already: nothing changes, nothing is recorded.
    await call('PATCH', `/v3/webhooks/${webhook.id}`, { status: 'paused' });
    await call('PATCH', `/v3/webhooks/${webhook.id}`, { status: 'active' });
    const { secret } = await call('POST', `/v3/webhooks/${webhook.id}/secret`);
    const ownSecret = `whsec_${'s'.repeat(40)}`;
    await call('POST', `/v3/webhooks/${webhook.id}/secret`, { secret: ownSecret });
    expect(await call('POST', `/v3/webhooks/${webhook.id}/pings`)).toMatchObject({ delivered: true });
    // The log's one ping: a registration's ping is not logged.
    const [pingLogged] = (await call('GET', `/v3/webhooks/${webhook.id}/deliveries?kind=ping`)).data;
    const testEvent = await call('POST', `/v3/webhooks/${webhook.id}/test-events`, { event: 'item.added', listId });
    await suite.stack.reportWrite(listId, 'audit-logged');
    const [logged] = (await call('GET', `/v3/webhooks/${webhook.id}/deliveries?kind=event`)).data;
    const redelivery = await call('POST', `/v3/webhooks/${webhook.id}/deliveries/${logged.id}/redeliveries`);

    // A recovery cancelled while its one send waits at the receiver.
    const missing = await call('POST', '/v3/webhooks', { url: failing, listIds: [listId] }, 201);
    const since = new Date().toISOString();
    suite.receiver.respondWith({ status: 500 });
    await suite.stack.reportWrite(listId, 'audit-missed');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    suite.receiver.respondWith(async (request) => {
      if (request.path === '/audit/missed') await held;
      return {};
    });
    const receivedBefore = suite.receiver.requests.length;
    const recovery = await call('POST', `/v3/webhooks/${missing.id}/recoveries`, { since }, 202);
    await suite.receiver.waitForRequests(receivedBefore + 1);
    expect(await call('DELETE', `/v3/webhooks/${missing.id}/recoveries/${recovery.id}`)).toMatchObject({ status: 'cancelled' });
    release();
    // Ended already: nothing more is cancelled, nothing recorded.
    await call('DELETE', `/v3/webhooks/${missing.id}/recoveries/${recovery.id}`);

    await call('PATCH', '/v3/account', { notificationEmail: 'owner@example.com' });
    const session = await call('POST', '/v3/relay-sessions', { events: ['item.added'] }, 201);
    await call('DELETE', `/v3/webhooks/${session.id}`, undefined, 204);
    await call('DELETE', `/v3/webhooks/${webhook.id}`, undefined, 204);
    const spare = await call('POST', '/v3/account/tokens', { name: 'spare', scopes: ['webhooks:read'] }, 201);
    await call('DELETE', `/v3/account/tokens/${spare.id}`, undefined, 204);

    const entries = await auditLog(admin);
    const madeBy = (tokenName: string) => (tokenName === 'CI' ? actor : expect.objectContaining({ tokenName }));
    const expected = [
      ['token.created', 'token', tokenId, 'initial', { name: 'CI', scopes: expect.any(Array), expiresAt: null }],
      ['webhook.created', 'webhook', webhook.id, 'CI', { url: webhook.url, events: ['list.changed'], listIds: [] }],
      ['webhook.updated', 'webhook', webhook.id, 'CI', { events: ['item.added'], listIds: [listId] }],
      ['webhook.updated', 'webhook', webhook.id, 'CI', { events: ['list.changed', 'item.added'] }],
      ['webhook.updated', 'webhook', webhook.id, 'CI', { listIds: [] }],
      ['webhook.paused', 'webhook', webhook.id, 'CI', { pausedReason: 'manual' }],
      [
        'webhook.reactivated',
        'webhook',
        webhook.id,
        'CI',
        { previous: { status: 'paused', pausedReason: 'manual', consecutiveFailures: 0 } },
      ],
      ['webhook.secret_rotated', 'webhook', webhook.id, 'CI', {}],
      ['webhook.secret_rotated', 'webhook', webhook.id, 'CI', {}],
      ['webhook.pinged', 'webhook', webhook.id, 'CI', { deliveryId: pingLogged.id }],
      ['webhook.test_event_sent', 'webhook', webhook.id, 'CI', { deliveryId: testEvent.deliveryId, event: 'item.added', listId }],
      ['delivery.redelivered', 'delivery', logged.id, 'CI', { webhookId: webhook.id, deliveryId: redelivery.deliveryId }],
      ['webhook.created', 'webhook', missing.id, 'CI', { url: missing.url, events: ['list.changed'], listIds: [listId] }],
      ['recovery.started', 'recovery', recovery.id, 'CI', { webhookId: missing.id, since, until: recovery.until, total: 1 }],
      ['recovery.cancelled', 'recovery', recovery.id, 'CI', { webhookId: missing.id }],
      ['account.updated', 'account', account.id, 'CI', { notificationEmail: 'owner@example.com' }],
      ['relay.opened', 'webhook', session.id, 'CI', { events: ['item.added'], listIds: [] }],
      ['relay.closed', 'webhook', session.id, 'CI', {}],
      ['webhook.deleted', 'webhook', webhook.id, 'CI', { url: webhook.url }],
      ['token.created', 'token', spare.id, 'CI', { name: 'spare', scopes: ['webhooks:read'], expiresAt: null }],
      ['token.revoked', 'token', spare.id, 'CI', { name: 'spare' }],
    ] as const;
    expect(entries).toEqual(
      expected.map(([action, type, id, tokenName, details]) => ({
        id: expect.stringMatching(/^aud_[0-9a-f]{24}$/),
        at: expect.any(String),
        action,
        target: { type, id },
        actor: madeBy(tokenName),
        details,
      })),
    );
    // Every action there is, each as many times as it was made.
    expect(new Set(entries.map((entry) => entry.action))).toEqual(new Set(AUDIT_ACTIONS));
    // Never a secret or a token, in any field.
    const text = JSON.stringify(entries);
    for (const hidden of [secret, ownSecret, webhook.secret, session.secret, token, admin, spare.token]) expect(text).not.toContain(hidden);
  });

  it('records the pause after 20 failures with no actor, and the reactivation with who asked', async () => {
    const { owner, webhookId, listId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/audit/failing'));
    suite.receiver.respondWith((request) => (request.path === '/audit/failing' ? { status: 503 } : {}));
    for (let i = 0; i < 20; i++) await suite.stack.reportWrite(listId, `failing-${i}`);
    await suite.stack.waitForFailureCount(owner.token, webhookId, 20);
    await suite.stack.request('PATCH', `/v3/webhooks/${webhookId}`, { token: owner.token, body: { status: 'active' } });

    const [, paused, reactivated] = await auditLog(owner.token);
    expect(paused).toMatchObject({
      action: 'webhook.paused',
      target: { type: 'webhook', id: webhookId },
      actor: null,
      details: { pausedReason: 'auto_failures', consecutiveFailures: 20 },
    });
    expect(reactivated).toMatchObject({
      action: 'webhook.reactivated',
      actor: { tokenName: 'initial', clientAddress: '127.0.0.1' },
      details: { previous: { status: 'paused', pausedReason: 'auto_failures', consecutiveFailures: 20 } },
    });
    expect(await auditLog(owner.token)).toHaveLength(3);
  });
});

describe('which token rotated a secret', () => {
  it('is read in the audit log, filtered to webhook.secret_rotated', async () => {
    const { admin, token: ci, tokenId } = await accountWithToken('deploy bot');
    const webhook = await suite.stack.registerWebhook(admin, suite.receiver.urlFor('/audit/rotated'));
    const rotated = await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/secret`, { token: ci });
    expect(rotated.status).toBe(200);

    const page = await suite.stack.request('GET', '/v3/account/audit-log?action=webhook.secret_rotated', { token: admin });
    expect(page.body).toEqual({
      data: [
        {
          id: expect.any(String),
          at: expect.any(String),
          action: 'webhook.secret_rotated',
          target: { type: 'webhook', id: webhook.id },
          actor: { tokenId, tokenName: 'deploy bot', clientAddress: '127.0.0.1' },
          details: {},
        },
      ],
      next: null,
    });
    expect(JSON.stringify(page.body)).not.toContain(rotated.body.secret);
  });
});

describe('a refused request', () => {
  it('records nothing, whatever refused it', async () => {
    const { admin, token } = await accountWithToken('refused');
    const other = await suite.stack.createAccount();
    const theirs = await suite.stack.registerWebhook(other.token, suite.receiver.urlFor('/audit/theirs'));
    const webhook = await suite.stack.registerWebhook(token, suite.receiver.urlFor('/audit/refused'));
    const reader = await suite.stack.request('POST', '/v3/account/tokens', { token, body: { name: 'reader', scopes: ['webhooks:read'] } });
    const before = await auditLog(admin);
    suite.receiver.respondWith((request) => (request.path === '/audit/unreachable' ? { status: 500 } : {}));

    const refused: [string, string, string | null, unknown, number][] = [
      ['PATCH', `/v3/webhooks/${webhook.id}`, token, { status: 'gone' }, 400],
      ['PATCH', `/v3/webhooks/${webhook.id}`, token, { listIds: ['not-a-list-of-mine'] }, 400],
      ['PATCH', `/v3/webhooks/${theirs.id}`, token, { status: 'paused' }, 404],
      ['DELETE', `/v3/webhooks/${theirs.id}`, token, undefined, 404],
      ['POST', `/v3/webhooks/${theirs.id}/secret`, token, undefined, 404],
      ['POST', `/v3/webhooks/${webhook.id}/secret`, token, { secret: 'whsec_short' }, 400],
      ['POST', '/v3/webhooks', token, { url: suite.receiver.urlFor('/audit/unreachable') }, 422],
      ['POST', `/v3/webhooks/${webhook.id}/deliveries/dlv_${'0'.repeat(24)}/redeliveries`, token, undefined, 404],
      ['POST', `/v3/webhooks/${webhook.id}/test-events`, token, { event: 'item.added', listId: 'not-mine' }, 400],
      ['DELETE', `/v3/webhooks/${webhook.id}`, reader.body.token, undefined, 403],
      ['POST', `/v3/webhooks/${webhook.id}/pings`, reader.body.token, undefined, 403],
      ['POST', '/v3/account/tokens', reader.body.token, { name: 'wider' }, 403],
      ['PATCH', '/v3/account', token, { notificationEmail: 'not an address' }, 400],
      ['DELETE', `/v3/account/tokens/tkn_${'0'.repeat(24)}`, token, undefined, 404],
      ['DELETE', `/v3/webhooks/${webhook.id}`, null, undefined, 401],
      ['DELETE', `/v3/webhooks/${webhook.id}`, other.token, undefined, 404],
    ];
    for (const [method, path, caller, body, status] of refused) {
      const response = await suite.stack.request(method, path, { token: caller, body });
      expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(status);
    }
    expect(await auditLog(admin)).toEqual(before);
    expect((await auditLog(other.token)).map((entry) => entry.action)).toEqual(['webhook.created']);
  });
});

describe('reading the audit log', () => {
  it('shows an account its own entries only, and needs account:admin', async () => {
    const mine = await accountWithToken('mine');
    const theirs = await accountWithToken('theirs');
    await suite.stack.registerWebhook(mine.token, suite.receiver.urlFor('/audit/mine'));
    await suite.stack.registerWebhook(theirs.token, suite.receiver.urlFor('/audit/theirs-only'));
    const [mineLog, theirLog] = [await auditLog(mine.admin), await auditLog(theirs.admin)];
    expect(mineLog.map((entry) => [entry.action, entry.actor?.tokenName])).toEqual([
      ['token.created', 'initial'],
      ['webhook.created', 'mine'],
    ]);
    expect(theirLog.map((entry) => [entry.action, entry.actor?.tokenName])).toEqual([
      ['token.created', 'initial'],
      ['webhook.created', 'theirs'],
    ]);
    expect(JSON.stringify(theirLog)).not.toContain(mine.tokenId);
    expect(JSON.stringify(theirLog)).not.toContain(mineLog[1].target.id);
    // Another account's entry as a cursor pages nothing of this account's.
    const theirLast = theirLog.at(-1)!;
    const crossed = await suite.stack.request('GET', `/v3/account/audit-log?before=${theirLast.id}`, { token: mine.admin });
    expect(crossed.body).toEqual({ data: [], next: null });

    const reader = await suite.stack.request('POST', '/v3/account/tokens', {
      token: mine.admin,
      body: { name: 'reader', scopes: ['webhooks:read', 'account:read'] },
    });
    const refused = await suite.stack.request('GET', '/v3/account/audit-log', { token: reader.body.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'account:admin' });
  });

  it('pages newest first with limit and before, filters by action, and answers 400 for an unknown action or a bad page', async () => {
    const { admin, token } = await accountWithToken('pager');
    const webhook = await suite.stack.registerWebhook(token, suite.receiver.urlFor('/audit/pages'));
    for (let i = 0; i < 5; i++) {
      expect((await suite.stack.request('POST', `/v3/webhooks/${webhook.id}/pings`, { token })).status).toBe(200);
    }
    const all = (await auditLog(admin)).reverse();
    expect(all.map((entry) => entry.action)).toEqual([...Array(5).fill('webhook.pinged'), 'webhook.created', 'token.created']);

    const pages: AuditEntry[][] = [];
    for (let before: string | null = null, first = true; first || before !== null; first = false) {
      const page: ApiResponse<AuditLogPage> = await suite.stack.request(
        'GET',
        `/v3/account/audit-log?limit=3${before ? `&before=${before}` : ''}`,
        { token: admin },
      );
      pages.push(page.body.data);
      before = page.body.next;
    }
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(all);

    const pinged = await suite.stack.request('GET', '/v3/account/audit-log?action=webhook.pinged&limit=4', { token: admin });
    expect(pinged.body.data).toEqual(all.slice(0, 4));
    expect(pinged.body.next).toBe(all[3].id);
    const rest = await suite.stack.request('GET', `/v3/account/audit-log?action=webhook.pinged&before=${pinged.body.next}`, {
      token: admin,
    });
    expect(rest.body).toEqual({ data: [all[4]], next: null });

    for (const [query, path] of [
      ['action=webhook.renamed', '/query/action'],
      ['action=', '/query/action'],
      ['limit=0', '/query/limit'],
      ['limit=101', '/query/limit'],
      ['before=dlv_000000000000000000000000', '/query/before'],
      ['since=2026-01-01', '/query/since'],
    ]) {
      const response = await suite.stack.request('GET', `/v3/account/audit-log?${query}`, { token: admin });
      expect(response.status, query).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path, message: expect.any(String) }] });
    }
  });
});
