// @ts-check
'use strict';

/**
 * Percentiles by the nearest-rank method (p99 of 100 values is the 99th smallest).
 * @param {number[]} values
 * @param {number[]} ps percentiles, 0-100
 * @returns {Record<string, number | null>}
 */
function percentiles(values, ps = [50, 99, 99.9]) {
  const sorted = Float64Array.from(values).sort();
  /** @type {Record<string, number | null>} */
  const result = {};
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

/** @param {number} value @param {number} [digits] */
function round(value, digits = 1) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes. */
function nowMs() {
  return performance.timeOrigin + performance.now();
}

module.exports = { percentiles, round, nowMs };
