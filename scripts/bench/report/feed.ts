// "Event feed": pages of 100 of GET /v3/webhooks/{id}/events with a million items stored.
import { type Report, type ScenarioResult } from '../lib/types';
import { noteRow, num, row, tableSection } from './format';

const COLUMNS = ['scenario', 'items stored (webhooks)', 'pages of 100 read (at once)', 'p50 / p99 / max ms', 'CPU-ms per page, service'];

function feedRow(s: ScenarioResult): string {
  if (s.error || !s.feed) return noteRow(COLUMNS, s.id, `error: ${String(s.error)}`);
  const f = s.feed;
  const failed = Object.entries(f.failures).map(([why, n]) => `, ${why}: ${n}`);
  return row(
    s.id,
    `${f.stored} (${f.webhooks})`,
    `${f.pages}/${f.reads}${failed.join('')} (${f.concurrency})`,
    `${num(f.latencyMs.p50)} / ${num(f.latencyMs.p99)} / ${num(f.latencyMs.max)}`,
    num(f.cpuMsPerPage, 2),
  );
}

export function feedTable(report: Report): string[] {
  const feeds = report.scenarios.filter((s) => s.kind === 'feed');
  if (!feeds.length) return [];
  return tableSection('Event feed', COLUMNS, feeds.map(feedRow));
}
