/** Percentiles by name (`p50`, `p99`, `p99_9`), with `max` and `count`; null where there were no values. */
export type Percentiles = Record<string, number | null>;

/**
 * Percentiles by the nearest-rank method (p99 of 100 values is the 99th smallest).
 * @param ps percentiles, 0-100
 */
export function percentiles(values: number[], ps: number[] = [50, 99, 99.9]): Percentiles {
  const sorted = Float64Array.from(values).sort();
  const result: Percentiles = {};
  for (const p of ps) {
    const key = `p${String(p).replace('.', '_')}`;
    if (sorted.length === 0) {
      result[key] = null;
      continue;
    }
    const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
    result[key] = round(sorted[rank - 1] ?? NaN);
  }
  result.max = sorted.length ? round(sorted[sorted.length - 1] ?? NaN) : null;
  result.count = sorted.length;
  return result;
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
