// Retention, on the whole stack: the schedule the worker creates prunes writes, registrations,
// notices, finished recoveries, audit log entries (and delivery claims) past RETENTION_DAYS, the fair-use
// meter's days past both that and what GET /v3/account/usage shows, and the hours of the
// webhooks' health past the last 24; a writeId repeated after
// that is a new write.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertNotice } from '../../src/db/notices';
import { deleteRecordsOlderThan } from '../../src/db/retention';
import { USAGE_DAYS } from '../../src/limits';
import { ensureRetentionSchedule } from '../../src/temporal/retention-schedule';
import { listWriteWorkflowId, retentionScheduleId } from '../../src/contract/workflows';
import type { Receiver } from '../support/receiver';
import { startTestStack, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';

let stack: TestStack;
let receiver: Receiver;
beforeAll(async () => {
  stack = await startTestStack({ RETENTION_DAYS: '30' });
  receiver = await stack.startReceiver();
});
afterAll(() => stack?.stop());

const writeRows = async (listId: string) =>
  (
    await stack.service.sql<
      { writeId: string }[]
    >`SELECT write_id AS "writeId" FROM list_writes WHERE list_id = ${listId} ORDER BY write_id`
  ).map((row) => row.writeId);
const cursorsReceived = (path: string) =>
  receiver.requests
    .filter((request) => request.path === path && request.headers['svc-event'] !== 'ping')
    .map((request) => JSON.parse(request.rawBody.toString('utf8')).cursor);
/** Gives the account a row of the meter for each of these UTC days, counted back from today (today's may be there already). */
const insertUsageDays = (accountId: string, daysAgo: number[]) =>
  stack.service.sql`
    INSERT INTO account_usage (account_id, day, api_requests, deliveries)
    SELECT ${accountId}, (now() AT TIME ZONE 'UTC')::date - ago, 1, 1 FROM unnest(${daysAgo}::int[]) AS ago
    ON CONFLICT (account_id, day) DO NOTHING`;
/** The UTC days the account has a row of the meter for, counted back from today, oldest first. */
const usageDaysKept = async (accountId: string) =>
  (
    await stack.service.sql<{ ago: number }[]>`
      SELECT (now() AT TIME ZONE 'UTC')::date - day AS ago FROM account_usage WHERE account_id = ${accountId} ORDER BY day`
  ).map((row) => row.ago);

it('prunes writes, registrations, delivery claims, notices, finished recoveries, audit log entries, days of the meter and hours of health older than their windows when its schedule runs, and keeps the rest', async () => {
  const { owner, listId, webhookId } = await stack.setUpListWebhook(receiver.urlFor('/retention'));
  const keptAccount = await stack.createAccount();
  await stack.registerWebhook(keptAccount.token, receiver.urlFor('/kept'));
  await stack.reportWrite(listId, 'old-write');
  await stack.reportWrite(listId, 'new-write');
  await stack.service
    .sql`UPDATE list_writes SET created_at = now() - interval '31 days' WHERE list_id = ${listId} AND write_id = 'old-write'`;
  await stack.service.sql`UPDATE registrations SET created_at = now() - interval '31 days' WHERE account_id = ${owner.id}`;
  // The owner's registration is in the audit log since 31 days, the kept account's since now.
  await stack.service.sql`UPDATE audit_log SET at = now() - interval '31 days' WHERE account_id = ${owner.id}`;
  await stack.service
    .sql`INSERT INTO delivery_claims (delivery_id, claimed_at) VALUES ('dlv_claim_old', now() - interval '31 days'), ('dlv_claim_new', now())`;
  // Recoveries: one finished 31 days ago, one finished now, and one started 31 days ago that has not finished.
  const ago = (days: number) => new Date(Date.now() - days * 86_400_000);
  await stack.service.sql`
    INSERT INTO recoveries (id, webhook_id, since, until, total, status, created_at, finished_at, settled_at) VALUES
      ('rcv_old_finished', ${webhookId}, ${ago(32)}, ${ago(31)}, 0, 'completed', ${ago(31)}, ${ago(31)}, ${ago(31)}),
      ('rcv_new_finished', ${webhookId}, ${ago(1)}, now(), 0, 'completed', now(), now(), now()),
      ('rcv_old_running', ${webhookId}, ${ago(32)}, ${ago(31)}, 0, 'running', ${ago(31)}, NULL, NULL)`;

  const notice = () =>
    insertNotice(stack.service.sql, {
      accountId: owner.id,
      webhookId,
      type: 'webhook.failing',
      url: receiver.urlFor('/retention'),
      consecutiveFailures: 10,
      mail: 'not_configured',
    });
  const [oldNotice, newNotice] = [await notice(), await notice()];
  await stack.service.sql`UPDATE notices SET created_at = now() - interval '31 days' WHERE id = ${oldNotice.id}`;
  // The window (30 days) is what the usage route shows: today and the 29 days before it.
  await insertUsageDays(owner.id, [30, 29, 0]);
  // Hours of the webhook's health: kept while in the last 24 (22 hours ago stays in them even
  // if the hour turns meanwhile), pruned before, whatever the retention.
  await stack.service.sql`
    INSERT INTO webhook_health_hours (webhook_id, hour, delivered)
    SELECT ${webhookId}, date_trunc('hour', now(), 'UTC') - make_interval(hours => ago), 1 FROM unnest(${[25, 48, 22]}::int[]) AS ago
    ON CONFLICT DO NOTHING`;

  await stack.service.client.schedule.getHandle(retentionScheduleId(stack.taskQueue)).trigger();
  // Notices, finished recoveries and the meter's days are pruned last, in this order.
  const notices = async () =>
    (await stack.service.sql<{ id: string }[]>`SELECT id FROM notices WHERE account_id = ${owner.id}`).map((row) => row.id);
  await waitFor(async () => ((await notices()).length === 1 ? true : undefined), { what: 'the old notice pruned', timeoutMs: 30_000 });
  expect(await notices()).toEqual([newNotice.id]);
  const oldRecovery = () => stack.service.sql`SELECT 1 FROM recoveries WHERE id = 'rcv_old_finished'`;
  await waitFor(async () => ((await oldRecovery()).length === 0 ? true : undefined), {
    what: 'the old recovery pruned',
    timeoutMs: 30_000,
  });
  await waitFor(async () => ((await usageDaysKept(owner.id)).includes(30) ? undefined : true), {
    what: "the meter's old day pruned",
    timeoutMs: 30_000,
  });
  expect(await usageDaysKept(owner.id)).toEqual([29, 0]);
  const healthHours = async () =>
    (
      await stack.service.sql<{ ago: number }[]>`
        SELECT (extract(epoch FROM date_trunc('hour', now(), 'UTC') - hour) / 3600)::int AS ago
        FROM webhook_health_hours WHERE webhook_id = ${webhookId} ORDER BY hour`
    ).map((row) => row.ago);
  await waitFor(async () => ((await healthHours()).some((ago) => ago >= 24) ? undefined : true), {
    what: "the health's old hours pruned",
    timeoutMs: 30_000,
  });
  expect((await healthHours()).filter((ago) => ago === 22 || ago === 23)).toHaveLength(1);
  expect(await stack.service.sql`SELECT id FROM recoveries WHERE webhook_id = ${webhookId} ORDER BY id`).toEqual([
    { id: 'rcv_new_finished' },
    { id: 'rcv_old_running' },
  ]);
  expect(await writeRows(listId)).toEqual(['new-write']);
  expect(await stack.service.sql`SELECT 1 FROM registrations WHERE account_id = ${owner.id}`).toHaveLength(0);
  expect(await stack.service.sql`SELECT 1 FROM registrations WHERE account_id = ${keptAccount.id}`).toHaveLength(1);
  expect(await stack.service.sql`SELECT 1 FROM audit_log WHERE account_id = ${owner.id}`).toHaveLength(0);
  expect(await stack.service.sql`SELECT action FROM audit_log WHERE account_id = ${keptAccount.id}`).toEqual([
    { action: 'webhook.created' },
  ]);
  expect(await stack.service.sql`SELECT delivery_id FROM delivery_claims WHERE delivery_id LIKE 'dlv_claim_%'`).toEqual([
    { delivery_id: 'dlv_claim_new' },
  ]);
});

it('keeps the days of the meter that GET /v3/account/usage shows when the window is shorter, and the window when it is longer', async () => {
  const account = await stack.createAccount();
  await insertUsageDays(account.id, [USAGE_DAYS + 10, USAGE_DAYS + 9, USAGE_DAYS, USAGE_DAYS - 1, 0]);

  expect((await deleteRecordsOlderThan(stack.service.sql, USAGE_DAYS + 10)).accountUsage).toBe(1);
  expect(await usageDaysKept(account.id)).toEqual([USAGE_DAYS + 9, USAGE_DAYS, USAGE_DAYS - 1, 0]);

  await deleteRecordsOlderThan(stack.service.sql, 7);
  expect(await usageDaysKept(account.id)).toEqual([USAGE_DAYS - 1, 0]);
  // The oldest day kept is the oldest the usage route answers with, and it still counts.
  const usage = await stack.request('GET', '/v3/account/usage', { token: account.token });
  expect(usage.body.data).toHaveLength(USAGE_DAYS);
  expect(usage.body.data[0]).toMatchObject({ apiRequests: 1, deliveries: 1 });
});

it('treats a writeId repeated after its row was pruned as a new write, while Temporal still keeps the old one', async () => {
  const { listId } = await stack.setUpListWebhook(receiver.urlFor('/repeated'));
  const first = await stack.reportWrite(listId, 'again');
  const oldRun = await stack.service.client.workflow.getHandle(listWriteWorkflowId(listId, 'again')).describe();
  expect(oldRun.status.name).toBe('COMPLETED');
  await stack.service.sql`DELETE FROM list_writes WHERE list_id = ${listId} AND write_id = 'again'`;

  const second = await stack.reportWrite(listId, 'again');
  expect(second.cursor).toBe(first.cursor + 1);
  expect(cursorsReceived('/repeated')).toEqual([first.cursor, second.cursor]);
  const newRun = await stack.service.client.workflow.getHandle(listWriteWorkflowId(listId, 'again')).describe();
  expect(newRun.runId).not.toBe(oldRun.runId);

  // Repeated before any pruning: the same answer, and nothing delivered twice.
  const repeat = await stack.reportWrite(listId, 'again');
  expect(repeat.cursor).toBe(second.cursor);
  expect(cursorsReceived('/repeated')).toEqual([first.cursor, second.cursor]);
});

it('keeps one schedule per task queue, brought to the configured window at every start', async () => {
  const client = stack.service.client;
  const handle = client.schedule.getHandle(retentionScheduleId(stack.taskQueue));
  const window = async () => {
    const { action } = await handle.describe();
    return action.type === 'startWorkflow' ? action.args : undefined;
  };
  expect(await window()).toEqual([{ retentionDays: 30 }]);
  await ensureRetentionSchedule(client, stack.taskQueue, 7);
  expect(await window()).toEqual([{ retentionDays: 7 }]);
  await ensureRetentionSchedule(client, stack.taskQueue, 30);
  expect(await window()).toEqual([{ retentionDays: 30 }]);
  expect((await handle.describe()).spec.intervals?.map((interval) => interval.every)).toEqual([3_600_000]);
});
