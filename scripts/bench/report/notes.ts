// "Notes": what the figures mean, how the service ran, and what its logs said.
import { type Report } from '../lib/types';
import { logSummary } from './format';

/** How the writes, the fan-outs, the receivers and the CPU figures are made. */
function method(report: Report): string[] {
  const bodyBytes = report.scenarios.flatMap((s) => s.steps ?? []).find((st) => st.writes?.bodyBytes)?.writes.bodyBytes;
  return [
    `- Write requests carry ${report.config.changesPerWrite} \`item.added\` changes, ${bodyBytes ?? '?'} bytes each.` +
      ' Delivery bodies are fixed by the contract (`{"event","listId","cursor","at"}`, about 110 bytes):' +
      ' "1 KiB bodies" can only apply to the write request.',
    [
      '- Fan-out 10: one list, owner with 5 webhooks and a member with 5 (at most 5 per account), each subscribed to `list.changed` only,',
      'each on its own HTTPS receiver (origin): 10 deliveries per write.',
      'Fan-out 1: 10 lists of 10 accounts with one webhook each, writes round-robin over the lists.',
      'Each write fires `item.added` and `list.changed`.',
    ].join(' '),
    [
      '- Receivers verify every signature (pings once the registration has answered with the secret)',
      'and record (list, cursor, webhook, topic) and the receipt time; the ledger joins them with the 202 answers',
      'and with the delivery log (polled while it grows, since the service prunes it to 1000 per webhook).',
    ].join(' '),
    [
      '- CPU: /proc/<pid>/stat of each process (the Temporal CLI with its children;',
      'PostgreSQL: the postmaster, its background processes and the backends of the bench database)',
      'over warm-up + steady + drain, divided by the deliveries of the step.',
      '"service" sums the system under test (API, worker, Temporal, PostgreSQL; or the baseline process),',
      '"all" adds receivers and generator.',
      'Unattributed = machine busy CPU minus all measured processes (the kernel, the harness, anything else running on the machine).',
    ].join(' '),
    [
      '- CPU ceiling = cores × 1000 / CPU-ms per delivery (all processes):',
      'the deliveries/s this machine could carry at the measured CPU cost were nothing else running.',
      'Unlike latency and the knee, it hardly depends on other load on the machine, which the steps table shows (unattributed CPU).',
    ].join(' '),
    '- Peak RSS of PostgreSQL sums its processes and so counts its shared buffers several times.',
  ];
}

/** The worker's options, the Temporal server's command line and the service's environment. */
function setUp({ environment: e }: Report): string[] {
  const out = [`- Worker: ${e.workerOptions.sdkDefaults}; the product sets only: ${e.workerOptions.overrides.join(' ')}.`];
  if (e.temporalServer)
    out.push(`- Temporal server: \`${e.temporalServer.cmdline.replace(/ --port \d+| --http-port \d+| --metrics-port \d+/g, '')}\`.`);
  out.push(
    `- Service processes: ${Object.entries(e.serviceEnvironment)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
  );
  return out;
}

/** The warnings and errors of the Temporal server's log and of the service's, per scenario. */
function logs({ scenarios }: Report): string[] {
  const out: string[] = [];
  for (const s of scenarios.filter((x) => x.temporalLog && (x.temporalLog.warnings || x.temporalLog.errors))) {
    const temporalLog = s.temporalLog!;
    const top = Object.entries(temporalLog.byMessage)
      .sort((a, b) => Number(b[1]) - Number(a[1]))
      .slice(0, 4);
    const frequent = top.map(([k, v]) => `\`${k}\` ×${v}`).join(', ');
    out.push(`- Temporal server log, ${s.id}: ${temporalLog.warnings} warnings, ${temporalLog.errors} errors; most frequent: ${frequent}.`);
  }
  const allLogs = scenarios.filter((s) => s.logs).map((s) => `${s.id}: ${logSummary(s.logs)}`);
  if (allLogs.length) out.push(`- Warnings / errors in the service logs: ${allLogs.join('; ')}.`);
  return out;
}

export function notes(report: Report): string[] {
  return ['## Notes', '', ...method(report), ...setUp(report), ...logs(report), ''];
}
