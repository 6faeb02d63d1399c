// The committed histories keep the rule of docs/upgrades.md: a release's folder holds a
// branch's history only if no earlier release's folder holds that branch with the same event
// sequence, since the earlier recording replays the same path. A release that commits a
// repeat (or a recorder that stops leaving repeats out) fails here, and so does a table of
// where each release's histories are that names a file the tree does not hold.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compareReleases,
  earlierRecording,
  eventSequence,
  readRecordedHistory,
  recordedBranches,
  recordedReleases,
} from './support/recorded-histories';

describe.each(recordedReleases())('histories of release %s', (release) => {
  it.each(recordedBranches(release))('%s repeats no earlier release', (branch) => {
    const recordedBy = earlierRecording(release, branch, eventSequence(readRecordedHistory(release, branch)));
    expect(recordedBy, `${recordedBy}/${branch} holds the same event sequence`).toBeUndefined();
  });
});

/** docs/upgrades.md's table: for each branch and release, the release whose folder replays it ('—': not recorded). */
function whereHistoriesAre(): { releases: string[]; rows: { branch: string; cells: string[] }[] } {
  const doc = readFileSync(path.join(__dirname, '../../docs/upgrades.md'), 'utf8');
  const section = doc.split(/^## /m).find((part) => part.startsWith("Where each release's histories are"));
  const cellsOf = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
  const [header, , ...lines] = (section ?? '').split('\n').filter((line) => line.startsWith('|'));
  return {
    releases: cellsOf(header ?? '|  |').slice(1),
    rows: lines.map((line) => {
      const [branch, ...cells] = cellsOf(line);
      return { branch: `${branch.replaceAll('`', '')}.json`, cells };
    }),
  };
}

describe("docs/upgrades.md's table of where each release's histories are", () => {
  const table = whereHistoriesAre();

  it('has a column for every release folder, oldest first', () => {
    expect(table.releases).toEqual([...table.releases].sort(compareReleases));
    expect(table.releases).toEqual(expect.arrayContaining(recordedReleases()));
  });

  it.each(table.releases)('names for %s files the tree holds: its own in bold, the others in an earlier folder', (release) => {
    const column = table.releases.indexOf(release);
    const own = table.rows.filter((row) => row.cells[column] === `**${release}**`).map((row) => row.branch);
    expect(own.sort()).toEqual(recordedReleases().includes(release) ? recordedBranches(release) : []);
    for (const { branch, cells } of table.rows) {
      const holder = cells[column].replaceAll('*', '');
      if (holder === '—' || cells[column] === `**${release}**`) continue;
      expect(compareReleases(holder, release), `${branch}: ${holder} is not earlier than ${release}`).toBeLessThan(0);
      expect(recordedBranches(holder), `${release}'s ${branch} is said to be in ${holder}`).toContain(branch);
    }
  });
});
