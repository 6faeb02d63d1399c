// Every recorded release's histories replay on the current workflow code: a release must
// run the open workflows of the ones before it (docs/upgrades.md). A change to what a
// workflow does that is not behind patched() fails here with a nondeterminism error. Each
// replays with tracing off and on: turning tracing on is a deploy like any other.
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Worker, type ReplayResult, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerTracing } from '../../src/temporal/tracing';
import {
  historiesDirectory,
  readRecordedHistory,
  recordedBranches,
  recordedReleases,
  tracedHistoriesDirectory,
} from './support/recorded-histories';
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

/** Each kept release's histories, and those recorded with tracing on (histories-traced/), each replayed with tracing off and on. */
const replays = [historiesDirectory, tracedHistoriesDirectory].flatMap((directory) =>
  recordedReleases(directory).flatMap((release) =>
    (['off', 'on'] as const).map((mode) => [path.basename(directory), release, mode, directory] as const),
  ),
);

describe.each(replays)('%s of release %s, tracing %s', (_folder, release, mode, directory) => {
  const files = recordedBranches(release, directory);
  const results = new Map<string, ReplayResult>();

  beforeAll(async () => {
    const histories = files.map((file) => ({
      workflowId: file,
      history: historyFromJSON(readRecordedHistory(release, file, directory)),
    }));
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
});
