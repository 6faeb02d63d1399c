// `split-feed`: pages of the event feed (GET /v3/webhooks/{id}/events) with a million items
// stored across webhooks. The items are written straight into `feed_items`, one statement per
// round giving every webhook one item, so that each webhook's items come from as many
// transactions as a real feed's; then pages of 100 are read at random places of random
// webhooks' feeds, closed loop, and their latency measured at the client.
import { newId } from '../../../src/ids';
import { newSigningSecret } from '../../../src/secrets';
import { encodePosition, type FeedPoint } from '../../../src/db/event-feed';
import { CONFIG, log } from '../lib/config';
import { call, createAccount } from '../lib/http';
import { scanLogs } from '../lib/logs';
import { nowMs, percentiles, round } from '../lib/stats';
import { type Account, type Context, type Outcome, type ServiceTarget, type WorkloadScenario } from '../lib/types';
import { serviceWorkload } from './service';

export const scenarios: WorkloadScenario[] = [serviceWorkload('feed', 'split', 'event feed pages (API + worker processes)', runFeed)];

/** Items a page asks for: the contract's figure. */
const PAGE = 100;

async function runFeed(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const { webhooks: webhookCount, itemsPerWebhook, accounts: accountCount, reads, concurrency } = CONFIG.feed;
  const seedStarted = nowMs();
  const webhooks = await seedWebhooks(target, accountCount, webhookCount);
  await seedItems(target, webhooks, itemsPerWebhook);
  const [{ n: stored }] = await target.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM feed_items`;
  const seedS = round((nowMs() - seedStarted) / 1000, 0);
  log(`feed: ${stored} items of ${webhooks.length} webhooks stored in ${seedS} s`);

  // Where each read starts: a random place of a random webhook's feed with a page after it, or its start.
  const starts: { webhook: SeededWebhook; after: string | null }[] = [];
  for (let i = 0; i < reads; i++) {
    const webhook = webhooks[Math.floor(Math.random() * webhooks.length)];
    const offset = Math.floor(Math.random() * (itemsPerWebhook - PAGE));
    const [point] = await target.sql<FeedPoint[]>`
      SELECT xid::text, seq::text FROM feed_items WHERE webhook_id = ${webhook.id} ORDER BY xid, seq OFFSET ${offset} LIMIT 1`;
    starts.push({ webhook, after: i % 10 === 0 ? null : encodePosition(webhook.id, point) });
  }

  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const window = ctx.sampler.window();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < starts.length) {
        const { webhook, after } = starts[next++];
        const query = `limit=${PAGE}${after === null ? '' : `&after=${after}`}`;
        const started = nowMs();
        const answer = await call<{ data: unknown[] }>(target.baseUrl, 'GET', `/v3/webhooks/${webhook.id}/events?${query}`, webhook.token);
        const elapsed = nowMs() - started;
        const why = answer.status !== 200 ? String(answer.status) : answer.body.data.length !== PAGE ? 'short page' : null;
        if (why === null) latencies.push(elapsed);
        else failures[why] = (failures[why] ?? 0) + 1;
      }
    }),
  );
  const measured = window();
  const serviceCpuMs = target.serviceGroups.reduce((sum, group) => sum + (measured.groups[group]?.cpuMs ?? 0), 0);
  const cpuMsPerPage = round(serviceCpuMs / Math.max(1, latencies.length), 2);
  const latencyMs = percentiles(latencies, [50, 99, 99.9]);
  log(`feed: ${latencies.length}/${reads} pages of ${PAGE}, p50/p99/max ${latencyMs.p50}/${latencyMs.p99}/${latencyMs.max} ms`);
  return {
    steps: [],
    knee: null,
    feed: {
      stored,
      webhooks: webhooks.length,
      seedS,
      reads,
      concurrency,
      pages: latencies.length,
      failures,
      latencyMs,
      cpuMsPerPage,
      cpu: measured,
    },
    logs: scanLogs(target.logFiles),
  };
}

interface SeededWebhook {
  id: string;
  token: string;
}

/** Accounts made through the API, each with its share of `count` webhooks written straight into the table (none is ever sent to). */
async function seedWebhooks(target: ServiceTarget, accountCount: number, count: number): Promise<SeededWebhook[]> {
  const accounts: Account[] = [];
  for (let i = 0; i < accountCount; i++) accounts.push(await createAccount(target.internal));
  const webhooks = Array.from({ length: count }, (_, k) => ({ id: newId('wh'), account: accounts[k % accounts.length] }));
  const sealed = webhooks.map((w) => target.secrets.seal(newSigningSecret(), w.id).sealed.toString('base64'));
  await target.sql`
    INSERT INTO webhooks (id, account_id, url, secret_key_id, secret_sealed, events)
    SELECT id, account_id, 'https://feed.bench.test/' || id, ${target.secrets.keyId}, decode(sealed, 'base64'), ${['list.changed']}
    FROM unnest(${webhooks.map((w) => w.id)}::text[], ${webhooks.map((w) => w.account.id)}::text[], ${sealed}::text[])
         AS seeded (id, account_id, sealed)`;
  return webhooks.map((w) => ({ id: w.id, token: w.account.token }));
}

/** `rounds` statements, each its own transaction, each giving every webhook one item (a write's cursor: its round). */
async function seedItems(target: ServiceTarget, webhooks: SeededWebhook[], rounds: number): Promise<void> {
  const ids = webhooks.map((w) => w.id);
  for (let round = 1; round <= rounds; round++) {
    await target.sql`
      INSERT INTO feed_items (webhook_id, delivery_id, event, list_id, cursor, at)
      SELECT id, 'dlv_' || left(replace(gen_random_uuid()::text, '-', ''), 24), 'list.changed', 'feed-bench', ${round}, now()
      FROM unnest(${ids}::text[]) AS seeded (id)`;
  }
  await target.sql`ANALYZE feed_items`;
}
