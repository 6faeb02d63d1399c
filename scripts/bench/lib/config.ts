// Where the bench runs from, its settings (from the BENCH_* variables that run.ts documents)
// and its log.
import path from 'node:path';
import { receiverAuthAsked } from './receiver-auth';

/** The repository: this file runs compiled, as dist/scripts/bench/lib/config.js. */
export const ROOT = path.resolve(__dirname, '../../../..');
export const DIST = path.join(ROOT, 'dist');
/** The compiled bench (dist/scripts/bench): the children's scripts are forked from here. */
export const BENCH_DIR = path.resolve(__dirname, '..');
/** The results stay in the source tree. */
export const RESULTS_DIR = path.join(ROOT, 'scripts/bench/results');

export const QUICK = process.env.BENCH_QUICK === '1';

/** The checkout whose service the bench starts (BENCH_SERVICE_ROOT, built): this one, or another release's. */
export const SERVICE_ROOT = path.resolve(process.env.BENCH_SERVICE_ROOT ?? ROOT);
export const SERVICE_DIST = path.join(SERVICE_ROOT, 'dist');

/** A positive number from variable `name`, or `fallback` when it is unset. */
function positive(name: string, fallback: number): number;
function positive(name: string): number | null;
function positive(name: string, fallback: number | null = null): number | null {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name}=${raw}: a positive number`);
  return value;
}

/** BENCH_TRACING: `on` or `off` (the default); any other value is a mistake that would measure the wrong thing. */
function tracingAsked(): boolean {
  const value = process.env.BENCH_TRACING ?? 'off';
  if (value !== 'on' && value !== 'off') throw new Error(`BENCH_TRACING=${value}: on or off`);
  return value === 'on';
}

export const CONFIG = {
  quick: QUICK,
  /** The service's processes export every trace to the bench's sink, and send traceparent to the receivers (lib/tracing.ts). */
  tracing: tracingAsked(),
  /** BENCH_RECEIVER_AUTH: the credential the fan-out scenarios' webhooks carry to the service's requests (lib/receiver-auth.ts). */
  receiverAuth: receiverAuthAsked(),
  workers: Number(process.env.BENCH_WORKERS ?? 1),
  /**
   * Worker processes of the bulk task queue alone, at a lower OS priority (`nice -n 10`),
   * beside the `workers`, which then serve the main queue alone; 0: every worker serves both.
   */
  bulkWorkers: Number(process.env.BENCH_BULK_WORKERS ?? 0),
  /** The API process in a cpu cgroup of its own with this cpu.shares (the workers stay at the default 1024); null: no group. */
  apiCpuShares: positive('BENCH_API_CPU_SHARES'),
  rates: process.env.BENCH_RATES?.split(',').map(Number) ?? defaultRates(),
  warmupMs: QUICK ? 1_000 : 5_000,
  steadyMs: QUICK ? 3_000 : 30_000,
  /** Longest wait, after the last write was answered, for its deliveries. */
  drainMs: QUICK ? 15_000 : 60_000,
  criteria: { e2eP99Ms: 250, acceptP99Ms: 50 },
  /** item.added changes per write: a write body of about 1 KiB. */
  changesPerWrite: 8,
  hot: { rate: 50, durationMs: QUICK ? 10_000 : 60_000, period: 10, drainMs: QUICK ? 30_000 : 180_000 },
  registrations: { count: QUICK ? 50 : 500, accounts: QUICK ? 10 : 100, rate: 5 },
  /** A recovery of this many failed deliveries at RECOVERY_RATE_PER_SECOND=rate, beside live writes to the same webhook. */
  recovery: { deliveries: QUICK ? 500 : 5000, rate: 100, liveWritesPerSec: 10 },
  /**
   * Fairness: a quiet account's one-delivery writes (and its own reads of the public API) in
   * phases of `phaseMs`: alone, beside a list written every `noisyEveryMs` with
   * `noisyDeliveriesPerWrite` deliveries a write, beside each flood of the public API (`flood`),
   * and beside another account's `relaySessions` relay sessions (each a `svc-webhooks listen`),
   * its list written `relayWritesPerSec` times a second, each write a delivery to every session.
   * The noisy list may fall behind: `drainMs` bounds the wait.
   */
  noisyNeighbour: {
    quietWritesPerSec: 5,
    quietReadsPerSec: 2,
    noisyDeliveriesPerWrite: QUICK ? 500 : 5000,
    noisyEveryMs: 5000,
    /**
     * The floods, one phase each: a client standing for one on another machine, its CPU capped
     * at `cpuCores` (BENCH_FLOOD_CPU) in a cgroup of its own, in a network namespace of its own
     * with `netns` (BENCH_FLOOD_NETNS=1), on `connections` keep-alive connections, closed loop,
     * or paced to `perSec` requests a second in all (BENCH_FLOOD_RATE; unset: as fast as answered).
     * The 413 flood declares `declaredBytes` and sends the first `firstChunkBytes`. The targets
     * beside a flood: the quiet account's end-to-end and accept p99 (`criteria`) and the flood's rate.
     */
    flood: {
      connections: 50,
      cpuCores: positive('BENCH_FLOOD_CPU', 0.5),
      netns: process.env.BENCH_FLOOD_NETNS === '1',
      perSec: positive('BENCH_FLOOD_RATE'),
      declaredBytes: 1024 * 1024,
      firstChunkBytes: 4096,
      minPerSec: 3000,
    },
    /** An account's most (docs/receiving.md). */
    relaySessions: 2,
    /**
     * A delivery to each session every 100 ms without pause (twice `split-relay`'s rate to its
     * one session), while the machine keeps headroom: at 20/s (45 small deliveries a second
     * with the quiet account's) the two cores were saturated and every small write waited for
     * them, relayed or not (docs/performance.md).
     */
    relayWritesPerSec: 10,
    phaseMs: QUICK ? 10_000 : 60_000,
    drainMs: QUICK ? 120_000 : 600_000,
  },
  /**
   * Relay latency: `writes` writes of one change each, open loop at `rate` per second, to a list
   * with a direct webhook and a relay session (`svc-webhooks listen`); `drainMs` bounds the wait
   * for their deliveries once the last write was answered.
   */
  relay: { writes: QUICK ? 50 : 300, rate: 10, drainMs: QUICK ? 15_000 : 60_000 },
  /**
   * Probes beside live traffic: `webhooks` webhooks paused by failures (seeded, of `accounts`
   * accounts), probed at PROBE_INTERVALS=`intervals` by receivers answering 503, beside a quiet
   * account's one-delivery writes at `quietWritesPerSec`: a phase without them, then `rounds` of a
   * phase with the probes and one without (their workflows terminated), each `phaseMs` of writes
   * after the step's warm-up. `concurrency`: workflow starts and terminations sent at once.
   */
  probes: {
    webhooks: Number(process.env.BENCH_PROBE_WEBHOOKS ?? (QUICK ? 500 : 10_000)),
    accounts: 10,
    intervals: process.env.BENCH_PROBE_INTERVALS ?? '20s',
    quietWritesPerSec: 5,
    rounds: Number(process.env.BENCH_PROBE_ROUNDS ?? 1),
    phaseMs: Number(process.env.BENCH_PROBE_PHASE_S ?? (QUICK ? 10 : 60)) * 1000,
    concurrency: 20,
  },
  /**
   * Pages of the event feed: `webhooks` webhooks of `accounts` accounts, `itemsPerWebhook` items
   * each (a million in all), then `reads` pages of 100, `concurrency` at a time.
   */
  feed: { accounts: 200, webhooks: 1000, itemsPerWebhook: QUICK ? 200 : 1000, reads: QUICK ? 300 : 3000, concurrency: 4 },
  receivers: 10,
  writeTimeoutMs: 30_000,
  deliveryTimeoutMs: 10_000,
  logLevel: process.env.LOG_LEVEL ?? 'info',
  /** Before each step, wait (at most this long) until other work on the machine uses under a quarter of a core. */
  /** A step that fails while other work used more than this many cores is repeated (at most `retries` times). */
  contentionLimitCores: 0.6,
  retries: 2,
  /** Any failed step is run this many times more: a disk whose commits stall now and then (see the probe) fails single steps at random. */
  repeatsOfFailedStep: 1,
  /** How long the probe of PostgreSQL's commit latency runs, before the scenarios. */
  commitProbeMs: QUICK ? 5_000 : 20_000,
  quietWaitMs: Number(process.env.BENCH_QUIET_WAIT_S ?? (QUICK ? 10 : 30)) * 1000,
};
export type Config = typeof CONFIG;

/** 1, 2, 5, 10, then each step at most 1.25× the one before, near every knee, up to 891 writes/s. */
function defaultRates(): number[] {
  const rates = [1, 2, 5, 10];
  while (rates[rates.length - 1] < 800) rates.push(Math.floor(rates[rates.length - 1] * 1.25));
  return rates;
}

export const log = (line: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
