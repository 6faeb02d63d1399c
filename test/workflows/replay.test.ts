// Every recorded release's histories replay on the current workflow code: a release must
// run the open workflows of the ones before it (docs/upgrades.md). A change to what a
// workflow does that is not behind patched() fails here with a nondeterminism error. Each
// replays with tracing off and on: turning tracing on is a deploy like any other.
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Worker, type ReplayResult, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerTracing } from '../../src/temporal/tracing';
import { readRecordedHistory, recordedBranches, recordedReleases } from './support/recorded-histories';
import { inMemoryTracing } from '../support/in-memory-tracing';

const tracing = inMemoryTracing();
const bundles = new Map<'off' | 'on', WorkflowBundleWithSourceMap>();
beforeAll(async () => {
  for (const mode of ['off', 'on'] as const) {
    bundles.set(
      mode,
      await bundleWorkflowCode({
        workflowsPath: path.resolve(__dirname, '../../workflows'),
        workflowInterceptorModules: mode === 'on' ? workerTracing(tracing).interceptors?.workflowModules : undefined,
        logger: new DefaultLogger('WARN'),
      }),
    );
  }
});
afterAll(() => tracing.shutdown());

describe.each(recordedReleases().flatMap((release) => [[release, 'off'] as const, [release, 'on'] as const]))(
  'histories of release %s, tracing %s',
  (release, mode) => {
    const files = recordedBranches(release);
    const results = new Map<string, ReplayResult>();

    beforeAll(async () => {
      const histories = files.map((file) => ({ workflowId: file, history: historyFromJSON(readRecordedHistory(release, file)) }));
      const options = { workflowBundle: bundles.get(mode)!, sinks: mode === 'on' ? workerTracing(tracing).sinks : undefined };
      for await (const result of Worker.runReplayHistories(options, histories)) results.set(result.workflowId, result);
    });

    it('has histories', () => {
      expect(files.length).toBeGreaterThan(0);
    });

    it.each(files)('%s replays on the current code', (file) => {
      expect(results.get(file)?.error).toBeUndefined();
      expect(results.has(file)).toBe(true);
    });
  },
);
