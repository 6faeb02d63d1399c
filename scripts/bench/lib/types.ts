// The shapes the harness passes between run.ts, the scenarios and the report. It takes types
// only from modules that import nothing of it back, so that no import circle runs through it.
import { type Sql } from 'postgres';
import { type Recovery } from '../../../src/objects';
import { type SecretBox } from '../../../src/secret-keys';
import { type FloodKind } from '../flooder';
import { type GeneratorApi } from '../generator';
import { type ReceiversApi } from '../receivers';
import { type TraceSinkCounts } from '../trace-sink';
import { type Throttling } from './cgroups';
import { type Config } from './config';
import { type DescribedEnvironment } from './environment';
import { type Rpc, type LoopDelay } from './ipc';
import { type Receipts, type Recorded, type StepFigures, type Writes } from './ledger';
import { type LogScan, type ServerLogScan } from './logs';
import { type Measured, type ProcessSampler } from './proc';
import { type WriteDoor } from './publishers';
import { type ReceiverAuthMode, type WebhookAuth } from './receiver-auth';
import { type SdkFigures } from './sdk-metrics';
import { type DatabaseServer, type TemporalServer } from './stack';
import { type Percentiles } from './stats';

/** What every scenario shares: the sampler, the receivers and the generator, the database server. */
export interface Context {
  sampler: ProcessSampler;
  receivers: Rpc<ReceiversApi>;
  generator: Rpc<GeneratorApi>;
  ports: number[];
  /** What the fan-out scenarios' webhooks are registered with (BENCH_RECEIVER_AUTH); null: none. */
  webhookAuth: WebhookAuth | null;
  caFile: string;
  runDir: string;
  database: DatabaseServer;
  /** Where the service's processes export their spans (BENCH_TRACING=on); null: tracing off. */
  traceSink: TraceSink | null;
}

/** The bench's OTLP/HTTP sink (trace-sink.ts, lib/tracing.ts). */
export interface TraceSink {
  /** Its base URL, the service's OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** What it received so far. */
  counts(): Promise<TraceSinkCounts>;
}

/** What the trace sink received over a step, and its own CPU, which no other figure counts. */
export interface TraceExport extends TraceSinkCounts {
  spansPerDelivery: number;
  bytesPerDelivery: number;
  sinkCpuMsPerDelivery: number;
}

/** The run's environment, described once, with the Temporal server of the last scenario that started one. */
export type Environment = DescribedEnvironment & { temporalServer?: { cmdline: string } };

/** A list the harness writes to, and the webhooks (one per receiver URL) that get its writes. */
export interface ListLayout {
  listId: string;
  /** `auth`: registered with the webhook (the service alone presents it). */
  webhooks: { url: string; auth?: WebhookAuth }[];
  /** The topics its webhooks subscribe to: list.changed unless given. */
  events?: string[];
}
export interface MadeList {
  listId: string;
  webhookIds: string[];
}
export interface Account {
  id: string;
  token: string;
  webhooks?: string[];
}

/** Delivery outcomes as the system under test records them, read while a step runs. */
export interface OutcomesPoller {
  ready?: Promise<void>;
  count(): Promise<number>;
  take(): Promise<Recorded[]>;
  /** Rows logged since the start that the harness never saw (pruned in between). */
  prunedUnseen(): Promise<number>;
  stop(): Promise<void>;
}

/** Where a step's receipts come from: the receivers, or the floor's own completions. */
export interface ReceiptSource {
  counts(): Promise<{ pending: number; connections: number }>;
  take(): Promise<Receipts>;
}

/** What a scenario measures, started and ready for writes. */
export interface Target {
  kind: 'baseline' | 'floor' | 'service';
  baseUrl: string;
  token: string;
  /** The process groups of the sampler that count for the scenario ("all processes"). */
  groups: string[];
  /** The system under test among them. */
  serviceGroups: string[];
  workerGroup: string;
  /** A forked target (baseline, floor): its counts and event-loop delays. */
  child?: { counts(): Promise<{ outcomesTotal: number; maxInFlight?: number }>; loopDelay(): Promise<LoopDelay> };
  /** The worker's Prometheus metrics, where the target has them. */
  metricsUrl?: string;
  logFiles?: { name: string; file: string }[];
  /** The floor sends nothing: its completions are the receipts. */
  receipts?: ReceiptSource;
  /** Where the generator sends the writes: published to this broker; absent, the route. */
  door?: WriteDoor;
  /** Writes published to a broker get no cursor from it: each one's, as the service recorded it (null: not recorded), read after the drain. */
  cursorsOf?(writes: Writes): Promise<(number | null)[]>;
  setUpFanout(lists: ListLayout[]): Promise<MadeList[]>;
  outcomesPoller(webhookIds: string[]): OutcomesPoller;
  stop(): Promise<void>;
}

/** The service on its own dev server and database. */
export interface ServiceTarget extends Target {
  kind: 'service';
  mode: 'split' | 'single';
  metricsUrl: string;
  temporal: TemporalServer;
  /** The harness's own connection to the scenario's database. */
  sql: Sql;
  /** SECRET_KEYS of the scenario's service, for rows written straight into its database. */
  secrets: SecretBox;
  logFiles: { name: string; file: string }[];
  /** The API process's cpu.shares in a cgroup of its own (BENCH_API_CPU_SHARES), or null: none. */
  apiCpuShares: number | null;
  internal: <T = unknown>(method: string, route: string, body: unknown) => Promise<{ status: number; body: T }>;
  setUpFanout(lists: ListLayout[]): Promise<(MadeList & { accounts: Account[] })[]>;
}

export interface ScenarioInfo {
  id: string;
  kind: 'fanout' | 'hot' | 'registration' | 'recovery' | 'noisy-neighbour' | 'relay' | 'probes' | 'feed';
  mode: 'baseline' | 'floor' | 'floor-local' | 'split' | 'single';
  fanout?: number;
  title: string;
  /** A fan-out whose writes are published to this broker instead of sent to the route. */
  door?: WriteDoor['broker'];
}

/** A fan-out scenario: run.ts steps it through the rates. */
export interface FanoutScenario extends ScenarioInfo {
  kind: 'fanout';
  fanout: 1 | 10;
  start(ctx: Context, environment: Environment): Promise<Target>;
}

/** A scenario with a workload of its own, on the service. */
export interface WorkloadScenario extends ScenarioInfo {
  kind: 'hot' | 'registration' | 'recovery' | 'noisy-neighbour' | 'relay' | 'probes' | 'feed';
  mode: 'split' | 'single';
  start(ctx: Context, environment: Environment): Promise<ServiceTarget>;
  run(target: ServiceTarget, ctx: Context): Promise<Outcome>;
}

export type Scenario = FanoutScenario | WorkloadScenario;

/** CPU ms per second of each group with no load. */
export interface Idle {
  cpuMsPerSec: Record<string, number>;
  otherCores: number;
}

/** One step of load (lib/step.ts): the ledger's figures, and what was measured around them. */
export interface StepResult extends StepFigures {
  rate: number;
  /** The steady phase's end-to-end latencies, ms, where the step was asked to keep them (StepOptions.keepE2eSamples). */
  e2eSamplesMs?: number[];
  /** How long the step waited for the machine to calm down, and its busy cores outside the bench then. */
  quiet: { waitedMs: number; otherCores: number };
  warmupMs: number;
  steadyMs: number;
  drainMs: number;
  drained: boolean;
  cpu: Measured;
  cpuMsPerDelivery: {
    all: number;
    service: number;
    /** Net of the CPU the processes use with no load at all. */
    allNetOfIdle: number | null;
  };
  /** Deliveries/s the machine's cores could carry at this CPU cost, were nothing else running: robust to other load. */
  cpuCeilingPerSec: number;
  workerPeakRssMiB: number | null;
  lastFailureReceiptAt: number | null;
  sdk: SdkFigures | undefined;
  /** Largest event-loop delays of the harness's children during the step. */
  eventLoopDelay: { receivers: LoopDelay; generator: LoopDelay; baseline: LoopDelay | undefined };
  outsideLoad: { maxCores: number };
  /** TLS connections the receivers accepted during the step (new connections of the senders). */
  receiverTlsConnections: number;
  baselineMaxPostsInFlight: number | undefined;
  temporalLog: Pick<ServerLogScan, 'warnings' | 'errors' | 'byMessage'> | undefined;
  /** BENCH_TRACING=on: what the service exported (absent with tracing off, and in runs before the option). */
  traceExport?: TraceExport;
  pass: boolean;
  failures: string[];
  /** Earlier attempts of a repeated step. */
  discardedAttempts?: {
    outsideCores: number;
    failures: string[];
    acceptMs: Record<string, number | null>;
    e2eMs: Record<string, number | null>;
  }[];
}

/** What `split-hot` (scenarios/hot.ts) found: the hot webhook's count as its query and the database showed it. */
export interface HotSummary {
  rate: number;
  durationS: number;
  pattern: string;
  lastFailureAt: number | null;
  finalQueryCount: number | null;
  finalQueryStatus: string | null;
  queryLagMs: number | null;
  finalDatabaseCount: number | null;
  databaseLagMs: number | null;
  querySamples: number;
  queryErrors: number;
  queryErrorSample: string[];
  queryMs: Percentiles;
  reactivations: { t: number; status: number }[];
  maxCountSeen: number;
  signalsExpected: number;
  /** Runs of webhook/{id}, the signals and outcomes they received, failed workflow tasks. */
  history: {
    runs: number;
    signalsReceived: number;
    outcomesReceived: number;
    workflowTaskFailed: number;
    workflowTaskTimedOut: number;
    continuedAsNew: number;
    notCompletedListWrites: number | null;
    /**
     * How late outcomes were told: from the end of each attempt (its `endedAt`) to the signal
     * carrying it in the history; what OUTCOME_SETTLE_MS must cover. Absent before 0.8.0.
     */
    outcomeToldMs?: Percentiles;
    errors: string[];
  };
}

/** What `split-feed` (scenarios/feed.ts) found: pages of 100 of the event feed, read with a million items stored. */
export interface FeedSummary {
  /** Items in `feed_items` when the reads began, and the webhooks they are spread over. */
  stored: number;
  webhooks: number;
  /** How long storing them took. */
  seedS: number;
  reads: number;
  concurrency: number;
  /** Pages answered 200 with 100 items; the others by what they got. */
  pages: number;
  failures: Record<string, number>;
  latencyMs: Percentiles;
  /** The service's processes (PostgreSQL included), per page read. */
  cpuMsPerPage: number;
  cpu: Measured;
}

/** What the registration scenarios (scenarios/registration.ts) found. */
export interface RegistrationSummary {
  count: number;
  accounts: number;
  rate: number;
  created: number;
  statuses: Record<string, number>;
  stored: number;
  latencyMs: Percentiles;
  /**
   * The API's time for the token check and rate limit of each public request over the
   * scenario, p50 and p99 in ms, estimated from its histogram's buckets; null when the build
   * has none (absent in runs before it was measured).
   */
  authP50Ms?: number | null;
  authP99Ms?: number | null;
  /** A bare `SELECT 1` from the bench at the same pace over the same time, p50 and p99 in ms (absent in runs before it was measured). */
  pgRoundTripMs?: Percentiles;
  pings: { received: number; verified: number; badSignature: number; unverified: number };
  cpu: Measured;
  cpuMsPerRegistration: { all: number; service: number };
  workerPeakRssMiB: number | null;
}

/** What `split-recovery` (scenarios/recovery.ts) found: the recovery as the API and the receivers saw it, and the live deliveries beside it. */
export interface RecoverySummary extends Pick<Recovery, 'status' | 'stoppedReason' | 'total' | 'sent' | 'delivered' | 'failed'> {
  deliveries: number;
  rate: number;
  liveWritesPerSec: number;
  /** From the recovery's createdAt to its finishedAt, as the API answers them. */
  durationMs: number | null;
  /** What the rate allows: deliveries / rate. */
  expectedMs: number;
  /** From the first send received to the last. */
  receivedSpanMs: number | null;
  /** The most sends received in any one second. */
  mostInOneSecond: number;
  received: number;
  distinctReceived: number;
  duplicates: number;
  /** Attempts logged for the webhook during the scenario, less the live deliveries: the recovery's redeliveries. */
  redeliveriesLogged: number;
  live: { accepted: number; received: number; missing: number; duplicates: number; latencyMs: Percentiles };
  cpuMsPerSend: number;
  /** Other work on the machine before the recovery (cores busy outside the bench). */
  quiet: { waitedMs: number; otherCores: number };
  cpu: Measured;
}

/** One phase of `split-noisy-neighbour`: the quiet account's writes and reads, and what ran beside them. */
export interface NoisyNeighbourPhase {
  /**
   * Alone, beside the noisy list's writes, beside each flood of the public API, beside the busy
   * relay sessions. (`flood`: the one flood of results from before the three.)
   */
  name: 'alone' | 'noisy' | `flood-${FloodKind}` | 'flood' | 'relay';
  /** Other work on the machine before the phase (cores busy outside the bench). */
  otherWork: { waitedMs: number; otherCores: number };
  quietWrites: { scheduled: number; accepted: number };
  /** From each write's due time to the first receipt of its delivery. */
  quietE2eMs: Percentiles;
  quietAcceptMs: Percentiles;
  quietLedger: StepFigures['ledger'];
  /** The quiet account's own GET /v3/webhooks, open loop: from its due time to the answer. */
  quietReadMs: Percentiles;
  quietReadStatuses: Record<string, number>;
  /** After the last quiet write was answered, until its deliveries were in. */
  drainMs: number;
  drained: boolean;
  /** CPU of the system under test (API, workers, Temporal, PostgreSQL) over the phase and its drain. */
  serviceCpuMs: number;
  cpu: Measured;
  /** Over the phase's requests alone (`phaseMs` from the first due), without the drain: what the flood phases compare. */
  steadyCpu?: Measured;
}

/** How the flooding client stood for a client on another machine. */
export interface FloodClientSetup {
  /** Its CPU quota in a cpu cgroup of its own; null: uncapped, for `uncappedWhy`. */
  cpuCap: { cores: number } | null;
  uncappedWhy: string | null;
  /** Its network namespace (BENCH_FLOOD_NETNS=1); null: the loopback. */
  netns: { name: string; clientAddress: string; serviceAddress: string } | null;
}

/** A flood phase of `split-noisy-neighbour`: the flood, its client, what refusing it cost the service, and the quiet account beside it. */
export interface FloodFigures {
  kind: FloodKind;
  /** What each request was. */
  request: string;
  connections: number;
  /** BENCH_FLOOD_RATE: the requests a second the client was paced to; absent or null: closed loop, as fast as answered. */
  pacedPerSec?: number | null;
  /** Requests sent: answered, or ended unanswered (by cause, in `statuses`). */
  requests: number;
  perSec: number;
  statuses: Record<string, number>;
  /** Answers of status 400 or more. */
  refused: number;
  latencyMs: Percentiles;
  connectionsOpened: number;
  client: FloodClientSetup & {
    /** Its own CPU over the flood (process.cpuUsage), and per request. */
    cpuMs: number;
    cpuUsPerRequest: number | null;
    /** What the quota held back over the flood; null when uncapped. */
    throttling: Throttling | null;
  };
  /**
   * Over the flood's span (the phase's requests, without the drain): the system under test's
   * CPU and the API process's, the same of the `alone` phase scaled to the span, and the
   * difference per refused request.
   */
  serviceCpuMs: number;
  serviceAloneCpuMs: number;
  serviceCpuUsPerRefused: number | null;
  apiCpuMs: number;
  apiAloneCpuMs: number;
  apiCpuUsPerRefused: number | null;
  quietAcceptMs: Percentiles;
  quietE2eMs: Percentiles;
  /** The targets beside a flood: the quiet account's end-to-end and accept p99, and the flood's rate. */
  met: { e2eP99: boolean; acceptP99: boolean; perSec: boolean };
}

/** What `split-noisy-neighbour` (scenarios/noisy-neighbour.ts) found: the quiet account's latency in each phase, the noisy list's ledger, the flood's answers. */
export interface NoisyNeighbourSummary {
  quietWritesPerSec: number;
  quietReadsPerSec: number;
  noisyDeliveriesPerWrite: number;
  noisyEveryMs: number;
  noisyWebhooks: number;
  noisyAccounts: number;
  phaseMs: number;
  /** The one flood of results from before the three (its connections, its answers). */
  floodConnections?: number;
  setUpMs: number;
  quietAloneE2eP50Ms: number | null;
  quietAloneE2eP99Ms: number | null;
  quietAloneE2eMaxMs: number | null;
  /** Beside the noisy list. */
  quietE2eP50Ms: number | null;
  quietE2eP99Ms: number | null;
  quietE2eMaxMs: number | null;
  noisyWritesAccepted: number;
  noisyDeliveriesExpected: number;
  noisyDelivered: number;
  noisyFailed: number;
  noisyDuplicates: number;
  noisyMissing: number;
  noisyLedger: StepFigures['ledger'];
  /** Per noisy write: from the first receipt of its deliveries to the last. */
  noisyWriteSpanMs: Percentiles;
  /** Per noisy write: from its due time to the last receipt of its deliveries. */
  noisyWriteToLastMs: Percentiles;
  /** Noisy deliveries received per second, from the first noisy write's due time to the last receipt. */
  noisyDeliveriesPerSec: number | null;
  /** After the noisy phase, until the noisy list's deliveries were in. */
  noisyDrainMs: number;
  noisyDrained: boolean;
  flood?: { requests: number; perSec: number; statuses: Record<string, number>; latencyMs: Percentiles };
  /** The flood phases (absent from results of before them). */
  floods?: FloodFigures[];
  /** What `met` of each flood judges: the quiet account's end-to-end and accept p99 below these, the flood's rate at least `minPerSec`. */
  floodTargets?: { e2eP99Ms: number; acceptP99Ms: number; minPerSec: number };
  /** The API process's cpu.shares in a cgroup of its own (BENCH_API_CPU_SHARES); null: none. */
  apiCpuShares?: number | null;
  /** Beside the busy relay sessions (absent from results of before that phase). */
  quietRelayE2eP50Ms?: number | null;
  quietRelayE2eP99Ms?: number | null;
  quietRelayE2eMaxMs?: number | null;
  relay?: BusyRelays;
  phases: NoisyNeighbourPhase[];
  /** The phases and the drains. */
  cpu: Measured;
}

/** The relay sessions of `split-noisy-neighbour`'s relay phase and what they were handed. */
export interface BusyRelays {
  sessions: number;
  writesPerSec: number;
  writesScheduled: number;
  writesAccepted: number;
  /** Accepted writes × sessions: a delivery of each write to each session. */
  expected: number;
  /** (session, write) pairs received by the session's local server. */
  received: number;
  /** Logged as failed and never received. */
  failed: number;
  missing: number;
  /** (session, write) pairs received more than once. */
  duplicates: number;
  /** Relayed deliveries whose signature did not verify with their session's secret. */
  badSignatures: number;
  /** Received per second, over the phase. */
  perSec: number;
  /** From each write's due time to the first receipt of its delivery at each session's local server. */
  latencyMs: Percentiles;
  /** After the phase and the quiet account's drain, until the relayed deliveries were in. */
  drainMs: number;
  drained: boolean;
}

/**
 * What `split-relay` (scenarios/relay.ts) found: each write's time from its send to its
 * delivery at the receivers (a direct webhook) and, forwarded by `svc-webhooks listen`, at a
 * local server of the bench (a relay session), by cursor.
 */
export interface RelaySummary {
  writes: number;
  rate: number;
  accepted: number;
  /** From each write's send to the first receipt of its direct delivery. */
  directMs: Percentiles;
  /** From each write's send to the first receipt of its relayed delivery at the local server. */
  relayMs: Percentiles;
  /** The relay's p50 less the direct p50: what the relay adds. */
  addedP50Ms: number | null;
  /** Per write received on both sides, relayed less direct. */
  pairedAddedMs: Percentiles;
  directMissing: number;
  relayMissing: number;
  /** Writes received more than once, on either side. */
  duplicates: { direct: number; relay: number };
  /** Relayed deliveries whose signature did not verify with the session's secret. */
  relayBadSignatures: number;
  /** Other work on the machine before the writes (cores busy outside the bench). */
  quiet: { waitedMs: number; otherCores: number };
  /** The writes and the wait for their deliveries. */
  cpu: Measured;
}

/**
 * One phase of `split-probes`: the quiet account's writes, with the paused webhooks probing or
 * without, figured as a phase of `split-noisy-neighbour` is (its CPU: the step's warm-up,
 * writes and drain).
 */
export interface ProbesPhase extends Pick<
  NoisyNeighbourPhase,
  'otherWork' | 'quietWrites' | 'quietE2eMs' | 'quietAcceptMs' | 'quietLedger' | 'drained' | 'serviceCpuMs' | 'cpu'
> {
  round: number;
  /** The worker's SDK metrics over the phase: its workflow tasks, local activities and sticky cache hits and misses. */
  sdk: SdkFigures | undefined;
  /** With the probes; or without them: their workflows terminated, the webhooks' own `webhook/{id}` still running. */
  probing: boolean;
  /** The most cores busy outside the bench in any second of the phase. */
  outsideMaxCores: number;
  /** Every steady write's end-to-end latency, ms, for the rounds' latencies pooled (ProbesSummary.pooled). */
  quietE2eSamplesMs: number[];
}

/** The probes of one round, due within its phase with the probes, as the receivers saw them. */
export interface ProbesDrift {
  /** Probes due within the phase (its warm-up, writes and drain). */
  due: number;
  /** Of those, received before their workflows were terminated (one interval after the phase, at the least). */
  received: number;
  /** Received before their due time (none should be). */
  early: number;
  /** Arrival less due time, in percent of the probe's interval; a probe not received counts as late until the stop. */
  driftPercent: Percentiles;
  /** Arrival less due time, ms (the same). */
  lateMs: Percentiles;
  /** Probes received per second over the phase. */
  perSec: number;
  /** Probes of the round whose signature or webhook did not check out. */
  badSignatures: number;
}

/** One round of `split-probes`: the paused webhooks handed to their probe workflows, a phase with their probes, then one without. */
export interface ProbesRound {
  round: number;
  /** From the first pause handed to `probes/{taskQueue}/{shard}` to the last. */
  startMs: number;
  /** Pauses handed over (one per paused webhook). */
  probing: number;
  /** From the first start to the first probe due, when the phase with the probes begins. */
  leadMs: number;
  /** The quiet account's end-to-end p99 with the probes over its p99 in the phase without them before, and after. */
  p99RatioBefore: number | null;
  p99RatioAfter: number | null;
  /** ... and over the mean of those two p99s: the figure against the target. */
  p99Ratio: number | null;
  /**
   * The API's CPU with the probes over the mean of the phases before and after. The API does the
   * same work in every phase (the quiet account's writes) and none for the probes, so a ratio
   * away from 1 is the machine's own speed moving between the phases.
   */
  apiCpuRatio: number | null;
  /** p99Ratio with each phase's p99 taken per CPU-second of the API in it (the machine's speed taken out). */
  p99RatioPerApiCpu: number | null;
  /**
   * The service's CPU a second with the probes less without (the mean of the phases before and
   * after), over the probes received a second: what a probe costs the API, the worker, Temporal
   * and PostgreSQL together, ms.
   */
  serviceCpuMsPerProbe: number | null;
  drift: ProbesDrift;
  /** Terminating the probe workflows (one per shard). */
  stopMs: number;
  /** Then until the service was calm (under a quarter of a core two seconds running), before the phase without the probes. */
  calmMs: number;
  /** Probes received during the phase without them (in flight as their workflows ended). */
  strayProbes: number;
}

/** The quiet account's end-to-end latencies, all the phases of one kind together (lib/probe-ratios.ts). */
export interface PooledProbes {
  withProbes: Percentiles;
  without: Percentiles;
  /** p99 with the probes over p99 without them. */
  p99Ratio: number | null;
}

/** What `split-probes` (scenarios/probes.ts) found: the quiet account with the probes and without, the probes' drift, per round. */
export interface ProbesSummary {
  webhooks: number;
  accounts: number;
  /** PROBE_INTERVALS, and the plan the bench reads from it as the service does. */
  intervals: string;
  intervalsMs: number[];
  quietWritesPerSec: number;
  phaseMs: number;
  /** Seeding the paused webhooks' rows. */
  seedMs: number;
  targets: { p99Ratio: number; driftPercent: number };
  /**
   * The quiet account's phases in the order run: round 0 without probes before any `webhook/{id}`
   * of the paused webhooks ran; then per round one with the probes and one without.
   */
  phases: ProbesPhase[];
  rounds: ProbesRound[];
  /**
   * The quiet account's latencies of every phase with the probes together against those of every
   * phase without them (the one before the first round included): one p99 each from all the
   * rounds' writes, beside the rounds' own ratios.
   */
  pooled: PooledProbes;
  /** The whole scenario after the set-up. */
  cpu: Measured;
}

/** What a scenario's workload found. */
export interface Outcome {
  steps: StepResult[];
  /** The highest passing rate (fan-out scenarios). */
  knee: number | null;
  idle?: Idle;
  logs?: LogScan;
  hot?: HotSummary;
  registration?: RegistrationSummary;
  recovery?: RecoverySummary;
  noisyNeighbour?: NoisyNeighbourSummary;
  relay?: RelaySummary;
  probes?: ProbesSummary;
  feed?: FeedSummary;
}

/** A scenario in the results: its outcome, or the error that ended it. */
export type ScenarioResult = ScenarioInfo &
  Partial<Outcome> & {
    error?: string;
    temporalLog?: ServerLogScan;
    groups?: string[];
    durationS?: number;
  };

/** The results JSON (older runs may lack newer fields: the report reads them with care). */
export interface Report {
  version: number;
  startedAt: string;
  finishedAt: string;
  config: Config;
  environment: Environment;
  harnessCpuMs: number;
  /** The receivers' side of BENCH_RECEIVER_AUTH over the run (absent from older reports). */
  receiverAuth?: { mode: ReceiverAuthMode; tokensIssued: number; unauthorized: number };
  scenarios: ScenarioResult[];
}

export type { Measured, Percentiles };
