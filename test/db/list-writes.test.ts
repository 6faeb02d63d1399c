import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import { recordListWrite } from '../../src/db/list-writes';
import type { ListChange } from '../../src/objects';
import { putList } from '../../src/db/lists';
import { beginRegistration, storeRegisteredWebhook } from '../../src/db/registrations';
import { newId } from '../../src/ids';
import type { Topic } from '../../src/topics';
import { useMigratedDatabase } from '../support/database';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';

const database = useMigratedDatabase({ connections: 8 });

async function newAccount() {
  return (await createAccount(database.sql, 'list writes test')).id;
}

async function newList(ownerAccountId: string, memberAccountIds: string[] = []) {
  const listId = `list-${randomUUID()}`;
  await putList(database.sql, { id: listId, ownerAccountId, memberAccountIds });
  return listId;
}

async function newWebhook(accountId: string, events: Topic[], listIds: string[] = []) {
  const registrationId = newId('reg');
  const url = `https://receiver.test/${registrationId}`;
  const { webhookId } = await beginRegistration(database.sql, fixedSecretBox(), { registrationId, accountId, url });
  const stored = await storeRegisteredWebhook(database.sql, {
    registrationId,
    webhookId,
    accountId,
    url,
    events,
    listIds,
    deliveryTimeoutMs: 1000,
  });
  expect(stored.outcome).toBe('created');
  return webhookId;
}

function write(listId: string, changes: ListChange[], writeId = `w-${randomUUID()}`) {
  return recordListWrite(database.sql, { listId, writeId, at: '2026-11-23T10:00:00.123Z', changes });
}

/** A delivery id as the event feed fixes it with the write. */
const DELIVERY_ID = expect.stringMatching(/^dlv_[0-9a-f]{24}$/);

describe('recordListWrite', () => {
  it('records a write with the next cursor and its recipients, answers a repeat as first recorded, refuses another body, and finds no unknown list', async () => {
    const owner = await newAccount();
    const listId = await newList(owner);
    const everything = await newWebhook(owner, ['list.changed', 'item.added']);
    const checksOnly = await newWebhook(owner, ['item.checked']);

    const first = await write(listId, [{ type: 'item.added', itemId: 'i1' }], 'w1');
    expect(first).toEqual({
      outcome: 'recorded',
      write: { listId, writeId: 'w1', cursor: 1, at: '2026-11-23T10:00:00.123Z', topics: ['list.changed', 'item.added'] },
      recipients: [{ webhookId: everything, topics: ['list.changed', 'item.added'], deliveryIds: [DELIVERY_ID, DELIVERY_ID] }],
    });
    const second = await write(listId, [{ type: 'item.checked', itemId: 'i1' }]);
    expect(second).toMatchObject({ outcome: 'recorded', write: { cursor: 2 } });
    expect(second.outcome === 'recorded' && second.recipients.map((r) => r.webhookId).sort()).toEqual([everything, checksOnly].sort());

    expect(await write(listId, [{ type: 'item.added', itemId: 'i1' }], 'w1')).toEqual({ ...first, outcome: 'repeated' });
    expect(await write(listId, [{ type: 'item.added', itemId: 'i2' }], 'w1')).toEqual({ outcome: 'write_id_reused' });
    expect(await write(`list-${randomUUID()}`, [{ type: 'item.added', itemId: 'i1' }])).toEqual({ outcome: 'list_not_found' });
  });

  it("applies membership changes in order; the owner and the members before and after receive it, within their webhooks' listIds", async () => {
    const [owner, leaving, joining, joinsThenLeaves, stranger] = await Promise.all([1, 2, 3, 4, 5].map(newAccount));
    const listId = await newList(owner, [leaving]);
    const webhooks = {
      owner: await newWebhook(owner, ['list.members.changed']),
      leaving: await newWebhook(leaving, ['list.changed']),
      joining: await newWebhook(joining, ['list.changed']),
      joinsThenLeaves: await newWebhook(joinsThenLeaves, ['list.changed']),
      stranger: await newWebhook(stranger, ['list.changed']),
      thisListOnly: await newWebhook(owner, ['list.changed'], [listId]),
      otherListOnly: await newWebhook(owner, ['list.changed'], [await newList(owner)]),
    };

    const result = await write(listId, [
      { type: 'member.left', accountId: leaving },
      { type: 'member.joined', accountId: joining },
      { type: 'member.joined', accountId: joinsThenLeaves },
      { type: 'member.left', accountId: joinsThenLeaves },
    ]);

    expect(result.outcome).toBe('recorded');
    const recipients = result.outcome === 'recorded' ? result.recipients : [];
    expect(Object.fromEntries(recipients.map((r) => [r.webhookId, r.topics]))).toEqual({
      [webhooks.owner]: ['list.members.changed'],
      [webhooks.leaving]: ['list.changed'],
      [webhooks.joining]: ['list.changed'],
      [webhooks.thisListOnly]: ['list.changed'],
    });
    const members = await database.sql<{ accountId: string }[]>`
      SELECT account_id AS "accountId" FROM list_members WHERE list_id = ${listId}`;
    expect(members.map((row) => row.accountId)).toEqual([joining]);
  });

  it('serialises racing writes to one list: consecutive cursors, and racing repeats of one writeId get one cursor', async () => {
    const listId = await newList(await newAccount());
    const changes: ListChange[] = [{ type: 'item.added', itemId: 'i1' }];

    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => write(listId, changes)),
      ...Array.from({ length: 10 }, () => write(listId, changes, 'repeated')),
    ]);

    const cursors = results.map((result) => (result.outcome === 'recorded' || result.outcome === 'repeated' ? result.write.cursor : null));
    expect(new Set(cursors.slice(0, 20)).size).toBe(20);
    expect(new Set(cursors.slice(20)).size).toBe(1);
    expect(new Set(cursors)).toEqual(new Set(Array.from({ length: 21 }, (_, i) => i + 1)));
    expect(results.slice(20).filter((result) => result.outcome === 'recorded')).toHaveLength(1);
  });
});
