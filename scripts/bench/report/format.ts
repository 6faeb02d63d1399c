// The pieces every section of the report is written with: numbers, ratios, table rows, the
// step a scenario is summed up by, and the logs' warnings in a line.
import { type LogScan } from '../lib/logs';
import { type Percentiles } from '../lib/stats';
import { type ScenarioResult, type StepResult } from '../lib/types';

export const num = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined || Number.isNaN(v) ? '–' : String(Math.round(v * 10 ** digits) / 10 ** digits);
export const ratio = (a: number | null | undefined, b: number | null | undefined): string =>
  a && b ? `${num(a / b, a / b < 0.1 ? 3 : 2)}×` : '–';

/** A row of a table: the cells, each between bars. */
export const row = (...cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
/** Percentiles as `p50 / p99` (or with p99.9). */
export const p50p99 = (p: Percentiles): string => `${num(p.p50)} / ${num(p.p99)}`;
export const p50p99p999 = (p: Percentiles): string => `${p50p99(p)} / ${num(p.p99_9)}`;

/** A section of the report: its heading, then the header of its table. */
export function tableHead(title: string, columns: string[]): string[] {
  return [`## ${title}`, '', ...columnsRow(columns)];
}

/** A section of the report that is one table: its heading, the table's header and rows, a blank line. */
export function tableSection(title: string, columns: string[], rows: string[]): string[] {
  return [...tableHead(title, columns), ...rows, ''];
}

/** The row of a scenario without figures in a table of `columns`: its id, the first line of `note` (such as its error), empty cells. */
export function noteRow(columns: string[], id: string, note: string): string {
  return `| ${id} | ${note.split('\n')[0]} |${' |'.repeat(columns.length - 2)}`;
}

/** The header of a table: its columns' titles, then the line under them. */
export function columnsRow(columns: string[]): string[] {
  return [row(...columns), `|${columns.map(() => '---|').join('')}`];
}

/** A column of a table: its title, and its cell in the row of an item. */
export type Column<T> = [title: string, cell: (item: T) => string | number];

/** A table of `columns`, a row per item. */
export function table<T>(columns: Column<T>[], items: T[]): string[] {
  return [...columnsRow(columns.map(([title]) => title)), ...items.map((item) => row(...columns.map(([, cell]) => cell(item))))];
}

/** The step a scenario is summed up by: its knee (null when it has none). */
export function kneeStep(s: ScenarioResult): StepResult | null {
  if (!s.steps?.length) return null;
  return s.steps.find((st) => st.rate === s.knee) ?? null;
}

/** The fan-out scenarios of a run, stepped through rates. */
export function fanoutScenarios(scenarios: ScenarioResult[]): ScenarioResult[] {
  return scenarios.filter((s) => s.kind === 'fanout');
}

/** The warnings and errors of each process's log, with an example. */
export function logSummary(logs: LogScan | undefined): string {
  if (!logs) return 'none read';
  return Object.entries(logs)
    .map(([name, l]) => {
      const example = l.sample.length ? ` (e.g. \`${l.sample[0]?.replace(/`/g, "'").slice(0, 160)}\`)` : '';
      return `${name} ${l.warnings} warnings, ${l.errors} errors${example}`;
    })
    .join(', ');
}

/** The fields of the outcome that sum up a workload scenario, each with the kind of scenario it sums up. */
const KIND_OF_SUMMARY = { hot: 'hot', recovery: 'recovery', noisyNeighbour: 'noisy-neighbour', probes: 'probes' } as const;

/** A section per scenario whose outcome has `field`: its heading, then what `render` writes of it, or its error. */
export function workloadSections(
  scenarios: ScenarioResult[],
  field: keyof typeof KIND_OF_SUMMARY,
  title: string,
  render: (scenario: ScenarioResult) => string[],
): string[] {
  return scenarios
    .filter((x) => x.kind === KIND_OF_SUMMARY[field])
    .flatMap((s) => [`## ${title} (${s.id})`, '', ...(s.error || !s[field] ? [`error: ${s.error}`, ''] : render(s))]);
}
