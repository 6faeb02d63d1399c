// What the command line prints: with --json the API's objects as it answered them, otherwise
// tables and lines a person reads.

/** Columns of a table: a heading, and the row's property the cell shows or how to make the cell from the row. */
export type Columns<T> = [heading: string, cell: keyof T | ((row: T) => unknown)][];

function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.join(',');
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Rows under their headings, each column as wide as its widest cell. */
export function table<T>(rows: readonly T[], columns: Columns<T>): string {
  const cells = [
    columns.map(([heading]) => heading),
    ...rows.map((row) => columns.map(([, cell]) => text(typeof cell === 'function' ? cell(row) : row[cell]))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  return cells
    .map((line) =>
      line
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One object as `name: value` lines. */
export function fields(object: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(object).map((key) => key.length));
  return Object.entries(object)
    .map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${text(value)}`)
    .join('\n');
}

/** What a delivery, ping or test event got, in words. */
export function describeResult(result: {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}): string {
  const status = result.statusCode === null ? 'no response' : `HTTP ${result.statusCode}`;
  return result.delivered
    ? `delivered: ${status} in ${result.durationMs} ms`
    : `failed (${result.error}): ${status} in ${result.durationMs} ms`;
}
