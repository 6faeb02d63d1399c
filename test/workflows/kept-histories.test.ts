// The committed histories keep the rule of docs/upgrades.md: a release's folder holds a
// branch's history only if no earlier release's folder holds that branch with the same event
// sequence, since the earlier recording replays the same path. A release that commits a
// repeat (or a recorder that stops leaving repeats out) fails here.
import { describe, expect, it } from 'vitest';
import { earlierRecording, eventSequence, readRecordedHistory, recordedBranches, recordedReleases } from './support/recorded-histories';

describe.each(recordedReleases())('histories of release %s', (release) => {
  it.each(recordedBranches(release))('%s repeats no earlier release', (branch) => {
    const recordedBy = earlierRecording(release, branch, eventSequence(readRecordedHistory(release, branch)));
    expect(recordedBy, `${recordedBy}/${branch} holds the same event sequence`).toBeUndefined();
  });
});
