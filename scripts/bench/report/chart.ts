// The chart of a run that stepped fan-out scenarios through rates: end-to-end p50 (dashed)
// and p99 (solid) against offered writes/s, log-log, as SVG.
import { type Report, type ScenarioResult, type StepResult } from '../lib/types';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
const W = 980;
const H = 600;
const MARGIN = { left: 84, right: 290, top: 50, bottom: 60 };
const PLOT_WIDTH = W - MARGIN.left - MARGIN.right;
const PLOT_HEIGHT = H - MARGIN.top - MARGIN.bottom;

/** The scenarios the chart draws: the fan-out ones, stepped through rates. */
export function chartedScenarios(report: Report): ScenarioResult[] {
  return report.scenarios.filter((s) => s.kind === 'fanout' && s.steps?.length);
}

/** Where a rate and a latency fall on the plot, in pixels. */
interface Scales {
  x: (rate: number) => number;
  y: (ms: number) => number;
  yMin: number;
  yMax: number;
  rates: number[];
}

function scales(series: ScenarioResult[]): Scales {
  const rates = series.flatMap((s) => s.steps!.map((st) => st.rate));
  const lat = series.flatMap((s) => s.steps!.flatMap((st) => [st.e2eMs.p50, st.e2eMs.p99])).filter((v): v is number => v !== null && v > 0);
  const xMin = Math.min(...rates, 25);
  const xMax = Math.max(...rates, 100);
  const yMin = Math.max(0.5, 10 ** Math.floor(Math.log10(Math.min(...lat, 10))));
  const yMax = 10 ** Math.ceil(Math.log10(Math.max(...lat, 1000)));
  return {
    x: (v) => MARGIN.left + ((Math.log(v) - Math.log(xMin)) / (Math.log(xMax) - Math.log(xMin) || 1)) * PLOT_WIDTH,
    y: (v) =>
      MARGIN.top + PLOT_HEIGHT - ((Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * PLOT_HEIGHT,
    yMin,
    yMax,
    rates,
  };
}

/** The titles, the grid, the axes and the p99 limit. */
function frame(report: Report, { x, y, yMin, yMax, rates }: Scales): string[] {
  const m = MARGIN;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}"` +
      ' font-family="DejaVu Sans, sans-serif" font-size="12">',
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="28" font-size="16" font-weight="bold">End-to-end latency (write t0 to receipt) against offered load</text>`,
  ];
  const run = `${report.startedAt.slice(0, 16)} ${report.config.quick ? 'quick' : 'full'} run`;
  const subtitle = `${run}; solid p99, dashed p50; hollow marker: step failed`;
  parts.push(`<text x="${m.left}" y="44" font-size="11" fill="#555">${esc(subtitle)}</text>`);
  for (let v = yMin; v <= yMax; v *= 10) {
    parts.push(`<line x1="${m.left}" x2="${m.left + PLOT_WIDTH}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.left - 8}" y="${y(v) + 4}" text-anchor="end">${v >= 1000 ? `${v / 1000} s` : `${v} ms`}</text>`);
  }
  for (const r of [...new Set(rates)].sort((a, b) => a - b)) {
    parts.push(`<line x1="${x(r)}" x2="${x(r)}" y1="${m.top}" y2="${m.top + PLOT_HEIGHT}" stroke="#eee"/>`);
    parts.push(`<text x="${x(r)}" y="${m.top + PLOT_HEIGHT + 18}" text-anchor="middle">${r}</text>`);
  }
  parts.push(`<rect x="${m.left}" y="${m.top}" width="${PLOT_WIDTH}" height="${PLOT_HEIGHT}" fill="none" stroke="#888"/>`);
  parts.push(`<text x="${m.left + PLOT_WIDTH / 2}" y="${H - 18}" text-anchor="middle">offered load (writes/s, log scale)</text>`);
  parts.push(
    `<text transform="translate(16 ${m.top + PLOT_HEIGHT / 2}) rotate(-90)" text-anchor="middle">end-to-end latency (log scale)</text>`,
  );
  const limit = report.config.criteria.e2eP99Ms;
  parts.push(`<line x1="${m.left}" x2="${m.left + PLOT_WIDTH}" y1="${y(limit)}" y2="${y(limit)}" stroke="#999" stroke-dasharray="2 3"/>`);
  parts.push(`<text x="${m.left + PLOT_WIDTH - 4}" y="${y(limit) - 4}" text-anchor="end" fill="#777">p99 limit ${limit} ms</text>`);
  return parts;
}

/** A scenario's p99 and p50 lines with their markers, and its entry in the legend. */
function seriesLines(s: ScenarioResult, i: number, { x, y }: Scales): string[] {
  const parts: string[] = [];
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
  const ly = MARGIN.top + 10 + i * 22;
  parts.push(
    `<line x1="${W - MARGIN.right + 20}" x2="${W - MARGIN.right + 50}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
  );
  parts.push(`<text x="${W - MARGIN.right + 58}" y="${ly + 4}">${esc(s.id)}${s.knee ? ` (knee ${s.knee}/s)` : ''}</text>`);
  return parts;
}

export function chart(report: Report): string {
  const series = chartedScenarios(report);
  const at = scales(series);
  return [...frame(report, at), ...series.flatMap((s, i) => seriesLines(s, i, at)), '</svg>'].join('\n');
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
