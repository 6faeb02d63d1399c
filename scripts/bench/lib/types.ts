// The shapes the harness passes between run.ts, the scenarios and the report.
import { type Sql } from 'postgres';
import { type GeneratorApi } from '../generator';
import { type ReceiversApi } from '../receivers';
import { type Config } from './config';
import { type DescribedEnvironment } from './environment';
import { type Rpc, type LoopDelay } from './ipc';
import { type Receipts, type Recorded } from './ledger';
import { type LogScan, type ServerLogScan } from './logs';
import { type Measured, type ProcessSampler } from './proc';
import { type DatabaseServer, type TemporalServer } from './stack';
import { type StepResult } from './step';
import { type Percentiles } from './stats';
import { type HotSummary } from '../scenarios/hot';
import { type RecoverySummary } from '../scenarios/recovery';
import { type RegistrationSummary } from '../scenarios/registration';

/** What every scenario shares: the sampler, the receivers and the generator, the database server. */
export interface Context {
  sampler: ProcessSampler;
  receivers: Rpc<ReceiversApi>;
  generator: Rpc<GeneratorApi>;
  ports: number[];
  caFile: string;
  runDir: string;
  database: DatabaseServer;
}

/** The run's environment, described once, with the Temporal server of the last scenario that started one. */
export type Environment = DescribedEnvironment & { temporalServer?: { cmdline: string } };

/** A list the harness writes to, and the webhooks (one per receiver URL) that get its writes. */
export interface ListLayout {
  listId: string;
  webhooks: { url: string }[];
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
  logFiles: { name: string; file: string }[];
  internal: <T = unknown>(method: string, route: string, body: unknown) => Promise<{ status: number; body: T }>;
  setUpFanout(lists: ListLayout[]): Promise<(MadeList & { accounts: Account[] })[]>;
}

export interface ScenarioInfo {
  id: string;
  kind: 'fanout' | 'hot' | 'registration' | 'recovery';
  mode: 'baseline' | 'floor' | 'floor-local' | 'split' | 'single';
  fanout?: number;
  title: string;
}

/** A fan-out scenario: run.ts steps it through the rates. */
export interface FanoutScenario extends ScenarioInfo {
  kind: 'fanout';
  fanout: 1 | 10;
  start(ctx: Context, environment: Environment): Promise<Target>;
}

/** A scenario with a workload of its own, on the service. */
export interface WorkloadScenario extends ScenarioInfo {
  kind: 'hot' | 'registration' | 'recovery';
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
  scenarios: ScenarioResult[];
}

export type { Measured, Percentiles };
