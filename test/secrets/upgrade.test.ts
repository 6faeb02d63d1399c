// The upgrade to sealed secrets: a database of the release before (every migration up to 021)
// whose signing secrets are stored in clear, as that release stored them, and analysed, so that
// the planner's statistics hold samples of them too. The service started on it seals them as it
// migrates (022), and afterwards no file of the database holds one, while deliveries and pings
// still verify with the secret each owner holds.
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/db/accounts';
import type { Sql } from '../../src/db/sql';
import { verifySignature } from '../../src/delivery/signing';
import { newId } from '../../src/ids';
import { newSigningSecret } from '../../src/secrets';
import { withSchemaBefore } from '../support/database';
import { databaseDirectory, filesUnder, placesHolding } from '../support/postgres-files';
import { startTestStack, type TestStack } from '../support/stack';

let stack: TestStack | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

/** The files of a table, of its TOAST table and of their indexes, as the catalog names them now. */
async function relationFiles(sql: Sql, table: string): Promise<string[]> {
  const rows = await sql<{ path: string }[]>`
    SELECT pg_relation_filepath(c.oid) AS path FROM pg_class c
    WHERE c.oid = ${table}::regclass OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = ${table}::regclass)
       OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = ${table}::regclass)`;
  return rows.map((row) => row.path);
}

describe('migration 022 on secrets stored in clear', () => {
  it('seals each under the first key, leaves none in any file of the database, and deliveries verify with the secret the owner holds', async () => {
    await withSchemaBefore('022', async (sql, url) => {
      // As the release before stored them: two webhooks, and a re-registration of one in flight.
      const account = await createAccount(sql, 'before 022');
      const hooks = [0, 1].map((i) => ({ id: newId('wh'), secret: newSigningSecret(), path: `/upgraded/${i}` }));
      for (const hook of hooks) {
        await sql`
          INSERT INTO webhooks (id, account_id, url, secret, events)
          VALUES (${hook.id}, ${account.id}, ${`https://receiver.test${hook.path}`}, ${hook.secret}, ${['list.changed']})`;
      }
      await sql`
        INSERT INTO registrations (id, account_id, webhook_id, secret)
        VALUES (${newId('reg')}, ${account.id}, ${hooks[0].id}, ${hooks[0].secret})`;
      await sql`ANALYZE webhooks`;
      const [sampled] = await sql<{ histogram: string }[]>`
        SELECT histogram_bounds::text AS histogram FROM pg_stats WHERE tablename = 'webhooks' AND attname = 'secret'`;
      expect(sampled.histogram).toContain(hooks[1].secret); // the statistics hold the clear secrets too
      const filesBefore = [...(await relationFiles(sql, 'webhooks')), ...(await relationFiles(sql, 'registrations'))];
      const secrets = hooks.map((hook) => hook.secret);
      // The search sees them where they are.
      expect(await placesHolding(secrets, { files: await filesUnder(await databaseDirectory(sql)) })).not.toEqual([]);

      stack = await startTestStack({}, { databaseUrl: url });

      const columns = await sql<{ table: string; column: string }[]>`
        SELECT table_name AS table, column_name AS column FROM information_schema.columns
        WHERE table_name IN ('webhooks', 'registrations') AND column_name LIKE 'secret%' ORDER BY 1, 2`;
      expect(columns.map(({ table, column }) => `${table}.${column}`)).toEqual([
        'registrations.secret_key_id',
        'registrations.secret_sealed',
        'webhooks.secret_key_id',
        'webhooks.secret_sealed',
      ]);
      for (const hook of hooks) expect(await stack.secretOf(hook.id)).toBe(hook.secret);
      const [registration] = await sql<{ keyId: string }[]>`SELECT secret_key_id AS "keyId" FROM registrations`;
      expect(registration.keyId).toBe('fixed-test-key');
      const databaseFiles = await filesUnder(await databaseDirectory(sql));
      expect(await placesHolding(secrets, { files: databaseFiles })).toEqual([]);
      // The files the tables had before were emptied as the migration committed, and are gone after the checkpoint.
      for (const file of filesBefore) expect(databaseFiles.map((path) => path.slice(path.indexOf('/base/') + 1))).not.toContain(file);

      // Deliveries, as the owner's receiver verifies them, with the secret it held before the upgrade.
      const receiver = await stack.startReceiver();
      for (const hook of hooks) await sql`UPDATE webhooks SET url = ${receiver.urlFor(hook.path)} WHERE id = ${hook.id}`;
      const listId = `upgraded-${account.id}`;
      expect((await stack.putList(listId, account.id)).status).toBe(201);
      await stack.reportWrite(listId, 'after-the-upgrade', [{ type: 'list.updated' }]);
      const ping = await stack.request('POST', `/v3/webhooks/${hooks[1].id}/pings`, { token: account.token });
      expect(ping.body).toMatchObject({ delivered: true });
      for (const hook of hooks) {
        const received = receiver.requests.filter((request) => request.path === hook.path);
        expect(received.map((request) => request.headers['svc-event'])).toEqual(
          hook === hooks[1] ? ['list.changed', 'ping'] : ['list.changed'],
        );
        for (const request of received) {
          expect(verifySignature(request.rawBody, request.headers['svc-signature'] as string, hook.secret)).toBe(true);
        }
      }
    });
  });
});
