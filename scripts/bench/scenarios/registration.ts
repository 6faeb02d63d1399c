// `split-registration`, `single-registration`: webhook registrations, open loop, each
// pinging its receiver.
import { randomBytes } from 'node:crypto';
import { type Sql } from 'postgres';
import { CONFIG, log } from '../lib/config';
import { bucketsBetween, quantileFromBuckets, scrapeHistogram } from '../lib/histogram';
import { createAccount } from '../lib/http';
import { scanLogs } from '../lib/logs';
import { sleep } from '../lib/stack';
import { nowMs, percentiles, round } from '../lib/stats';
import { type Account, type Context, type Outcome, type ServiceTarget, type WorkloadScenario } from '../lib/types';
import { serviceWorkload } from './service';

export const scenarios: WorkloadScenario[] = [
  serviceWorkload('registration', 'split', 'registration (API + worker processes)', runRegistration),
  serviceWorkload('registration', 'single', 'registration (one process)', runRegistration),
];

/** The service's histogram of the time each public API request spends on its token and rate limit. */
const AUTH_HISTOGRAM = 'http_request_auth_seconds';

/** 500 registrations (100 accounts, 5 each), open loop at 5/s; each pings its receiver. */
async function runRegistration(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const { count, accounts: accountCount, rate } = CONFIG.registrations;
  const accounts: Account[] = [];
  for (let i = 0; i < accountCount; i++) accounts.push(await createAccount(target.internal));
  const tag = randomBytes(3).toString('hex');
  const items = [];
  for (let i = 0; i < count; i++) {
    items.push({ token: accounts[i % accountCount].token, url: `https://127.0.0.1:${ctx.ports[i % ctx.ports.length]}/reg/${tag}/${i}` });
  }
  const pingsBefore = (await ctx.receivers('counts')).pings;
  // The API process's time for the token check and rate limit of each request (the one process's, single).
  const apiMetricsUrl = `${target.baseUrl}/metrics`;
  const authBefore = await scrapeHistogram(apiMetricsUrl, AUTH_HISTOGRAM);
  const window = ctx.sampler.window();
  const startAt = nowMs() + 300;
  const stopProbe = probeRoundTrips(target.sql, 1000 / rate);
  const records = await ctx.generator('registrations', { baseUrl: target.baseUrl, items, rate, startAt, timeoutMs: 30_000 }, 600_000);
  const roundTrips = await stopProbe();
  const measured = window();
  const authAfter = await scrapeHistogram(apiMetricsUrl, AUTH_HISTOGRAM);
  const auth = authBefore && authAfter ? bucketsBetween(authBefore, authAfter) : null;
  const [authP50Ms, authP99Ms] = [0.5, 0.99].map((q) => {
    const seconds = auth ? quantileFromBuckets(auth, q) : null;
    return seconds === null ? null : round(seconds * 1000, 3);
  });
  const created = records.filter((r) => r.status === 201);
  await ctx.receivers('secrets', { entries: created.map((r): [string, string] => [r.webhookId!, r.secret!]) });
  const pingsAfter = (await ctx.receivers('counts')).pings;
  const statuses: Record<string, number> = {};
  for (const r of records) statuses[r.error ?? String(r.status)] = (statuses[r.error ?? String(r.status)] ?? 0) + 1;
  const [{ n: stored }] = await target.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhooks`;
  const cpuOf = (groups: string[]) => groups.reduce((s, n) => s + (measured.groups[n]?.cpuMs ?? 0), 0);
  const cpuAll = cpuOf(target.groups);
  const cpuService = cpuOf(target.serviceGroups);
  const latency = percentiles(
    created.map((r) => r.doneAt - r.t0),
    [50, 99, 99.9],
  );
  const pgRoundTripMs = percentiles(roundTrips, [50, 99]);
  log(
    `registration: ${created.length}/${count} created at ${rate}/s, latency p50/p99 ${latency.p50}/${latency.p99} ms,` +
      ` token check + rate limit p50/p99 ${authP50Ms}/${authP99Ms} ms, a PostgreSQL round trip p50/p99 ${pgRoundTripMs.p50}/${pgRoundTripMs.p99} ms`,
  );
  return {
    steps: [],
    knee: null,
    registration: {
      count,
      accounts: accountCount,
      rate,
      created: created.length,
      statuses,
      stored,
      latencyMs: latency,
      authP50Ms,
      authP99Ms,
      pgRoundTripMs,
      pings: {
        received: pingsAfter.received - pingsBefore.received,
        verified: pingsAfter.verified - pingsBefore.verified,
        badSignature: pingsAfter.badSignature - pingsBefore.badSignature,
        unverified: pingsAfter.pending,
      },
      cpu: measured,
      cpuMsPerRegistration: {
        all: round(cpuAll / Math.max(1, created.length), 2),
        service: round(cpuService / Math.max(1, created.length), 2),
      },
      workerPeakRssMiB: measured.groups[target.workerGroup]?.peakRssMiB ?? null,
    },
    logs: scanLogs(target.logFiles),
  };
}

/**
 * Times a bare `SELECT 1` on a connection of its own every `everyMs` until the returned
 * function is called, which gives the times in ms: what any round trip to PostgreSQL costs at
 * the scenario's pace on this machine, the yardstick of the token check and rate limit's one
 * statement.
 */
function probeRoundTrips(sql: Sql, everyMs: number): () => Promise<number[]> {
  const times: number[] = [];
  let stopped = false;
  const probing = (async () => {
    const connection = await sql.reserve();
    try {
      while (!stopped) {
        await sleep(everyMs);
        const started = performance.now();
        await connection`SELECT 1`;
        times.push(performance.now() - started);
      }
    } finally {
      connection.release();
    }
  })();
  return async () => {
    stopped = true;
    await probing;
    return times;
  };
}
