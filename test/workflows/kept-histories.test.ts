// The committed histories keep the rules of docs/upgrades.md. A release's folder holds a
// branch's history only if no earlier release's folder holds that branch with the same event
// sequence, since the earlier recording replays the same path. And a history is kept exactly
// while a release that can still have open runs of its workflow type needs it: every kept
// history is needed, and every needed one is kept. A release that commits a repeat (or a
// recorder that stops leaving repeats out), a history kept past its time or dropped before it,
// and a table of where each release's histories are that disagrees with the tree fail here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as workflows from '../../workflows';
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

const doc = readFileSync(path.join(__dirname, '../../docs/upgrades.md'), 'utf8');

/** The rows of the first table in docs/upgrades.md's section `title`, as trimmed cells; the header first. */
function tableOf(title: string): string[][] {
  const section = doc.split(/^## /m).find((part) => part.startsWith(title)) ?? '';
  const [header, , ...rows] = section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  return header ? [header, ...rows] : [];
}

const firstCode = (cell: string) => /`([^`]+)`/.exec(cell)?.[1] ?? cell;

/** A cell of the table of where each release's histories are. */
interface Cell {
  /** The release whose folder holds (or held) the file; undefined: the release did not record the branch. */
  holder?: string;
  /** The release's own recording. */
  own: boolean;
  /** Struck through: the file is dropped. */
  dropped: boolean;
}

function parseCell(cell: string): Cell {
  const dropped = cell.startsWith('~~') && cell.endsWith('~~');
  const text = dropped ? cell.slice(2, -2) : cell;
  return { holder: text === '—' ? undefined : text.replaceAll('*', ''), own: text.startsWith('**'), dropped };
}

/** For each branch and release, the cell of the table of where each release's histories are. */
function whereHistoriesAre(): { releases: string[]; rows: { branch: string; cells: Cell[] }[] } {
  const [header = [], ...rows] = tableOf("Where each release's histories are");
  return {
    releases: header.slice(1),
    rows: rows.map(([branch, ...cells]) => ({ branch: `${firstCode(branch)}.json`, cells: cells.map(parseCell) })),
  };
}

/** The workflow type of each branch, from the table of what is recorded. */
function workflowTypeOfBranches(branches: string[]): Map<string, string> {
  const types = new Map<string, string>();
  for (const [workflow, files] of tableOf('What is recorded').slice(1)) {
    for (const [, name] of files.matchAll(/`([^`]+)`/g)) {
      if (branches.includes(`${name}.json`)) types.set(`${name}.json`, firstCode(workflow));
    }
  }
  return types;
}

/**
 * How long each workflow type's histories are kept, as the releases (columns) whose runs of it
 * can be open; undefined for a rule this test does not know.
 */
function releasesWithOpenRuns(releases: string[]): Map<string, string[] | undefined> {
  const rules = new Map([
    ['every release', releases],
    ['the release before the current one, and the current one', releases.slice(-2)],
  ]);
  return new Map(
    tableOf('How long histories are kept')
      .slice(1)
      .map(([workflow, , kept]) => [firstCode(workflow), rules.get(kept)]),
  );
}

describe("docs/upgrades.md's table of where each release's histories are", () => {
  const table = whereHistoriesAre();

  it('has a column for every release folder, oldest first', () => {
    expect(table.releases).toEqual([...table.releases].sort(compareReleases));
    expect(table.releases).toEqual(expect.arrayContaining(recordedReleases()));
  });

  it.each(table.releases)(
    'names for %s files the tree holds, its own in bold, the others in an earlier folder, and struck through those it does not',
    (release) => {
      const column = table.releases.indexOf(release);
      const own = table.rows.filter(({ cells }) => cells[column].own && !cells[column].dropped).map((row) => row.branch);
      expect(own.sort()).toEqual(recordedReleases().includes(release) ? recordedBranches(release) : []);
      for (const { branch, cells } of table.rows) {
        const { holder, own: isOwn, dropped } = cells[column];
        if (holder === undefined) continue;
        expect(holder === release, `${branch}: ${holder} in ${release}'s column is bold if and only if it is ${release}`).toBe(isOwn);
        expect(compareReleases(holder, release), `${branch}: ${holder} is later than ${release}`).toBeLessThanOrEqual(0);
        const held = recordedReleases().includes(holder) && recordedBranches(holder).includes(branch);
        expect(held, `${release}'s ${branch} is said to be ${dropped ? 'dropped from' : 'in'} ${holder}`).toBe(!dropped);
      }
    },
  );
});

describe('how long histories are kept (docs/upgrades.md): each as long as runs of its workflow type can be open', () => {
  const table = whereHistoriesAre();
  const branches = table.rows.map((row) => row.branch);
  const typeOf = workflowTypeOfBranches(branches);
  const openIn = releasesWithOpenRuns(table.releases);
  /** The releases whose runs can be open that name `release`'s `branch`, which they replay by it. */
  const needing = (release: string, branch: string) => {
    const row = table.rows.find((candidate) => candidate.branch === branch);
    return (openIn.get(typeOf.get(branch) ?? '') ?? []).filter((open) => row?.cells[table.releases.indexOf(open)].holder === release);
  };

  it('says it for every workflow type the worker registers, in a rule this test knows', () => {
    expect([...openIn.keys()].sort()).toEqual(Object.keys(workflows).sort());
    for (const [workflow, releases] of openIn) expect(releases, `how long ${workflow}'s histories are kept`).toBeDefined();
  });

  it.each(branches)('knows the workflow type of %s, the type of each of its histories', (branch) => {
    expect(openIn.has(typeOf.get(branch) ?? ''), `the workflow type of ${branch} in what is recorded`).toBe(true);
    for (const release of recordedReleases().filter((recorded) => recordedBranches(recorded).includes(branch))) {
      const started = readRecordedHistory(release, branch).events[0]?.workflowExecutionStartedEventAttributes as
        { workflowType?: { name?: string } } | undefined;
      expect(started?.workflowType?.name, `${release}/${branch}`).toBe(typeOf.get(branch));
    }
  });

  it.each(recordedReleases().flatMap((release) => recordedBranches(release).map((branch) => [release, branch])))(
    'needs %s/%s: a release that can still have open runs replays by it',
    (release, branch) => {
      expect(needing(release, branch), `${release}/${branch} is needed by no release whose runs can be open`).not.toEqual([]);
    },
  );

  it.each(table.releases)('keeps every history that %s replays by, while its runs of that type can be open', (release) => {
    const column = table.releases.indexOf(release);
    for (const { branch, cells } of table.rows) {
      if (!(openIn.get(typeOf.get(branch) ?? '') ?? []).includes(release)) continue;
      expect(cells[column].dropped, `${release}'s ${branch} is dropped while its runs can be open`).toBe(false);
    }
  });
});
