// Writes a run's results: <stamp>.json (everything), <stamp>.md (the tables) and, when the run
// stepped a fan-out scenario through rates, <stamp>.png (end-to-end latency against offered
// load; drawn as SVG, rendered with @resvg/resvg-js).
import fs from 'node:fs';
import path from 'node:path';
import { type Report, type ScenarioResult, type StepResult } from './lib/types';
import { type LogScan } from './lib/logs';
import { type Percentiles } from './lib/stats';

const GROUP_ORDER = ['api', 'worker', 'service', 'baseline', 'floor', 'temporal', 'postgres', 'receivers', 'generator', 'flood'];

export async function writeReports(report: Report, outDir: string): Promise<{ markdown: string; paths: string[] }> {
  fs.mkdirSync(outDir, { recursive: true });
  const stamp = report.startedAt.slice(0, 16).replace(':', '-') + (report.config.quick ? '-quick' : '');
  const jsonPath = path.join(outDir, `${stamp}.json`);
  const mdPath = path.join(outDir, `${stamp}.md`);
  const pngPath = path.join(outDir, `${stamp}.png`);
  const svgPath = path.join(outDir, `${stamp}.svg`);
  fs.writeFileSync(jsonPath, `${JSON.stringify(report, null, 1)}\n`);
  const paths = [jsonPath, mdPath];
  let image: string | null = null;
  // A run of other scenarios alone (registration, recovery, noisy neighbour) has no curve to draw.
  if (chartedScenarios(report).length) {
    const svg = chart(report);
    image = path.basename(pngPath);
    try {
      const { Resvg } = await import('@resvg/resvg-js');
      const png = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, background: 'white' })
        .render()
        .asPng();
      fs.writeFileSync(pngPath, png);
      paths.push(pngPath);
    } catch (error) {
      // No renderer (an install without devDependencies): keep the SVG.
      fs.writeFileSync(svgPath, svg);
      paths.push(svgPath);
      image = path.basename(svgPath);
      console.error(`bench: PNG not rendered (${error instanceof Error ? error.message : String(error)}); wrote ${svgPath}`);
    }
  }
  const markdown = renderMarkdown(report, image);
  fs.writeFileSync(mdPath, markdown);
  return { markdown, paths };
}

const num = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined || Number.isNaN(v) ? '–' : String(Math.round(v * 10 ** digits) / 10 ** digits);
const ratio = (a: number | null | undefined, b: number | null | undefined): string =>
  a && b ? `${num(a / b, a / b < 0.1 ? 3 : 2)}×` : '–';

/** A row of a table: the cells, each between bars. */
const row = (...cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
/** Percentiles as `p50 / p99` (or with p99.9). */
const p50p99 = (p: Percentiles): string => `${num(p.p50)} / ${num(p.p99)}`;
const p50p99p999 = (p: Percentiles): string => `${p50p99(p)} / ${num(p.p99_9)}`;

/** A section of the report: its heading, then the header of its table. */
function pushTable(out: string[], title: string, columns: string[]): void {
  out.push(`## ${title}`, '', row(...columns), `|${columns.map(() => '---|').join('')}`);
}

/** The step a scenario is summed up by: its knee (null when it has none). */
function kneeStep(s: ScenarioResult): StepResult | null {
  if (!s.steps?.length) return null;
  return s.steps.find((st) => st.rate === s.knee) ?? null;
}

/** A step's ratios to the baseline: its latencies to the baseline step `latencies`, its throughput and CPU to `cpu`. */
function versusBaseline(st: StepResult, { latencies, cpu }: { latencies: StepResult; cpu: StepResult }): string[] {
  return [
    `${ratio(st.deliveriesPerSec, cpu.deliveriesPerSec)} (${num(st.deliveriesPerSec)} vs ${num(cpu.deliveriesPerSec)})`,
    ratio(st.acceptMs.p99, latencies.acceptMs.p99),
    ratio(st.e2eMs.p50, latencies.e2eMs.p50),
    ratio(st.e2eMs.p99, latencies.e2eMs.p99),
    ratio(st.cpuMsPerDelivery.all, cpu.cpuMsPerDelivery.all),
    `${ratio(st.cpuCeilingPerSec, cpu.cpuCeilingPerSec)} (${num(st.cpuCeilingPerSec, 0)} vs ${num(cpu.cpuCeilingPerSec, 0)})`,
  ];
}

export function renderMarkdown(report: Report, image: string | null): string {
  const { config: c, environment: e } = report;
  const out: string[] = [];
  out.push(`# Benchmark ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC (${c.quick ? 'quick: BENCH_QUICK=1' : 'full'})`);
  out.push('');
  out.push(
    [
      `${e.cpu}, ${e.cores} cores, ${e.memoryGiB} GiB`,
      `Node ${e.node}`,
      `Temporal SDK ${e.temporalSdk}, ${e.temporalCli}`,
      String(e.postgres).split(' on ')[0],
      `commit ${e.git.commit?.slice(0, 10) ?? '?'}${e.git.dirty ? ' (uncommitted changes)' : ''}`,
      `load average at start ${e.loadAverageAtStart.join(' ')}.`,
    ].join('; '),
  );
  if (e.postgresCommitMs) {
    const p = e.postgresCommitMs;
    out.push(
      'PostgreSQL commit latency on this machine ' +
        '(one small transaction every 50 ms, idle, before the scenarios; every accepted write waits for one): ' +
        `p50 ${num(p.p50)} ms, p99 ${num(p.p99)} ms, max ${num(p.max)} ms; ${p.over50} of ${p.commits} over 50 ms.`,
    );
  }
  out.push(
    [
      'Open loop: writes due at fixed times t0, every latency from t0.',
      `Steps of ${c.warmupMs / 1000} s warm-up + ${c.steadyMs / 1000} s steady (the figures) + drain (at most ${c.drainMs / 1000} s).`,
      `Knee: the highest step with end-to-end p99 < ${c.criteria.e2eP99Ms} ms, accept p99 < ${c.criteria.acceptP99Ms} ms,` +
        ' every write accepted and a balanced ledger; stepping stops at the first step that fails.',
      `A failed step is run ${c.repeatsOfFailedStep ?? 0} more time(s) and the last attempt counts` +
        ' (single stalls of the disk fail steps at random); the steps table says so.',
    ].join(' '),
  );
  out.push('');
  pushTable(out, 'At the knee', [
    'scenario',
    'knee (writes/s offered)',
    'accepted writes/s',
    'deliveries/s',
    'accept p50 / p99 ms',
    'end-to-end p50 / p99 / p99.9 ms',
    'CPU-ms per delivery, service / all processes',
    'CPU ceiling deliveries/s',
    'worker peak RSS MiB',
  ]);
  const fanouts = report.scenarios.filter((s) => s.kind === 'fanout');
  for (const s of fanouts) {
    if (s.error) {
      out.push(`| ${s.id} | error: ${s.error.split('\n')[0]} | | | | | | | |`);
      continue;
    }
    const k = kneeStep(s);
    const top =
      s.steps!.length && s.steps!.every((st) => st.pass) && s.knee === c.rates[c.rates.length - 1]
        ? ' (highest step: limit not reached)'
        : '';
    // The figures of the knee, else of the first step, marked as failed.
    const figures = (st: StepResult) => [
      num(st.acceptedPerSec),
      num(st.deliveriesPerSec),
      p50p99(st.acceptMs),
      p50p99p999(st.e2eMs),
      `${num(st.cpuMsPerDelivery.service, 2)} / ${num(st.cpuMsPerDelivery.all, 2)}`,
      num(st.cpuCeilingPerSec, 0),
      num(st.workerPeakRssMiB, 0),
    ];
    if (!k) {
      const first = s.steps![0];
      out.push(
        first
          ? row(s.id, `none: ${first.rate}/s failed (${first.failures.join('; ')})`, ...figures(first))
          : `| ${s.id} | no step | | | | | | | |`,
      );
      continue;
    }
    out.push(row(s.id, `${k.rate}${top}`, ...figures(k)));
  }
  const registrations = report.scenarios.filter((s) => s.kind === 'registration');
  for (const s of registrations) {
    if (s.error || !s.registration) continue;
    const r = s.registration;
    out.push(
      `| ${s.id} | ${r.created}/${r.count} at ${r.rate}/s | | | registration p50 / p99: ${p50p99(r.latencyMs)} | | ` +
        `${num(r.cpuMsPerRegistration.service, 1)} / ${num(r.cpuMsPerRegistration.all, 1)} per registration | | ` +
        `${num(r.workerPeakRssMiB, 0)} |`,
    );
  }
  out.push('');

  // Ratios to the baseline of the same fan-out, each at its own knee.
  const baselines = new Map(fanouts.filter((s) => s.mode === 'baseline').map((s) => [s.fanout, kneeStep(s)]));
  const ratios = fanouts.filter((s) => s.mode !== 'baseline' && !s.error);
  if (ratios.length) {
    pushTable(out, 'Ratio to the plain-Node baseline (same fan-out, each at its own knee)', [
      'scenario',
      'deliveries/s at the knee',
      'accept p99',
      'end-to-end p50',
      'end-to-end p99',
      'CPU-ms per delivery (all processes)',
      'CPU ceiling deliveries/s',
    ]);
    for (const s of ratios) {
      const k = kneeStep(s);
      const b = baselines.get(s.fanout);
      if (!k || !b) {
        // No knee: the first step's figures against the baseline's, marked.
        const f = s.steps?.[0];
        const bf = fanouts.find((x) => x.mode === 'baseline' && x.fanout === s.fanout)?.steps?.find((st) => st.rate === f?.rate);
        if (!f || !bf) {
          out.push(`| ${s.id} | ${!k ? 'no knee' : 'no baseline'} | | | | | |`);
          continue;
        }
        // Latencies against the baseline at the same rate; CPU against the baseline's knee
        // (at 1 write/s the baseline's CPU per delivery is mostly its idle cost).
        const cpuRef = b ?? bf;
        out.push(
          row(
            `${s.id} vs baseline-fanout${s.fanout}: latencies both at ${f.rate}/s (${s.id} has no knee),` +
              ` CPU vs the baseline at ${cpuRef.rate}/s`,
            ...versusBaseline(f, { latencies: bf, cpu: cpuRef }),
          ),
        );
        continue;
      }
      out.push(row(`${s.id} vs baseline-fanout${s.fanout}`, ...versusBaseline(k, { latencies: b, cpu: b })));
    }
    const capped = [...baselines.entries()].filter(([fanout]) => {
      const s = fanouts.find((x) => x.mode === 'baseline' && x.fanout === fanout);
      return s && s.steps!.every((st) => st.pass);
    });
    if (capped.length)
      out.push(
        `\nThe baseline passed every step (fan-out ${capped.map(([f]) => f).join(', ')}):` +
          ' its real limit is higher, so deliveries/s ratios are upper bounds.',
      );
    out.push('');
  }

  // The service against Temporal's own cost: the bare fan-outs of the same run.
  const floorKnee = (mode: string) => {
    const floor = fanouts.find((x) => x.mode === mode && x.fanout === 10 && !x.error);
    return floor ? kneeStep(floor) : null;
  };
  const [floor, floorLocal, baseline10] = [floorKnee('floor'), floorKnee('floor-local'), baselines.get(10)];
  const measured = fanouts.filter((x) => (x.mode === 'split' || x.mode === 'single') && x.fanout === 10 && !x.error);
  if ((floor || floorLocal) && measured.length) {
    out.push('## Ratio to the Temporal floor (fan-out 10, each at its own knee)');
    out.push('');
    const knee = (k: StepResult | null | undefined) =>
      k ? `${num(k.deliveriesPerSec)} deliveries/s, ${num(k.cpuMsPerDelivery.all, 2)} CPU-ms each` : 'no knee';
    out.push(
      `Floor with normal activities: ${knee(floor)}; with local activities: ${knee(floorLocal)}; plain-Node baseline: ${knee(baseline10)}.`,
    );
    out.push('');
    out.push(
      row(
        'scenario',
        'deliveries/s at the knee',
        'vs the floor (normal activities)',
        'vs the floor (local activities)',
        'vs the baseline',
        'CPU-ms per delivery, all processes',
      ),
    );
    out.push('|---|---|---|---|---|---|');
    for (const s of measured) {
      const k = kneeStep(s);
      const versus = (ref: StepResult | null | undefined) => (k && ref ? `${ratio(k.deliveriesPerSec, ref.deliveriesPerSec)}` : '');
      out.push(
        row(
          s.id,
          k ? num(k.deliveriesPerSec) : 'no knee',
          versus(floor),
          versus(floorLocal),
          versus(baseline10),
          k ? num(k.cpuMsPerDelivery.all, 2) : '',
        ),
      );
    }
    out.push('');
  }

  pushSections(out, report, 'hot', 'Hot webhook', (s) => {
    const { hot: h, steps } = s as Required<Pick<ScenarioResult, 'hot' | 'steps'>>;
    const { ledger: l, acceptMs, e2eMs, drainMs } = steps[0];
    const history = h.history;
    out.push(`${h.rate} writes/s for ${h.durationS} s to one webhook; ${h.pattern}.`);
    out.push('');
    out.push(
      `- Ledger: sent ${l.sent} = ${l.delivered} delivered + ${l.failedRecorded} failed + ${l.skipped} skipped while paused` +
        ` + ${l.missing} missing; ${l.duplicates} duplicates (${l.balanced ? 'balanced' : 'NOT balanced'}).` +
        ` Accept p50/p99 ${num(acceptMs.p50)}/${num(acceptMs.p99)} ms; end-to-end p50/p99 ${num(e2eMs.p50)}/${num(e2eMs.p99)} ms;` +
        ` drain ${num(drainMs / 1000)} s.`,
    );
    out.push(
      '- Lag from the receipt of the last failure to the `state` query of `webhook/{id}`' +
        ` showing the final count (${h.finalQueryCount}, ${h.finalQueryStatus}): **${num(h.queryLagMs, 0)} ms**;` +
        ` to the database mirror (GET /v3/webhooks/{id}) showing ${h.finalDatabaseCount}: ${num(h.databaseLagMs, 0)} ms.`,
    );
    const queryErrors = h.queryErrorSample.length ? ` (${h.queryErrorSample.join('; ')})` : '';
    out.push(
      `- Query: ${h.querySamples} answers, p50/p99 ${num(h.queryMs.p50)}/${num(h.queryMs.p99)} ms, ${h.queryErrors} errors${queryErrors};` +
        ` highest count seen ${h.maxCountSeen}; reactivations: ${h.reactivations.length}.`,
    );
    // Runs before outcomes were batched have no outcomesReceived.
    const carrying = 'outcomesReceived' in history ? ` (carrying ${history.outcomesReceived} outcomes)` : '';
    const readErrors = history.errors.length ? `; errors reading histories: ${history.errors.join('; ')}` : '';
    out.push(
      `- History of \`webhook/{id}\`: ${history.runs} runs (${history.continuedAsNew} continue-as-new),` +
        ` ${history.signalsReceived} outcome signals received${carrying} for ${h.signalsExpected} accepted writes,` +
        ` ${history.workflowTaskFailed} failed and ${history.workflowTaskTimedOut} timed-out workflow tasks;` +
        ` list-write workflows not completed: ${history.notCompletedListWrites ?? '?'}${readErrors}.`,
    );
    out.push(`- Warnings / errors in the logs: ${logSummary(s.logs)}.`);
    out.push('');
  });

  pushSections(out, report, 'recovery', 'Recovery', (s) => {
    const r = s.recovery!;
    out.push(
      `${r.deliveries} failed deliveries recovered at RECOVERY_RATE_PER_SECOND=${r.rate},` +
        ` beside ${r.liveWritesPerSec} live writes/s to the same webhook.`,
    );
    out.push('');
    const duration = r.durationMs === null ? null : r.durationMs / 1000;
    out.push(
      `- Recovery: ${r.status}${r.stoppedReason ? ` (${r.stoppedReason})` : ''} in **${num(duration)} s**` +
        ` (the rate allows ${num(r.expectedMs / 1000)} s; from its createdAt to its finishedAt);` +
        ` ${r.sent} sent, ${r.delivered} delivered, ${r.failed} failed of ${r.total}; ${r.redeliveriesLogged} redeliveries logged.`,
    );
    const span = r.receivedSpanMs === null ? null : r.receivedSpanMs / 1000;
    out.push(
      `- Received: ${r.received} (${r.distinctReceived} distinct, ${r.duplicates} twice) over ${num(span)} s;` +
        ` at most ${r.mostInOneSecond} in any one second.`,
    );
    out.push(
      `- Live deliveries meanwhile: ${r.live.accepted} writes accepted, ${r.live.received} delivered` +
        ` (${r.live.missing} missing, ${r.live.duplicates} twice), write-to-receipt p50 / p99` +
        ` ${num(r.live.latencyMs.p50)} / ${num(r.live.latencyMs.p99)} ms.`,
    );
    out.push(
      `- CPU-ms per send, service: ${num(r.cpuMsPerSend, 2)}; other work on the machine: ${num(r.quiet.otherCores, 2)} cores busy` +
        ` before, ${num(r.cpu.unattributedMs / 1000)} CPU s unattributed over ${num(r.cpu.wallMs / 1000)} s.` +
        ` Warnings / errors in the logs: ${logSummary(s.logs)}.`,
    );
    out.push('');
  });

  pushSections(out, report, 'noisyNeighbour', 'Noisy neighbour', (s) => {
    const n = s.noisyNeighbour!;
    out.push(
      `A quiet account's one-delivery writes at ${n.quietWritesPerSec}/s (and its GET /v3/webhooks at ${n.quietReadsPerSec}/s)` +
        ` for ${num(n.phaseMs / 1000)} s in each phase: alone; beside a list of ${n.noisyWebhooks} webhooks (${n.noisyAccounts} accounts)` +
        ` on every topic, written every ${num(n.noisyEveryMs / 1000)} s (${n.noisyDeliveriesPerWrite} deliveries a write);` +
        ` then, once those are all in, beside another account flooding the public API on ${n.floodConnections} connections` +
        " (GET /v3/webhooks and pings in turn). Latencies from each request's due time; a delivery's to its first receipt.",
    );
    out.push('');
    out.push(
      row(
        'quiet account',
        'writes accepted',
        'end-to-end p50 / p99 / max ms',
        'accept p50 / p99 ms',
        'ledger: sent = delivered + failed + missing (dup)',
        'GET /v3/webhooks p50 / p99 ms',
        'CPU s: service, flood; cores busy outside the bench before',
      ),
    );
    out.push('|---|---|---|---|---|---|---|');
    const phaseTitles = { alone: 'alone', noisy: 'beside the noisy list', flood: 'beside the API flood' };
    for (const phase of n.phases) {
      const l = phase.quietLedger;
      out.push(
        row(
          phaseTitles[phase.name],
          `${phase.quietWrites.accepted}/${phase.quietWrites.scheduled}`,
          `${num(phase.quietE2eMs.p50)} / **${num(phase.quietE2eMs.p99)}** / ${num(phase.quietE2eMs.max)}`,
          p50p99(phase.quietAcceptMs),
          `${l.sent} = ${l.delivered} + ${l.failedRecorded} + ${l.missing} (${l.duplicates})${l.balanced ? '' : ' **unbalanced**'}`,
          p50p99(phase.quietReadMs),
          `${num(phase.serviceCpuMs / 1000)}, ${num((phase.cpu.groups.flood?.cpuMs ?? 0) / 1000)}; ${num(phase.otherWork.otherCores, 2)}`,
        ),
      );
    }
    out.push('');
    const l = n.noisyLedger;
    out.push(
      `- Noisy list: ${n.noisyWritesAccepted} writes accepted, ${l.sent} deliveries = ${l.delivered} delivered + ${l.failedRecorded} failed` +
        ` + ${l.missing} missing; ${l.duplicates} received twice (${l.balanced ? 'balanced' : 'NOT balanced'}).` +
        ` A write's deliveries, first to last receipt p50 / p99: ${p50p99(n.noisyWriteSpanMs)} ms; due time to last receipt` +
        ` ${p50p99(n.noisyWriteToLastMs)} ms; ${num(n.noisyDeliveriesPerSec)} deliveries/s from the first write to the last receipt` +
        ` (drained ${num(n.noisyDrainMs / 1000)} s after the phase${n.noisyDrained ? '' : ', **not all in**'}).`,
    );
    out.push(
      `- Flood: ${n.flood.requests} requests (${num(n.flood.perSec)}/s), answers ` +
        `${Object.entries(n.flood.statuses)
          .map(([status, count]) => `${status}: ${count}`)
          .join(', ')}; latency p50 / p99 ${p50p99(n.flood.latencyMs)} ms.`,
    );
    out.push(`- Set-up ${num(n.setUpMs / 1000)} s. Warnings / errors in the logs: ${logSummary(s.logs)}.`);
    out.push('');
  });

  if (registrations.length) {
    pushTable(out, 'Registration', [
      'scenario',
      'created',
      'open-loop rate',
      'p50 / p99 / p99.9 ms',
      'answers',
      'pings received / verified',
      'CPU-ms per registration, service / all',
      'token check + rate limit p50 / p99 ms',
      'a PostgreSQL round trip p50 / p99 ms',
    ]);
    for (const s of registrations) {
      if (s.error || !s.registration) {
        out.push(`| ${s.id} | error: ${String(s.error).split('\n')[0]} | | | | | | | |`);
        continue;
      }
      const r = s.registration;
      out.push(
        row(
          s.id,
          `${r.created}/${r.count} (${r.accounts} accounts × ${r.count / r.accounts})`,
          `${r.rate}/s`,
          p50p99p999(r.latencyMs),
          Object.entries(r.statuses)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', '),
          `${r.pings.received} / ${r.pings.verified}`,
          `${num(r.cpuMsPerRegistration.service)} / ${num(r.cpuMsPerRegistration.all)}`,
          `${num(r.authP50Ms, 3)} / ${num(r.authP99Ms, 3)}`,
          r.pgRoundTripMs ? `${num(r.pgRoundTripMs.p50, 3)} / ${num(r.pgRoundTripMs.p99, 3)}` : '',
        ),
      );
    }
    out.push('');
  }

  pushTable(out, 'Steps', [
    'scenario',
    'offered writes/s',
    'accepted/s',
    'deliveries/s',
    'accept p50 / p99 ms',
    'end-to-end p50 / p99 / p99.9 ms',
    'ledger: sent = delivered + failed (+ skipped while paused) + missing (dup)',
    'drain s',
    'Temporal server warn / error lines',
    'CPU-ms/delivery, all (net of idle)',
    'machine busy / unattributed CPU s (cores busy outside the bench before the step; peak over 1 s during it)',
    'result',
  ]);
  for (const s of report.scenarios) {
    for (const st of s.steps ?? []) {
      const l = st.ledger;
      const skipped = l.skipped ? ` + ${l.skipped} skipped` : '';
      const unbalanced = l.balanced ? '' : ' **unbalanced**';
      const result = s.kind === 'hot' ? '(hot)' : st.pass ? 'pass' : `fail: ${st.failures.join('; ')}`;
      const earlier = st.discardedAttempts?.length
        ? ` (repeated; earlier: ${st.discardedAttempts.map((d) => d.failures.join(', ')).join(' / ')})`
        : '';
      out.push(
        row(
          s.id,
          st.rate,
          num(st.acceptedPerSec),
          num(st.deliveriesPerSec),
          p50p99(st.acceptMs),
          p50p99p999(st.e2eMs),
          `${l.sent} = ${l.delivered} + ${l.failedRecorded}${skipped} + ${l.missing} (${l.duplicates})${unbalanced}`,
          num(st.drainMs / 1000),
          st.temporalLog ? `${st.temporalLog.warnings} / ${st.temporalLog.errors}` : '–',
          `${num(st.cpuMsPerDelivery.all, 2)} (${num(st.cpuMsPerDelivery.allNetOfIdle, 2)})`,
          `${num(st.cpu.machineBusyMs / 1000)} / ${num(st.cpu.unattributedMs / 1000)}` +
            ` (${num(st.quiet?.otherCores, 2)}; peak ${num(st.outsideLoad?.maxCores, 2)})`,
          `${result}${earlier}`,
        ),
      );
    }
  }
  out.push('');

  const withSdk = report.scenarios.filter((x) => (kneeStep(x) ?? x.steps?.[0])?.sdk);
  if (withSdk.length) {
    out.push("## Where the time goes: the worker's Temporal SDK metrics (mean ms, count), at the knee (else the first step)");
    out.push('');
    const keys = [
      ['workflow task schedule-to-start', 'workflow_task_schedule_to_start_latency'],
      ['workflow task execution: list-write', 'workflow_task_execution_latency{deliverListWrite}'],
      ['workflow task execution: webhook/{id}', 'workflow_task_execution_latency{webhookLifecycle}'],
      ['workflow task replay', 'workflow_task_replay_latency'],
      ['RespondWorkflowTaskCompleted', 'request_latency{RespondWorkflowTaskCompleted}'],
      // The SDK gives this one without an activity type.
      ['activity schedule-to-start', 'activity_schedule_to_start_latency'],
      ['deliverEvent execution (activity, before 0.4.0)', 'activity_execution_latency{deliverEvent}'],
      ['deliverEvent execution (local activity)', 'local_activity_execution_latency{deliverEvent}'],
      ['SignalWorkflowExecution (from deliverEvent)', 'request_latency{SignalWorkflowExecution}'],
      ['storeWebhookState execution (local activity)', 'local_activity_execution_latency{storeWebhookState}'],
      ['RespondActivityTaskCompleted', 'request_latency{RespondActivityTaskCompleted}'],
      ['RespondActivityTaskFailed', 'request_latency{RespondActivityTaskFailed}'],
      ['list-write workflow end-to-end', 'workflow_endtoend_latency{deliverListWrite}'],
    ];
    out.push(`| scenario | step | ${keys.map(([label]) => label).join(' | ')} |`);
    out.push(`|---|---|${keys.map(() => '---|').join('')}`);
    for (const s of withSdk) {
      const st = kneeStep(s) ?? s.steps![0];
      const cell = (key: string) => {
        // A key without a {type} sums every type's histogram.
        const parts = Object.entries(st.sdk!).filter(([k]) => k === key || (!key.includes('{') && k.startsWith(`${key}{`)));
        const count = parts.reduce((n, [, v]) => n + Number(v.count), 0);
        if (!count) return '–';
        const mean = parts.reduce((n, [, v]) => n + Number(v.meanMs ?? 0) * Number(v.count), 0) / count;
        return `${num(mean)} (${count})`;
      };
      out.push(`| ${s.id} | ${st.rate}/s | ${keys.map(([, key]) => cell(key)).join(' | ')} |`);
    }
    out.push('');
  }

  out.push('## CPU seconds and peak RSS (MiB) per process, at the knee (else the first step)');
  out.push('');
  out.push(`| scenario | step | ${GROUP_ORDER.join(' | ')} | harness-unattributed CPU s | wall s |`);
  out.push(`|---|---|${GROUP_ORDER.map(() => '---|').join('')}---|---|`);
  /** What the CPU of a workload scenario without steps covers. */
  const cpuSpanOf: Partial<Record<ScenarioResult['kind'], string>> = {
    registration: 'registrations',
    recovery: 'recovery',
    'noisy-neighbour': 'phases and drains',
  };
  for (const s of report.scenarios) {
    const st = kneeStep(s) ?? s.steps?.[0];
    const cpu = st?.cpu ?? s.registration?.cpu ?? s.recovery?.cpu ?? s.noisyNeighbour?.cpu;
    if (!cpu) continue;
    const cells = GROUP_ORDER.map((g) =>
      cpu.groups[g] ? `${num(cpu.groups[g].cpuMs / 1000)} s (${num(cpu.groups[g].peakRssMiB, 0)})` : '',
    );
    out.push(row(s.id, st ? `${st.rate}/s` : (cpuSpanOf[s.kind] ?? ''), ...cells, num(cpu.unattributedMs / 1000), num(cpu.wallMs / 1000)));
  }
  out.push('');

  out.push('## Notes');
  out.push('');
  const bodyBytes = report.scenarios.flatMap((s) => s.steps ?? []).find((st) => st.writes?.bodyBytes)?.writes.bodyBytes;
  out.push(
    `- Write requests carry ${c.changesPerWrite} \`item.added\` changes, ${bodyBytes ?? '?'} bytes each.` +
      ' Delivery bodies are fixed by the contract (`{"event","listId","cursor","at"}`, about 110 bytes):' +
      ' "1 KiB bodies" can only apply to the write request.',
  );
  out.push(
    [
      '- Fan-out 10: one list, owner with 5 webhooks and a member with 5 (at most 5 per account), each subscribed to `list.changed` only,',
      'each on its own HTTPS receiver (origin): 10 deliveries per write.',
      'Fan-out 1: 10 lists of 10 accounts with one webhook each, writes round-robin over the lists.',
      'Each write fires `item.added` and `list.changed`.',
    ].join(' '),
  );
  out.push(
    [
      '- Receivers verify every signature (pings once the registration has answered with the secret)',
      'and record (list, cursor, webhook, topic) and the receipt time; the ledger joins them with the 202 answers',
      'and with the delivery log (polled while it grows, since the service prunes it to 1000 per webhook).',
    ].join(' '),
  );
  out.push(
    [
      '- CPU: /proc/<pid>/stat of each process (the Temporal CLI with its children;',
      'PostgreSQL: the postmaster, its background processes and the backends of the bench database)',
      'over warm-up + steady + drain, divided by the deliveries of the step.',
      '"service" sums the system under test (API, worker, Temporal, PostgreSQL; or the baseline process),',
      '"all" adds receivers and generator.',
      'Unattributed = machine busy CPU minus all measured processes (the kernel, the harness, anything else running on the machine).',
    ].join(' '),
  );
  out.push(
    [
      '- CPU ceiling = cores × 1000 / CPU-ms per delivery (all processes):',
      'the deliveries/s this machine could carry at the measured CPU cost were nothing else running.',
      'Unlike latency and the knee, it hardly depends on other load on the machine, which the steps table shows (unattributed CPU).',
    ].join(' '),
  );
  out.push('- Peak RSS of PostgreSQL sums its processes and so counts its shared buffers several times.');
  out.push(`- Worker: ${e.workerOptions.sdkDefaults}; the product sets only: ${e.workerOptions.overrides.join(' ')}.`);
  if (e.temporalServer)
    out.push(`- Temporal server: \`${e.temporalServer.cmdline.replace(/ --port \d+| --http-port \d+| --metrics-port \d+/g, '')}\`.`);
  out.push(
    `- Service processes: ${Object.entries(e.serviceEnvironment)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
  );
  for (const s of report.scenarios.filter((x) => x.temporalLog && (x.temporalLog.warnings || x.temporalLog.errors))) {
    const temporalLog = s.temporalLog!;
    const top = Object.entries(temporalLog.byMessage)
      .sort((a, b) => Number(b[1]) - Number(a[1]))
      .slice(0, 4);
    const frequent = top.map(([k, v]) => `\`${k}\` ×${v}`).join(', ');
    out.push(`- Temporal server log, ${s.id}: ${temporalLog.warnings} warnings, ${temporalLog.errors} errors; most frequent: ${frequent}.`);
  }
  const allLogs = report.scenarios.filter((s) => s.logs).map((s) => `${s.id}: ${logSummary(s.logs)}`);
  if (allLogs.length) out.push(`- Warnings / errors in the service logs: ${allLogs.join('; ')}.`);
  out.push('');
  if (image) out.push(`![End-to-end latency against offered load](${image})`, '');
  return out.join('\n');
}

/** The fields of the outcome that sum up a workload scenario, each with the kind of scenario it sums up. */
const KIND_OF_SUMMARY = { hot: 'hot', recovery: 'recovery', noisyNeighbour: 'noisy-neighbour' } as const;

/** A section per scenario whose outcome has `field`: its heading, then what `render` writes of it, or its error. */
function pushSections(
  out: string[],
  report: Report,
  field: keyof typeof KIND_OF_SUMMARY,
  title: string,
  render: (scenario: ScenarioResult) => void,
): void {
  for (const s of report.scenarios.filter((x) => x.kind === KIND_OF_SUMMARY[field])) {
    out.push(`## ${title} (${s.id})`);
    out.push('');
    if (s.error || !s[field]) {
      out.push(`error: ${s.error}`);
      out.push('');
    } else render(s);
  }
}

function logSummary(logs: LogScan | undefined): string {
  if (!logs) return 'none read';
  return Object.entries(logs)
    .map(([name, l]) => {
      const example = l.sample.length ? ` (e.g. \`${l.sample[0]?.replace(/`/g, "'").slice(0, 160)}\`)` : '';
      return `${name} ${l.warnings} warnings, ${l.errors} errors${example}`;
    })
    .join(', ');
}

// ---------------------------------------------------------------------------------------

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

/** End-to-end p50 (dashed) and p99 (solid) against offered writes/s, log-log. */
/** The scenarios the chart draws: the fan-out ones, stepped through rates. */
function chartedScenarios(report: Report): ScenarioResult[] {
  return report.scenarios.filter((s) => s.kind === 'fanout' && s.steps?.length);
}

export function chart(report: Report): string {
  const W = 980;
  const H = 600;
  const m = { left: 84, right: 290, top: 50, bottom: 60 };
  const series = chartedScenarios(report);
  const rates = series.flatMap((s) => s.steps!.map((st) => st.rate));
  const lat = series.flatMap((s) => s.steps!.flatMap((st) => [st.e2eMs.p50, st.e2eMs.p99])).filter((v): v is number => v !== null && v > 0);
  const xMin = Math.min(...rates, 25);
  const xMax = Math.max(...rates, 100);
  const yMin = Math.max(0.5, 10 ** Math.floor(Math.log10(Math.min(...lat, 10))));
  const yMax = 10 ** Math.ceil(Math.log10(Math.max(...lat, 1000)));
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const x = (v: number) => m.left + ((Math.log(v) - Math.log(xMin)) / (Math.log(xMax) - Math.log(xMin) || 1)) * pw;
  const y = (v: number) => m.top + ph - ((Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * ph;
  const parts = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}"` +
      ' font-family="DejaVu Sans, sans-serif" font-size="12">',
  );
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(
    `<text x="${m.left}" y="28" font-size="16" font-weight="bold">End-to-end latency (write t0 to receipt) against offered load</text>`,
  );
  const run = `${report.startedAt.slice(0, 16)} ${report.config.quick ? 'quick' : 'full'} run`;
  const subtitle = `${run}; solid p99, dashed p50; hollow marker: step failed`;
  parts.push(`<text x="${m.left}" y="44" font-size="11" fill="#555">${esc(subtitle)}</text>`);
  // Grid and axes.
  for (let v = yMin; v <= yMax; v *= 10) {
    parts.push(`<line x1="${m.left}" x2="${m.left + pw}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.left - 8}" y="${y(v) + 4}" text-anchor="end">${v >= 1000 ? `${v / 1000} s` : `${v} ms`}</text>`);
  }
  for (const r of [...new Set(rates)].sort((a, b) => a - b)) {
    parts.push(`<line x1="${x(r)}" x2="${x(r)}" y1="${m.top}" y2="${m.top + ph}" stroke="#eee"/>`);
    parts.push(`<text x="${x(r)}" y="${m.top + ph + 18}" text-anchor="middle">${r}</text>`);
  }
  parts.push(`<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  parts.push(`<text x="${m.left + pw / 2}" y="${H - 18}" text-anchor="middle">offered load (writes/s, log scale)</text>`);
  parts.push(`<text transform="translate(16 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">end-to-end latency (log scale)</text>`);
  const limit = report.config.criteria.e2eP99Ms;
  parts.push(`<line x1="${m.left}" x2="${m.left + pw}" y1="${y(limit)}" y2="${y(limit)}" stroke="#999" stroke-dasharray="2 3"/>`);
  parts.push(`<text x="${m.left + pw - 4}" y="${y(limit) - 4}" text-anchor="end" fill="#777">p99 limit ${limit} ms</text>`);
  series.forEach((s, i: number) => {
    const color = COLORS[i % COLORS.length];
    for (const [key, dash] of [
      ['p99', ''],
      ['p50', '6 4'],
    ] as const) {
      const pts = s.steps!.filter((st) => st.e2eMs[key] !== null);
      if (!pts.length) continue;
      const at = (st: StepResult) => ({ cx: x(st.rate).toFixed(1), cy: y(st.e2eMs[key]!).toFixed(1) });
      const points = pts.map((st) => `${at(st).cx},${at(st).cy}`).join(' ');
      const dashes = dash ? `stroke-dasharray="${dash}"` : '';
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" ${dashes} points="${points}"/>`);
      for (const st of pts) {
        const { cx, cy } = at(st);
        parts.push(`<circle cx="${cx}" cy="${cy}" r="3.5" fill="${st.pass ? color : 'white'}" stroke="${color}" stroke-width="1.5"/>`);
      }
    }
    const ly = m.top + 10 + i * 22;
    parts.push(`<line x1="${W - m.right + 20}" x2="${W - m.right + 50}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    parts.push(`<text x="${W - m.right + 58}" y="${ly + 4}">${esc(s.id)}${s.knee ? ` (knee ${s.knee}/s)` : ''}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// `node dist/scripts/bench/report.js scripts/bench/results/<stamp>.json` renders the Markdown
// and the chart of a run again, next to the JSON.
if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node dist/scripts/bench/report.js scripts/bench/results/<stamp>.json');
    process.exit(2);
  }
  const report = JSON.parse(fs.readFileSync(file, 'utf8')) as Report;
  void writeReports(report, path.dirname(path.resolve(file))).then(({ paths }) => console.log(`wrote ${paths.join(', ')}`));
}
