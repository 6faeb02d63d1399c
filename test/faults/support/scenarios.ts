// Scenario rows of the fault suite's table (printed by ./table-reporter.ts at the end of
// `npm run test:faults`). A test records its figures on its own vitest task (`task.meta`),
// so whether the row passed is vitest's own verdict, and a test that fails or times out
// still shows whatever it recorded. See test/faults/README.md.

/** The figures of one row; every field is optional, empty cells print as blanks. */
export interface ScenarioFigures {
  /** Row label; default: the test's name. */
  scenario?: string;
  /** Group shown before the label; default: the file name without `.test.ts`. */
  group?: string;
  /** What happened: a delivery error class, a status histogram, "refused", ... */
  outcome?: string;
  /** Wall time of the scenario itself (not asserted anywhere: figures only). */
  durationMs?: number;
  /** Peak resident set size of the test process during the scenario, MB. */
  peakRssMb?: number;
  /** Peak RSS minus RSS before the scenario, MB. */
  rssGrowthMb?: number;
  /** HTTP requests sent: to the API, or deliveries attempted. */
  requests?: number;
  /** 5xx answers seen (the suite's total must be 0). */
  fiveXx?: number;
  /** Writes the API accepted (202) in this scenario. */
  writesAccepted?: number;
  /** Accepted writes whose deliveries were neither received nor recorded (must be 0). */
  writesLost?: number;
  /** Anything else worth a line, e.g. why a case could not run as specified. */
  note?: string;
}

declare module 'vitest' {
  interface TaskMeta {
    /** Rows this test recorded; see recordScenario. */
    scenarios?: ScenarioFigures[];
  }
}

/** What recordScenario needs of a test: the `task` of its context (`it('...', async ({ task }) => ...)`). */
export interface ScenarioTask {
  meta: { scenarios?: ScenarioFigures[] };
}

/**
 * Adds a row for this test to the table and returns it. The row is sent to the reporter
 * when the test ends, so it may be filled in as the test goes:
 *
 *     it('kill -9 the worker mid-burst', async ({ task }) => {
 *       const row = recordScenario(task, { writesAccepted: 0, writesLost: 0 });
 *       ...
 *       row.writesAccepted = accepted.length;
 *       row.writesLost = lost.length;
 *       expect(lost).toEqual([]);
 *     });
 *
 * A test may record several rows (one per case it loops over); they all share the test's
 * verdict. A test that records nothing still gets a row with its name and verdict.
 */
export function recordScenario(task: ScenarioTask, figures: ScenarioFigures = {}): ScenarioFigures {
  const row = { ...figures };
  (task.meta.scenarios ??= []).push(row);
  return row;
}

/** Bytes to MB with one decimal, for the table. */
export const megabytes = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;
