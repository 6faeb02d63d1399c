// "Trace export": with BENCH_TRACING=on, what the service's processes sent the bench's OTLP
// sink at each step, and the sink's own CPU, which no other figure counts.
import { type Report } from '../lib/types';
import { num, row, tableSection } from './format';

/** The run's tracing, for the report's head. */
export function tracingLine({ config }: Report): string {
  return config.tracing
    ? "Tracing on (BENCH_TRACING=on): the service's processes export every trace (the default sampler) by OTLP/HTTP to a sink of the bench, " +
        "which answers at once and counts (no backend); TRACE_RECEIVERS=on. The sink's CPU is in none of the figures of the service or of " +
        '"all processes" (see "Trace export").'
    : 'Tracing off: no OTLP endpoint, TRACE_RECEIVERS off.';
}

export function traceExportTable(report: Report): string[] {
  if (!report.config.tracing) return [];
  return tableSection(
    'Trace export',
    [
      'scenario',
      'offered writes/s',
      'deliveries',
      'export requests',
      'spans per delivery',
      'bytes per delivery',
      'sink CPU-ms per delivery (in no other figure)',
    ],
    report.scenarios.flatMap((s) =>
      (s.steps ?? []).flatMap(({ rate, deliveriesTotal, traceExport: t }) =>
        t
          ? [
              row(
                s.id,
                rate,
                deliveriesTotal,
                `${t.requests}${t.uncounted ? ` (${t.uncounted} not counted: not plain JSON)` : ''}`,
                num(t.spansPerDelivery, 2),
                num(t.bytesPerDelivery, 0),
                num(t.sinkCpuMsPerDelivery, 3),
              ),
            ]
          : [],
      ),
    ),
  );
}
