// A Prometheus histogram of the service's own /metrics, scraped before and after a window, and
// its quantiles over the window, estimated from the buckets as Prometheus's histogram_quantile
// estimates them.

/** Cumulative counts by upper bound (`le`), lowest bound first and +Inf last. */
export type Buckets = [upperBound: number, count: number][];

/** The buckets of histogram `name` (summed over its other labels), or null when the build has no such histogram. */
export async function scrapeHistogram(url: string, name: string): Promise<Buckets | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) return null;
    return parseHistogram(await response.text(), name);
  } catch {
    return null;
  }
}

/** The buckets of histogram `name` in Prometheus text, or null when it has none. */
export function parseHistogram(text: string, name: string): Buckets | null {
  const counts = new Map<number, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+)_bucket\{(?:[^}]*,)?le="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const upperBound = match[2] === '+Inf' ? Infinity : Number(match[2]);
    counts.set(upperBound, (counts.get(upperBound) ?? 0) + Number(match[3]));
  }
  return counts.size ? [...counts].sort(([a], [b]) => a - b) : null;
}

/** The observations made between two scrapes of the same histogram. */
export function bucketsBetween(before: Buckets, after: Buckets): Buckets {
  const earlier = new Map(before);
  return after.map(([upperBound, count]) => [upperBound, count - (earlier.get(upperBound) ?? 0)]);
}

/**
 * The q-quantile (0 to 1) of the observations, interpolated linearly within the bucket that
 * holds it (from 0 in the first); in the +Inf bucket, the highest finite bound. Null without
 * observations.
 */
export function quantileFromBuckets(buckets: Buckets, q: number): number | null {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let [lowerBound, countBelow] = [0, 0];
  for (const [upperBound, count] of buckets) {
    if (count >= rank && count > countBelow) {
      if (upperBound === Infinity) return lowerBound;
      return lowerBound + ((upperBound - lowerBound) * (rank - countBelow)) / (count - countBelow);
    }
    [lowerBound, countBelow] = [upperBound, count];
  }
  return lowerBound;
}
