// The bench's quantiles from a Prometheus histogram's buckets (scripts/bench/lib/histogram.ts),
// as the registration scenario reports the API's token check and rate limit.
import { describe, expect, it } from 'vitest';
import { bucketsBetween, parseHistogram, quantileFromBuckets, type Buckets } from '../../scripts/bench/lib/histogram';

const text = (counts: [string, number][], labels = '') =>
  [
    '# HELP http_request_auth_seconds Time spent authenticating',
    '# TYPE http_request_auth_seconds histogram',
    ...counts.map(([le, count]) => `http_request_auth_seconds_bucket{${labels}le="${le}"} ${count}`),
    `http_request_auth_seconds_sum 0.5`,
    `http_request_auth_seconds_count ${counts.at(-1)![1]}`,
    'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/healthz"} 7',
  ].join('\n');

describe('parseHistogram', () => {
  it("reads one histogram's cumulative buckets, lowest first, summed over its other labels", () => {
    const scraped = `${text(
      [
        ['0.0005', 2],
        ['0.001', 5],
        ['+Inf', 6],
      ],
      'route="/a",',
    )}\n${text(
      [
        ['0.0005', 1],
        ['0.001', 1],
        ['+Inf', 1],
      ],
      'route="/b",',
    )}`;
    expect(parseHistogram(scraped, 'http_request_auth_seconds')).toEqual([
      [0.0005, 3],
      [0.001, 6],
      [Infinity, 7],
    ]);
  });

  it('answers null for a histogram the text does not have', () => {
    expect(parseHistogram(text([['+Inf', 1]]), 'http_request_other_seconds')).toBeNull();
  });
});

describe('quantileFromBuckets', () => {
  // 100 observations: 50 up to 0.5 ms, 40 more up to 1 ms, 9 up to 2 ms, 1 above.
  const buckets: Buckets = [
    [0.0005, 50],
    [0.001, 90],
    [0.002, 99],
    [Infinity, 100],
  ];

  it('interpolates linearly within the bucket that holds the rank, from 0 in the first', () => {
    expect(quantileFromBuckets(buckets, 0.25)).toBeCloseTo(0.00025, 12);
    expect(quantileFromBuckets(buckets, 0.5)).toBeCloseTo(0.0005, 12);
    expect(quantileFromBuckets(buckets, 0.7)).toBeCloseTo(0.00075, 12);
    expect(quantileFromBuckets(buckets, 0.99)).toBeCloseTo(0.002, 12);
  });

  it('answers the highest finite bound for a rank in the +Inf bucket, and null without observations', () => {
    expect(quantileFromBuckets(buckets, 0.995)).toBe(0.002);
    expect(
      quantileFromBuckets(
        [
          [0.001, 0],
          [Infinity, 0],
        ],
        0.99,
      ),
    ).toBeNull();
  });

  it('skips empty buckets below the rank', () => {
    expect(
      quantileFromBuckets(
        [
          [0.0001, 0],
          [0.0005, 0],
          [0.001, 10],
          [Infinity, 10],
        ],
        0.5,
      ),
    ).toBeCloseTo(0.00075, 12);
  });
});

describe('bucketsBetween', () => {
  it('keeps the observations made between two scrapes', () => {
    const before: Buckets = [
      [0.001, 10],
      [Infinity, 12],
    ];
    const after: Buckets = [
      [0.001, 15],
      [Infinity, 22],
    ];
    expect(bucketsBetween(before, after)).toEqual([
      [0.001, 5],
      [Infinity, 10],
    ]);
    expect(quantileFromBuckets(bucketsBetween(before, after), 0.5)).toBe(0.001);
  });
});
