// Many tenants on two API processes (dist/src/main.js api, twice, on the run's Temporal dev
// server and database): one account's rate limit is shared by both while another account
// is served; a token revoked through one is refused at once by the other, though both had
// it in memory; and the fair-use meter adds up the requests both served.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../support/ports';
import { prepareServiceProcesses, startPart, type PartProcess, type ServiceProcesses } from '../support/processes';
import { requestTo, type RequestFunction } from '../support/stack';
import { waitFor } from '../support/wait';
import { recordScenario } from './support/scenarios';

const BURST = 10;

let dir: string;
let processes: ServiceProcesses;
let parts: PartProcess[] = [];
/** The two API processes, as clients call them. */
let apis: RequestFunction[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhooks-api-processes-'));
  processes = await prepareServiceProcesses({ databaseUrl: inject('databaseUrl'), temporalAddress: inject('temporalAddress'), dir });
  // A window of BURST requests in BURST seconds: far longer than a test's burst takes.
  const env = { ...processes.env, RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: String(BURST) };
  const ports = [processes.apiPort, await freePort()];
  parts = await Promise.all(ports.map((port) => startPart('api', env, port)));
  apis = ports.map((port) => requestTo(`http://127.0.0.1:${port}`));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(parts.map((part) => part.stop()));
  await processes?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const newAccount = async (): Promise<{ id: string; token: string }> =>
  (await apis[0]('POST', '/internal/v3/accounts', { ...processes.internal, body: { name: 'two processes' } })).body;

describe('two API processes', () => {
  it("share one account's limit, and serve another account meanwhile", async ({ task }) => {
    const row = recordScenario(task, { scenario: "two API processes: one account's limit" });
    const [noisy, quiet] = [await newAccount(), await newAccount()];
    const statuses = new Map<number, number>();
    for (let i = 0; i < BURST * 2; i++) {
      const answer = await apis[i % 2]('GET', '/v3/webhooks', { token: noisy.token });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 429) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const served = await Promise.all(apis.map((api) => api('GET', '/v3/webhooks', { token: quiet.token })));
    row.requests = BURST * 2 + 2;
    row.outcome = [...statuses].map(([status, count]) => `${status}×${count}`).join(' ');
    row.note = `the other account: ${served.map((answer) => answer.status).join(', ')}`;
    expect(Object.fromEntries(statuses)).toEqual({ 200: BURST, 429: BURST });
    expect(served.map((answer) => answer.status)).toEqual([200, 200]);
  });

  it('refuse a token revoked through the other at once, though both had it in memory', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'two API processes: tokens revoked through one' });
    const rounds = 5;
    const statuses: number[] = [];
    // Each round an account of its own, within its limit of BURST requests.
    for (let round = 0; round < rounds; round++) {
      const account = await newAccount();
      const second = (await apis[0]('POST', '/v3/account/tokens', { token: account.token, body: { name: 'second' } })).body;
      for (const api of [...apis, ...apis]) expect((await api('GET', '/v3/webhooks', { token: second.token })).status).toBe(200);

      expect((await apis[0]('DELETE', `/v3/account/tokens/${second.id}`, { token: account.token })).status).toBe(204);
      statuses.push((await apis[1]('GET', '/v3/webhooks', { token: second.token })).status);
      statuses.push((await apis[0]('GET', '/v3/webhooks', { token: second.token })).status);
      expect((await apis[1]('GET', '/v3/webhooks', { token: account.token })).status).toBe(200);
    }
    row.requests = rounds * 9;
    row.outcome = `after each revocation: ${statuses.join(', ')}`;
    expect(statuses).toEqual(Array<number>(rounds * 2).fill(401));
  });

  it("count the requests both served on the account's meter", async ({ task }) => {
    const row = recordScenario(task, { scenario: "two API processes: the account's meter" });
    const account = await newAccount();
    for (const api of [apis[0], apis[1], apis[1]]) expect((await api('GET', '/v3/webhooks', { token: account.token })).status).toBe(200);
    // Each process writes its counts within a second, by itself.
    await waitFor(
      async () => {
        const [usage] = await processes.sql<{ requests: number }[]>`
          SELECT api_requests::int AS requests FROM account_usage WHERE account_id = ${account.id}`;
        return usage?.requests === 3 ? true : undefined;
      },
      { what: "both processes' counts" },
    );
    // The reading process writes its own first: this request is the fourth.
    const today = (await apis[0]('GET', '/v3/account/usage', { token: account.token })).body.data.at(-1);
    row.requests = 4;
    row.outcome = `${today.apiRequests} counted`;
    expect(today.apiRequests).toBe(4);
  });
});
