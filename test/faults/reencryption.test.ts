// The signing secrets' re-encryption under a new first key, through kill -9: the API and the
// worker run as processes of their own (dist/src/main.js api|worker) on a database of this
// file's own. The worker is killed mid re-encryption and the API after it, while owners rotate
// secrets; once the re-encryption has finished the old key is removed, and a write to every
// webhook proves that no secret was lost or left unreadable: each delivery verifies with the
// secret its owner holds.
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { reencryptionWorkflowId, TASK_QUEUE } from '../../src/contract/workflows';
import { countSealedUnderOtherKeys, keyIdsInUse } from '../../src/db/sealed-secrets';
import { newSecretKeys } from '../../src/secret-keys';
import { FIXED_SECRET_KEYS, fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { withMigratedDatabase } from '../support/database';
import { freePort } from '../support/ports';
import { prepareServiceProcesses, startPart, type PartProcess } from '../support/processes';
import { insertSealedWebhooks, unverified } from '../support/sealed-webhooks';
import { waitFor } from '../support/wait';
import { recordScenario } from './support/scenarios';

/** Secrets written straight into the database beside the one registered: 20 batches of re-sealing, a window to kill in. */
const INSERTED = 10_000;
/** Owners who rotate their secret while the re-encryption is under way. */
const ROTATING = 5;

beforeAll(() => promisify(execFile)('npm', ['run', 'build'], { cwd: path.resolve(__dirname, '../..') }), 120_000);

describe('re-encryption of the signing secrets through kill -9', () => {
  it('kill -9 of the worker mid re-encryption, then of the API, owners rotating meanwhile: none lost, none unreadable', async ({
    task,
  }) => {
    const row = recordScenario(task, { scenario: 'kill -9 of the worker and the API mid re-encryption' });
    const started = Date.now();
    await withMigratedDatabase(async (sql, url) => {
      const dir = await mkdtemp(path.join(tmpdir(), 'webhooks-reencryption-faults-'));
      const processes = await prepareServiceProcesses({ databaseUrl: url, temporalAddress: inject('temporalAddress'), dir });
      const client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
      const running: PartProcess[] = [];
      const start = async (part: 'api' | 'worker', env: Record<string, string>) => {
        const port = part === 'api' ? processes.apiPort : await freePort();
        const started = await startPart(part, env, port);
        running.push(started);
        return started;
      };
      try {
        // Before: every secret under the fixed key.
        let [api, worker] = [await start('api', processes.env), await start('worker', processes.env)];
        const owner = await processes.setUp('reencrypted');
        const secrets = await insertSealedWebhooks(sql, fixedSecretBox(), owner.accountId, INSERTED, (i) =>
          processes.receiver.urlFor(`/reencrypted/${i}`),
        );
        secrets.set(owner.webhookId, owner.secret);
        await Promise.all([api.stop(), worker.stop()]);

        // A new key in front: the worker that starts with it re-encrypts. Killed mid-way.
        const keyId = `new-${randomBytes(4).toString('hex')}`;
        const newKey = newSecretKeys(keyId);
        const rotatedEnv = { ...processes.env, SECRET_KEYS: `${newKey},${FIXED_SECRET_KEYS}` };
        api = await start('api', rotatedEnv);
        worker = await start('worker', rotatedEnv);
        const remainingAtKill = await waitFor(
          async () => {
            const remaining = await countSealedUnderOtherKeys(sql, keyId);
            return remaining > 0 && remaining < secrets.size ? remaining : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 5, what: 'the re-encryption to be under way' },
        );
        await worker.kill();

        // Owners rotate while it waits for a worker; then the API dies too, and both come back.
        const rotated = [...secrets.keys()].slice(0, ROTATING);
        for (const webhookId of rotated) {
          const answer = await processes.request('POST', `/v3/webhooks/${webhookId}/secret`, { token: owner.token });
          expect(answer.status).toBe(200);
          secrets.set(webhookId, answer.body.secret);
        }
        await api.kill();
        [api, worker] = [await start('api', rotatedEnv), await start('worker', rotatedEnv)];
        const result = await client.workflow.getHandle(reencryptionWorkflowId(TASK_QUEUE, keyId)).result();
        expect(result.keyId).toBe(keyId);
        expect(await keyIdsInUse(sql)).toEqual([keyId]);
        await Promise.all([api.stop(), worker.stop()]);

        // The old key removed: every webhook's delivery verifies with the secret its owner holds.
        const newOnly = { ...processes.env, SECRET_KEYS: newKey };
        [api, worker] = [await start('api', newOnly), await start('worker', newOnly)];
        const sentBefore = processes.receiver.requests.length;
        const writeIds = ['after-the-re-encryption'];
        const answers = await processes.report(owner.listId, writeIds);
        expect(answers.get(writeIds[0])?.status).toBe(202);
        await processes.settle(owner.listId, writeIds);
        const delivered = processes.receiver.requests.slice(sentBefore);
        expect(delivered).toHaveLength(secrets.size);
        expect(unverified(delivered, secrets)).toEqual([]);
        row.outcome = `${secrets.size} secrets: killed with ${remainingAtKill} under the old key; all opened and verified`;
        row.writesAccepted = 1;
        row.writesLost = 0;
        row.note = `${ROTATING} rotated during; ${result.resealed} re-sealed by the workflow`;
      } finally {
        await Promise.allSettled(running.map((part) => part.stop()));
        await client.connection.close();
        await processes.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
    row.durationMs = Date.now() - started;
  }, 600_000);
});
