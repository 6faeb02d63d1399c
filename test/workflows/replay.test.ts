// Every recorded release's histories replay on the current workflow code: a release must
// run the open workflows of the ones before it (docs/upgrades.md). A change to what a
// workflow does that is not behind patched() fails here with a nondeterminism error.
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Worker, type ReplayResult, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRecordedHistory, recordedBranches, recordedReleases } from './support/recorded-histories';

let workflowBundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows'),
    logger: new DefaultLogger('WARN'),
  });
});

describe.each(recordedReleases())('histories of release %s', (release) => {
  const files = recordedBranches(release);
  const results = new Map<string, ReplayResult>();

  beforeAll(async () => {
    const histories = files.map((file) => ({ workflowId: file, history: historyFromJSON(readRecordedHistory(release, file)) }));
    for await (const result of Worker.runReplayHistories({ workflowBundle }, histories)) results.set(result.workflowId, result);
  });

  it('has histories', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('%s replays on the current code', (file) => {
    expect(results.get(file)?.error).toBeUndefined();
    expect(results.has(file)).toBe(true);
  });
});
