#!/usr/bin/env node
// `npm run bench`: delivery throughput and latency of the service against a plain-Node
// fan-out baseline, on this machine, in one run. See docs/performance.md.
// Runs compiled: `npm run build && node dist/scripts/bench/run.js` (what `npm run bench` does).
//
//   BENCH_QUICK=1        ~3 s steps and smaller scenarios (a smoke run)
//   BENCH_SCENARIOS=a,b  only the scenarios whose id contains one of these
//   BENCH_RATES=25,50    the write rates stepped through (writes/s); default 1, 2, 5, 10, then
//                        steps of at most 1.25× up to 891
//   BENCH_KEEP=1         keep the run directory (logs of every process) under the OS temp dir
//   BENCH_DATABASE_URL=postgres://…  run against this PostgreSQL server (default: an embedded
//                        one with its data in /dev/shm, see lib/stack.ts)
//   BENCH_TEMPORAL_ADDRESS=host:7233  run against this Temporal server (namespace default, the
//                        search attributes registered, as scripts/temporal-server.sh makes it)
//                        instead of a dev server per scenario; BENCH_TEMPORAL_PID=<pid> measures
//                        its CPU too
//   BENCH_WORKERS=N      worker processes of the split layout (default 1)
//   BENCH_BULK_WORKERS=N worker processes of the bulk task queue alone, at nice 10 (default 0)
//   BENCH_SERVICE_ROOT=/path  start the service's processes (and its `svc-webhooks listen`)
//                        from that checkout's dist (built there), e.g. a worktree of an older
//                        release; the bench, its clients, the dev server and PostgreSQL stay this one's
//   BENCH_API_CPU_SHARES=N  the API process in a cpu cgroup of its own with cpu.shares N, the
//                        workers at the default 1024 (root and cgroup v1, or logged and skipped)
//   BENCH_FLOOD_CPU=0.5  split-noisy-neighbour: the flooding client's CPU quota in cores, in a
//                        cpu cgroup of its own (root and cgroup v1; else uncapped, flagged)
//   BENCH_FLOOD_RATE=5000 split-noisy-neighbour: the flood paced to this many requests a second in
//                        all (default: closed loop, each connection as fast as it is answered)
//   BENCH_FLOOD_NETNS=1  the flooding client in a network namespace of its own, reaching the
//                        service over a veth pair (root and iproute2)
//   BENCH_SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
//                        extra Node arguments for the service's processes (to profile them)
//   BENCH_QUIET_WAIT_S=N longest wait before each step for other work on the machine to calm
//                        down (default 30, quick 10)
//   BENCH_TRACING=on     the service's processes export every trace by OTLP/HTTP to a sink of the
//                        bench's (trace-sink.ts), TRACE_RECEIVERS=on; its CPU is reported apart
//   BENCH_NATS_URL, BENCH_AMQP_URL  the brokers of split-nats-fanout10 and split-amqp-fanout10
//                        (default: the machine's, nats://127.0.0.1:4222 and
//                        amqp://guest:guest@127.0.0.1:5672), each scenario on a stream or queue of
//                        its own, deleted after it; the broker's processes count as the group `broker`
//   BENCH_RECEIVER_AUTH=headers|oauth2  the service's fan-out webhooks carry an X-Api-Key header,
//                        or OAuth2 client credentials of the receivers' own token endpoint, and the
//                        receivers require it (401 without); default none (lib/receiver-auth.ts)
//   BENCH_PROBE_INTERVALS=20s, BENCH_PROBE_WEBHOOKS=10000, BENCH_PROBE_ROUNDS=1, BENCH_PROBE_PHASE_S=60
//                        split-probes (the defaults): PROBE_INTERVALS of the paused webhooks, how
//                        many, the rounds of a phase with their probes and one without, and how
//                        long a phase writes
//
// The scenarios are in scenarios/ (one module per family), the figures of a step in
// lib/step.ts; this file steps the fan-out scenarios through the rates, judges their knee and
// writes the results (report.ts) to scripts/bench/results/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { type GeneratorApi } from './generator';
import { type ReceiversApi } from './receivers';
import { forkChild } from './lib/children';
import { CONFIG, QUICK, RESULTS_DIR, SERVICE_DIST, SERVICE_ROOT, ROOT, log } from './lib/config';
import { describeEnvironment } from './lib/environment';
import { rpcClient } from './lib/ipc';
import { launch } from './lib/launcher';
import { scanLogs, scanServerLog, serverLogOffset } from './lib/logs';
import { ProcessSampler } from './lib/proc';
import { AUTHED_PATH } from './lib/receiver-auth';
import * as stack from './lib/stack';
import { measureIdle, runStep } from './lib/step';
import { round } from './lib/stats';
import { startTraceSink } from './lib/tracing';
import {
  type Context,
  type Environment,
  type FanoutScenario,
  type Outcome,
  type Report,
  type Scenario,
  type ScenarioInfo,
  type ScenarioResult,
  type ServiceTarget,
  type StepResult,
  type Target,
} from './lib/types';
import { writeReports } from './report';
import * as baseline from './scenarios/baseline';
import * as feed from './scenarios/feed';
import * as brokers from './scenarios/brokers';
import * as floor from './scenarios/floor';
import * as hot from './scenarios/hot';
import * as noisyNeighbour from './scenarios/noisy-neighbour';
import * as probes from './scenarios/probes';
import * as recovery from './scenarios/recovery';
import * as registration from './scenarios/registration';
import * as relay from './scenarios/relay';
import * as service from './scenarios/service';
import { createTestCa, issueServerCert } from '../lib/tls';

const SCENARIOS: Scenario[] = [
  ...baseline.scenarios,
  ...floor.scenarios,
  ...service.scenarios,
  ...brokers.scenarios,
  ...hot.scenarios,
  ...registration.scenarios,
  ...recovery.scenarios,
  ...noisyNeighbour.scenarios,
  ...relay.scenarios,
  ...probes.scenarios,
  ...feed.scenarios,
];

async function main(): Promise<void> {
  const startedAt = new Date();
  if (!fs.existsSync(path.join(SERVICE_DIST, 'src/main.js')))
    throw new Error(`${path.join(SERVICE_DIST, 'src/main.js')} is missing: run \`npm run build\` there first (npm run bench does here)`);
  const wanted = process.env.BENCH_SCENARIOS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const scenarios = SCENARIOS.filter((s) => !wanted || wanted.some((w) => s.id.includes(w)));
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-bench-'));
  if (process.env.BENCH_KEEP !== '1') stack.onStop('run directory', () => fs.rmSync(runDir, { recursive: true, force: true }));
  log(
    `${QUICK ? 'quick' : 'full'} run${CONFIG.tracing ? ', tracing on' : ''}: ${scenarios.map((s) => s.id).join(', ')}; files in ${runDir}`,
  );
  if (SERVICE_ROOT !== ROOT) log(`the service from ${SERVICE_ROOT}, the bench from ${ROOT}`);

  const sampler = new ProcessSampler(250);
  sampler.addGroup('harness', () => [process.pid]);
  sampler.start();
  stack.onStop('sampler', () => sampler.stop());

  const { leaf, caFile } = await makeCertificates(runDir);
  const receiversChild = forkChild('receivers', 'receivers.js', {});
  const receivers = rpcClient<ReceiversApi>(receiversChild);
  const { ports, webhookAuth } = await receivers('start', {
    count: CONFIG.receivers,
    cert: leaf.cert,
    key: leaf.key,
    auth: CONFIG.receiverAuth,
  });
  sampler.addGroup('receivers', () => [receiversChild.pid!]);
  const generatorChild = forkChild('generator', 'generator.js', {});
  const generator = rpcClient<GeneratorApi>(generatorChild);
  sampler.addGroup('generator', () => [generatorChild.pid!]);
  const traceSink = CONFIG.tracing ? await startTraceSink(sampler) : null;

  const database = await stack.openDatabaseServer(runDir);
  stack.onStop('database admin connection', () => database.admin.end({ timeout: 5 }));

  const ctx: Context = { sampler, receivers, generator, ports, webhookAuth, caFile, runDir, database, traceSink };
  const environment: Environment = await describeEnvironment(database);
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    if (exiting) return;
    log(`== ${scenario.id}: ${scenario.title}`);
    try {
      results.push(await runScenario(scenario, ctx, environment));
    } catch (error) {
      if (exiting) return;
      console.error(error);
      results.push({ ...info(scenario), error: error instanceof Error ? error.message : String(error) });
    }
  }

  if (exiting) return; // interrupted: no partial results
  const { tokensIssued, unauthorized } = await receivers('counts');
  const report: Report = {
    version: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    config: CONFIG,
    environment,
    harnessCpuMs: Math.round(sampler.cpuMs().harness ?? 0),
    receiverAuth: { mode: CONFIG.receiverAuth, tokensIssued, unauthorized },
    scenarios: results,
  };
  const files = await writeReports(report, RESULTS_DIR);
  console.log(`\n${files.markdown}\n`);
  log(`wrote ${files.paths.join(', ')}`);
}

/**
 * Certificates: a CA made now (scripts/lib/tls.ts, shared with the tests), trusted by the service and the
 * baseline through NODE_EXTRA_CA_CERTS, and the receivers' certificate for 127.0.0.1.
 */
async function makeCertificates(runDir: string) {
  const ca = await createTestCa();
  const leaf = await issueServerCert(ca, ['127.0.0.1', 'localhost']);
  const caFile = path.join(runDir, 'ca.pem');
  fs.writeFileSync(caFile, ca.cert);
  return { leaf, caFile };
}

/** The scenario as the results name it (its behaviour left out). */
function info(s: Scenario): ScenarioInfo {
  return { id: s.id, kind: s.kind, mode: s.mode, fanout: s.fanout, title: s.title, ...(s.door ? { door: s.door } : {}) };
}

async function runScenario(scenario: Scenario, ctx: Context, environment: Environment): Promise<ScenarioResult> {
  const started = Date.now();
  const logOffset = serverLogOffset();
  const target = await scenario.start(ctx, environment);
  try {
    const result = scenario.kind === 'fanout' ? await runFanout(scenario, target, ctx) : await scenario.run(target as ServiceTarget, ctx);
    const temporalLog = scenario.mode === 'baseline' ? undefined : scanServerLog(logOffset);
    return { ...info(scenario), ...result, temporalLog, groups: target.groups, durationS: Math.round((Date.now() - started) / 1000) };
  } finally {
    await target.stop();
  }
}

/**
 * Fan-out N: with N = 10, one list whose 10 webhooks (owner 5, a member 5) each subscribe to
 * list.changed, each on its own receiver; with N = 1, 10 lists of 10 accounts, each with one
 * webhook, writes spread round-robin over them. Steps through the rates until a step fails
 * (repeating a failed one, see CONFIG); the knee is the last step that passed.
 */
async function runFanout(scenario: FanoutScenario, target: Target, ctx: Context): Promise<Outcome> {
  const tag = randomBytes(3).toString('hex');
  // The service alone presents a credential (BENCH_RECEIVER_AUTH); the baseline and the floor send none.
  const auth = target.kind === 'service' ? (ctx.webhookAuth ?? undefined) : undefined;
  const webhook = (port: number, k: number) => ({ url: `https://127.0.0.1:${port}${auth ? AUTHED_PATH : '/'}fanout/${tag}/${k}`, auth });
  const layout =
    scenario.fanout === 10
      ? [{ listId: `bench-${tag}-0`, webhooks: ctx.ports.map(webhook) }]
      : ctx.ports.map((port, k) => ({ listId: `bench-${tag}-${k}`, webhooks: [webhook(port, k)] }));
  const made = await target.setUpFanout(layout);
  const recipients = new Map(made.map((l) => [l.listId, l.webhookIds.map((webhookId) => ({ webhookId, topic: 'list.changed' }))]));
  const lists = made.map((l) => l.listId);
  const webhookIds = made.flatMap((l) => l.webhookIds);
  await ctx.receivers('take'); // forget the setup's receipts
  const idle = await measureIdle(ctx, target);

  const steps: StepResult[] = [];
  for (const rate of CONFIG.rates) {
    const discarded: NonNullable<StepResult['discardedAttempts']> = [];
    let step: StepResult;
    for (let attempt = 0; ; attempt++) {
      step = await runStep({ rate, lists, recipients, webhookIds, target, ctx, prefix: `${tag}-r${rate}-a${attempt}`, idle });
      const outside = round(step.cpu.unattributedMs / step.cpu.wallMs, 2);
      const disturbed = outside >= CONFIG.contentionLimitCores || step.outsideLoad.maxCores >= 1;
      const mayRepeat = attempt < CONFIG.retries && (disturbed || attempt < CONFIG.repeatsOfFailedStep);
      if (step.pass || !step.drained || !mayRepeat) break;
      const why = disturbed
        ? `while other work used ${outside} cores on average, ${step.outsideLoad.maxCores} at most over a second`
        : 'once';
      log(`${scenario.id} ${rate}/s failed (${step.failures.join('; ')}) ${why}: repeating the step`);
      discarded.push({ outsideCores: outside, failures: step.failures, acceptMs: step.acceptMs, e2eMs: step.e2eMs });
    }
    step.discardedAttempts = discarded;
    steps.push(step);
    const { ledger } = step;
    const skipped = ledger.skipped ? `${ledger.skipped} skipped while paused + ` : '';
    log(
      `${scenario.id} ${rate}/s: accepted ${step.acceptedPerSec}/s, deliveries ${step.deliveriesPerSec}/s, ` +
        `accept p99 ${step.acceptMs.p99} ms, e2e p50/p99 ${step.e2eMs.p50}/${step.e2eMs.p99} ms, ` +
        `ledger ${ledger.balanced ? 'balanced' : 'NOT balanced'} ` +
        `(sent ${ledger.sent} = ${ledger.delivered} delivered + ${ledger.failedRecorded} failed + ${skipped}` +
        `${ledger.missing} missing; ${ledger.duplicates} dup), ` +
        `${step.cpuMsPerDelivery.all} CPU-ms/delivery -> ${step.pass ? 'pass' : `FAIL (${step.failures.join('; ')})`}`,
    );
    if (!ledger.balanced) {
      for (const m of ledger.missingSample) log(`  missing ${m.key}: ${m.why}`);
      for (const d of ledger.duplicateSample) log(`  duplicate ${d.key}: received ${d.received}, recorded ${d.recorded}`);
      for (const u of ledger.unexpectedSample) log(`  unexpected ${u}`);
    }
    if (!step.pass) break;
    await stack.sleep(1000);
  }
  const passing = steps.filter((s) => s.pass);
  const knee = passing.length ? passing[passing.length - 1] : null;
  return { steps, knee: knee ? knee.rate : null, idle, logs: target.logFiles ? scanLogs(target.logFiles) : undefined };
}

// ---------------------------------------------------------------------------------------

let exiting = false;
async function shutdown(code: number): Promise<void> {
  if (exiting) return;
  exiting = true;
  await stack.stopAll();
  process.exit(code);
}

if (process.env.BENCH_CHILD !== '1') {
  launch(__filename);
} else {
  process.on('SIGINT', () => {
    console.error('\nbench: interrupted, stopping everything it started...');
    void shutdown(130);
  });
  process.on('SIGTERM', () => void shutdown(143));
  main().then(
    () => shutdown(0),
    (error: unknown) => {
      console.error('bench failed:', error);
      void shutdown(1);
    },
  );
}
