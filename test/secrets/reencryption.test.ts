// A key added in front of SECRET_KEYS, as an operator rotates the key: the worker that starts
// with it runs `reencrypt-secrets/{taskQueue}/{keyId}`, which re-seals every stored secret under
// it in batches, its progress in the history and the Web UI's current details, while deliveries
// go on; afterwards the old key can be removed, and the service refuses to start without the
// new one. On a database of its own, since it changes the key every secret is sealed under.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { reencryptionWorkflowId } from '../../src/contract/workflows';
import { keyIdsInUse } from '../../src/db/sealed-secrets';
import { newSecretKeys } from '../../src/secret-keys';
import { FIXED_SECRET_KEYS, fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { createTestCa, issueServerCert } from '../../scripts/lib/tls';
import { withMigratedDatabase } from '../support/database';
import { startReceiver } from '../support/receiver';
import { insertSealedWebhooks, unverified, type OwnersSecrets } from '../support/sealed-webhooks';
import { startTestStack, type TestStack } from '../support/stack';
import { keptWorkflows } from '../support/temporal-payloads';

/** Webhooks written straight into the database, besides two registered through the API: three batches of re-sealing. */
const INSERTED = 1101;

describe('re-encryption under a key added in front of SECRET_KEYS', () => {
  it('re-seals every secret in batches, its progress shown, while deliveries verify; then the old key can go, and the new one cannot', async () => {
    await withMigratedDatabase(async (sql, url) => {
      const ca = await createTestCa();
      const receiver = await startReceiver(await issueServerCert(ca));
      let stack: TestStack | undefined;
      try {
        // Before: every secret sealed under the fixed key.
        stack = await startTestStack({}, { databaseUrl: url, ca });
        const account = await stack.createAccount();
        const listId = `reencryption-${account.id}`;
        expect((await stack.putList(listId, account.id)).status).toBe(201);
        const secrets: OwnersSecrets = new Map();
        for (const name of ['a', 'b']) {
          const webhook = await stack.registerWebhook(account.token, receiver.urlFor(`/registered/${name}`));
          secrets.set(webhook.id, webhook.secret);
        }
        const inserted = await insertSealedWebhooks(sql, fixedSecretBox(), account.id, INSERTED, (i) => receiver.urlFor(`/inserted/${i}`));
        for (const [id, secret] of inserted) secrets.set(id, secret);
        await stack.stop();

        // A new key in front, and a restart: the worker starts the re-encryption; a write meanwhile.
        const keyId = `new-${randomBytes(4).toString('hex')}`;
        const newKey = newSecretKeys(keyId);
        stack = await startTestStack({ SECRET_KEYS: `${newKey},${FIXED_SECRET_KEYS}` }, { databaseUrl: url, ca });
        const sentBefore = receiver.requests.length;
        const during = stack.reportWrite(listId, 'during-the-re-encryption', [{ type: 'list.updated' }]);
        const workflow = stack.service.client.workflow.getHandle(reencryptionWorkflowId(stack.taskQueue, keyId));
        expect(await workflow.result()).toEqual({ keyId, resealed: secrets.size });
        await during;
        const batches = (await workflow.fetchHistory()).events!.flatMap(
          (event) =>
            event.activityTaskCompletedEventAttributes?.result?.payloads?.map((p) => JSON.parse(Buffer.from(p.data!).toString())) ?? [],
        );
        expect(batches).toEqual([
          { resealed: 500, remaining: secrets.size - 500 },
          { resealed: 500, remaining: secrets.size - 1000 },
          { resealed: secrets.size - 1000, remaining: 0 },
        ]);
        const metadata = await workflow.query<{ currentDetails: string }>('__temporal_workflow_metadata');
        expect(metadata.currentDetails).toBe(
          `**${secrets.size}** signing secrets re-sealed under key \`${keyId}\`; **0** remain under other keys.`,
        );
        expect(await keyIdsInUse(sql)).toEqual([keyId]);
        // Its payloads hold the key's id and counts: no key, and no secret.
        const [kept] = await keptWorkflows(stack.service.client, `WorkflowId = '${workflow.workflowId}'`);
        const keys = [newKey, FIXED_SECRET_KEYS].map((entry) => entry.split(':')[1]);
        for (const needle of [...keys, ...keys.map((key) => Buffer.from(key, 'base64')), 'whsec_', ...secrets.values()]) {
          expect(kept.bytes.includes(needle)).toBe(false);
          expect(kept.description.includes(needle.toString())).toBe(false);
        }
        expect(kept.bytes.includes(keyId)).toBe(true);
        const duringWrite = receiver.requests.slice(sentBefore);
        expect(duringWrite).toHaveLength(secrets.size);
        expect(unverified(duringWrite, secrets)).toEqual([]);
        await stack.stop();

        // The old key removed: the service starts, and every delivery verifies with what its owner holds.
        stack = await startTestStack({ SECRET_KEYS: newKey }, { databaseUrl: url, ca });
        const rotated = await stack.request('POST', `/v3/webhooks/${[...secrets.keys()][0]}/secret`, { token: account.token });
        expect(rotated.status).toBe(200);
        secrets.set([...secrets.keys()][0], rotated.body.secret);
        const sentAfter = receiver.requests.length;
        await stack.reportWrite(listId, 'after-the-old-key-went', [{ type: 'list.updated' }]);
        const ping = await stack.request('POST', `/v3/webhooks/${[...secrets.keys()][1]}/pings`, { token: account.token });
        expect(ping.body).toMatchObject({ delivered: true });
        const afterwards = receiver.requests.slice(sentAfter);
        expect(afterwards).toHaveLength(secrets.size + 1);
        expect(unverified(afterwards, secrets)).toEqual([]);
        await stack.stop();
        stack = undefined;

        // Without the new key, nothing starts: its secrets could not be opened.
        await expect(startTestStack({}, { databaseUrl: url, ca })).rejects.toThrow(
          `stored signing secrets are sealed under key "${keyId}", which SECRET_KEYS does not hold`,
        );
      } finally {
        await stack?.stop();
        await receiver.close();
      }
    });
  }, 180_000);
});
