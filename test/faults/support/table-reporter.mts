// Prints the fault suite's table at the end of the run: one row per recorded scenario
// (./scenarios.ts), with vitest's verdict, then the totals the issue asks for.
import path from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { ScenarioFigures } from './scenarios';

/** The group whose rows the "peak RSS under hostile receivers" total is taken from. */
export const HOSTILE_GROUP = 'hostile-receivers';

interface Row extends ScenarioFigures {
  group: string;
  scenario: string;
  verdict: 'passed' | 'failed' | 'skipped' | 'pending';
}

const COLUMNS: Array<[header: string, cell: (row: Row) => string, align: 'left' | 'right']> = [
  ['scenario', (row) => `${row.group} › ${row.scenario}`, 'left'],
  ['ok', (row) => (row.verdict === 'passed' ? 'yes' : row.verdict === 'failed' ? 'NO' : row.verdict), 'left'],
  ['outcome', (row) => row.outcome ?? '', 'left'],
  ['ms', (row) => number(row.durationMs), 'right'],
  ['peak RSS MB', (row) => number(row.peakRssMb), 'right'],
  ['ΔRSS MB', (row) => (row.rssGrowthMb === undefined ? '' : `${row.rssGrowthMb >= 0 ? '+' : ''}${row.rssGrowthMb}`), 'right'],
  ['requests', (row) => number(row.requests), 'right'],
  ['5xx', (row) => number(row.fiveXx), 'right'],
  ['writes', (row) => number(row.writesAccepted), 'right'],
  ['lost', (row) => number(row.writesLost), 'right'],
  ['note', (row) => row.note ?? '', 'left'],
];

function number(value: number | undefined): string {
  return value === undefined ? '' : String(Math.round(value * 10) / 10);
}

function rowsOf(test: TestCase): Row[] {
  const group = path.basename(test.module.moduleId).replace(/\.test\.[cm]?[jt]s$/, '');
  const verdict = test.result().state;
  const recorded = test.meta().scenarios;
  const figures = recorded && recorded.length > 0 ? recorded : [{}];
  return figures.map((row) => ({ ...row, group: row.group ?? group, scenario: row.scenario ?? test.fullName, verdict }));
}

export function formatTable(rows: Row[]): string {
  const cells = rows.map((row) => COLUMNS.map(([, cell]) => cell(row).replace(/\|/g, '/')));
  const headers = COLUMNS.map(([header]) => header);
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((line) => line[i].length)));
  const line = (values: string[]) =>
    `| ${values.map((value, i) => (COLUMNS[i][2] === 'right' ? value.padStart(widths[i]) : value.padEnd(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((width, i) => (COLUMNS[i][2] === 'right' ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [line(headers), rule, ...cells.map(line)].join('\n');
}

export function formatTotals(rows: Row[]): string {
  const sum = (pick: (row: Row) => number | undefined) => rows.reduce((total, row) => total + (pick(row) ?? 0), 0);
  const passed = rows.filter((row) => row.verdict === 'passed').length;
  const hostilePeaks = rows.filter((row) => row.group === HOSTILE_GROUP && row.peakRssMb !== undefined).map((row) => row.peakRssMb!);
  const peak = hostilePeaks.length > 0 ? `${Math.max(...hostilePeaks)} MB` : 'not measured (no hostile-receiver rows ran)';
  const lost = sum((row) => row.writesLost);
  const fiveXx = sum((row) => row.fiveXx);
  const totals =
    `Totals: ${rows.length} scenarios run, ${passed} passed` +
    (passed < rows.length ? ` (${rows.length - passed} NOT passed)` : '') +
    `; writes accepted ${sum((row) => row.writesAccepted)}, lost ${lost}` +
    `; 5xx seen ${fiveXx}; peak RSS under hostile receivers ${peak}`;
  const alarms = [lost > 0 ? `${lost} accepted writes LOST (must be 0)` : '', fiveXx > 0 ? `${fiveXx} 5xx answers (must be 0)` : ''].filter(
    Boolean,
  );
  return alarms.length > 0 ? `${totals}\n!! ${alarms.join('; ')}` : totals;
}

export class ScenarioTableReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules.flatMap((module) => [...module.children.allTests()].flatMap(rowsOf));
    if (rows.length === 0) return;
    process.stdout.write(`\nFault scenarios\n\n${formatTable(rows)}\n\n${formatTotals(rows)}\n\n`);
  }
}
