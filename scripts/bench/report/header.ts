// The report's head: the run, the machine it ran on, and how a step is judged.
import { type Report } from '../lib/types';
import { TOKEN_LIFETIME_S } from '../lib/receiver-auth';
import { num } from './format';
import { tracingLine } from './tracing';

export function header(report: Report): string[] {
  const { config: c, environment: e } = report;
  const out = [`# Benchmark ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC (${c.quick ? 'quick: BENCH_QUICK=1' : 'full'})`, ''];
  out.push(
    [
      `${e.cpu}, ${e.cores} cores, ${e.memoryGiB} GiB`,
      `Node ${e.node}`,
      `Temporal SDK ${e.temporalSdk}, ${e.temporalCli}`,
      String(e.postgres).split(' on ')[0],
      `commit ${e.git.commit?.slice(0, 10) ?? '?'}${e.git.dirty ? ' (uncommitted changes)' : ''}` +
        (e.serviceFrom ? ` (the service, from ${e.serviceFrom.root}; the bench at ${e.serviceFrom.benchCommit?.slice(0, 10) ?? '?'})` : ''),
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
  out.push(tracingLine(report));
  if (report.receiverAuth) out.push(receiverAuthLine(report.receiverAuth));
  if (c.apiCpuShares)
    out.push(
      e.cpuGroupsMissing
        ? `BENCH_API_CPU_SHARES=${c.apiCpuShares} asked, **not applied** (${e.cpuGroupsMissing}).`
        : `The API process in a cpu cgroup of its own with cpu.shares ${c.apiCpuShares}, the workers at the default 1024 (BENCH_API_CPU_SHARES).`,
    );
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
  return out;
}

/** BENCH_RECEIVER_AUTH: what the fan-out scenarios' webhooks presented, and what the receivers saw of it. */
function receiverAuthLine({ mode, tokensIssued, unauthorized }: NonNullable<Report['receiverAuth']>): string {
  const refused = `; ${unauthorized} request(s) without it answered 401.`;
  if (mode === 'headers')
    return `Receiver auth headers (BENCH_RECEIVER_AUTH=headers): the service's fan-out webhooks carry an X-Api-Key header, which the receivers check${refused}`;
  if (mode === 'oauth2')
    return (
      "Receiver auth oauth2 (BENCH_RECEIVER_AUTH=oauth2): the service's fan-out webhooks carry OAuth2 client credentials of the bench's " +
      `token endpoint (expires_in ${TOKEN_LIFETIME_S} s), which issued ${tokensIssued} token(s); the receivers require one as a bearer token${refused}`
    );
  return 'Receiver auth none (BENCH_RECEIVER_AUTH=none): no credential on any webhook.';
}
