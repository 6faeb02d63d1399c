// `baseline-fanout10`, `baseline-fanout1`: the plain-Node fan-out (baseline.ts), no Temporal,
// no database: the same write request, the same HTTP client and signed bodies.
import fs from 'node:fs';
import path from 'node:path';
import { type BaselineApi } from '../baseline';
import { newId } from '../../../src/ids';
import { newSigningSecret } from '../../../src/secrets';
import { forkTarget } from '../lib/children';
import { CONFIG, ROOT } from '../lib/config';
import * as stack from '../lib/stack';
import { type Context, type FanoutScenario, type ListLayout, type Target } from '../lib/types';

export const scenarios: FanoutScenario[] = [
  { id: 'baseline-fanout10', kind: 'fanout', mode: 'baseline', fanout: 10, title: 'plain Node, fan-out 10', start: startBaseline },
  { id: 'baseline-fanout1', kind: 'fanout', mode: 'baseline', fanout: 1, title: 'plain Node, fan-out 1', start: startBaseline },
];

/** The plain-Node baseline as the target. */
async function startBaseline(ctx: Context): Promise<Target> {
  const {
    process: child,
    rpc,
    common,
  } = await forkTarget<BaselineApi>(ctx, 'baseline', {
    NODE_EXTRA_CA_CERTS: ctx.caFile,
    BENCH_USER_AGENT: userAgent(),
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    DELIVERY_TIMEOUT_MS: String(CONFIG.deliveryTimeoutMs),
  });
  return {
    ...common,
    groups: ['baseline', 'receivers', 'generator'],
    serviceGroups: ['baseline'],
    /** Webhooks exist only in the baseline's memory: ids and secrets made here. */
    async setUpFanout(lists: ListLayout[]) {
      const config = lists.map(({ listId, webhooks }) => ({
        listId,
        recipients: webhooks.map(({ url }) => ({ webhookId: newId('wh'), url, secret: newSigningSecret(), events: ['list.changed'] })),
      }));
      await rpc('configure', { config });
      await ctx.receivers('secrets', {
        entries: config.flatMap((l) => l.recipients.map((r): [string, string] => [r.webhookId, r.secret])),
      });
      return config.map((l) => ({ listId: l.listId, webhookIds: l.recipients.map((r) => r.webhookId) }));
    },
    outcomesPoller() {
      return {
        async count() {
          return (await rpc('counts')).outcomesTotal;
        },
        async take() {
          const o = await rpc('take');
          return o.webhook.map((webhook, i) => ({
            webhook,
            list: o.list[i],
            cursor: o.cursor[i],
            event: o.event[i],
            delivered: o.delivered[i] === 1,
          }));
        },
        prunedUnseen: () => Promise.resolve(0),
        stop: () => Promise.resolve(),
      };
    },
    async stop() {
      ctx.sampler.removeGroup('baseline');
      await rpc('stop').catch(() => {});
      await stack.terminate(child, 3_000);
    },
  };
}

function userAgent(): string {
  return `svc-webhooks/${(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;
}
