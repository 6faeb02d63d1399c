// The worker's Temporal SDK metrics, scraped before and after a step.
import { round } from './stats';

/**
 * The worker's Temporal SDK metrics (Prometheus text, latencies in ms): sums and counts of
 * each latency histogram by workflow type, activity type or gRPC operation, and counters.
 * Null when the build exposes no /metrics.
 */
export async function scrapeSdkMetrics(url: string | undefined): Promise<Map<string, number> | null> {
  if (!url) return null;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) return null;
    const values = new Map<string, number>();
    for (const line of (await response.text()).split('\n')) {
      const match = /^temporal_(\w+?)(_sum|_count)?(?:\{([^}]*)\})? ([\d.eE+-]+)$/.exec(line);
      if (!match || line.includes('_bucket')) continue;
      const [, name, suffix = '', labels = '', value] = match;
      const label = /(?:workflow_type|activity_type|operation)="([^"]+)"/g;
      const parts = [...labels.matchAll(label)].map((m) => m[1]).filter((v) => !['GetSystemInfo', 'DescribeNamespace'].includes(v));
      // activity metrics carry both types: keep the activity's
      const qualifier = /activity_type="([^"]+)"/.exec(labels)?.[1] ?? /operation="([^"]+)"/.exec(labels)?.[1] ?? parts[0];
      const key = `${name}${qualifier ? `{${qualifier}}` : ''}${suffix}`;
      values.set(key, (values.get(key) ?? 0) + Number(value));
    }
    return values;
  } catch {
    return null;
  }
}

export type SdkFigures = Record<string, { count: number; meanMs?: number }>;

/** Per-step means (ms) and counts from two scrapes. */
export function diffSdkMetrics(a: Map<string, number> | null, b: Map<string, number> | null): SdkFigures | undefined {
  if (!a || !b) return undefined;
  const result: SdkFigures = {};
  for (const [key, after] of b) {
    if (key.endsWith('_sum')) continue;
    const delta = after - (a.get(key) ?? 0);
    if (delta <= 0) continue;
    if (key.endsWith('_count')) {
      const base = key.slice(0, -'_count'.length);
      const sum = (b.get(`${base}_sum`) ?? 0) - (a.get(`${base}_sum`) ?? 0);
      result[base] = { count: delta, meanMs: round(sum / delta) };
    } else if (!/slots|pollers|cache_size|num_/.test(key)) {
      result[key] = { count: delta };
    }
  }
  return result;
}
