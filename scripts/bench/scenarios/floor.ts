// `floor-fanout10` and `floor-local-fanout10`: Temporal alone, a bare workflow fanning out
// no-op activities (floor.ts), the yardstick of what the service adds to Temporal's own cost.
import fs from 'node:fs';
import path from 'node:path';
import { type FloorApi, type Completions } from '../floor';
import { newId } from '../../../src/ids';
import { forkTarget } from '../lib/children';
import * as stack from '../lib/stack';
import { sampleTemporal, scenarioTemporal } from '../lib/temporal';
import { type Context, type Environment, type FanoutScenario, type ListLayout, type Target } from '../lib/types';

export const scenarios: FanoutScenario[] = [
  {
    id: 'floor-fanout10',
    kind: 'fanout',
    mode: 'floor',
    fanout: 10,
    title: 'Temporal floor: a bare workflow, 10 no-op activities',
    start: (ctx, environment) => startFloor(false, ctx, environment),
  },
  {
    id: 'floor-local-fanout10',
    kind: 'fanout',
    mode: 'floor-local',
    fanout: 10,
    title: 'Temporal floor: a bare workflow, 10 no-op local activities',
    start: (ctx, environment) => startFloor(true, ctx, environment),
  },
];

/**
 * The Temporal floor as the target: a fresh dev server, and floor.ts as client and worker.
 * Its activities' completions are both the outcomes and the receipts of the ledger.
 */
async function startFloor(local: boolean, ctx: Context, environment: Environment): Promise<Target> {
  const scenarioDir = fs.mkdtempSync(path.join(ctx.runDir, local ? 'floor-local-' : 'floor-'));
  const temporal = await scenarioTemporal(environment, scenarioDir);
  const {
    process: child,
    rpc,
    common,
  } = await forkTarget<FloorApi>(ctx, 'floor', { TEMPORAL_ADDRESS: temporal.address, BENCH_FLOOR_LOCAL: local ? '1' : '0' }, 120_000);
  const stopSamplingTemporal = sampleTemporal(ctx.sampler, temporal);
  /** The completions last taken, handed to the ledger first as outcomes, then as receipts. */
  let taken: Completions = { t: [], webhook: [], list: [], cursor: [], event: [] };
  return {
    ...common,
    groups: ['floor', 'temporal', 'generator'],
    serviceGroups: ['floor', 'temporal'],
    async setUpFanout(lists: ListLayout[]) {
      const config = lists.map(({ listId, webhooks }) => ({ listId, webhookIds: webhooks.map(() => newId('wh')) }));
      await rpc('configure', { config });
      return config;
    },
    outcomesPoller() {
      return {
        count: async () => (await rpc('counts')).outcomesTotal,
        async take() {
          taken = await rpc('take');
          return taken.webhook.map((webhook, i) => ({
            webhook,
            list: taken.list[i],
            cursor: taken.cursor[i],
            event: taken.event[i],
            delivered: true,
          }));
        },
        prunedUnseen: () => Promise.resolve(0),
        stop: () => Promise.resolve(),
      };
    },
    /** Nothing reaches the receivers: a completed activity is the delivery's receipt. */
    receipts: {
      counts: async () => ({ pending: (await rpc('counts')).outcomesTotal, connections: 0 }),
      take: () => Promise.resolve({ ...taken, sigOk: taken.t.map(() => 1), status: taken.t.map(() => 200) }),
    },
    async stop() {
      stopSamplingTemporal();
      ctx.sampler.removeGroup('floor');
      await rpc('stop').catch(() => {});
      await stack.terminate(child, 10_000);
      await temporal.stop();
    },
  };
}
