// A picture of one trace, for the docs and for a failing tracing test: Jaeger's JSON drawn as a
// waterfall (one row per span, children under their parent by start time, a bar on a time axis),
// as SVG rendered to PNG.
import { writeFileSync } from 'node:fs';
import type { JaegerSpan, JaegerTrace } from './jaeger';
import { CHAR_WIDTH, escapeXml, renderPng, svgDocument } from './picture';

export interface TracePicture {
  svg: string;
  png: Buffer;
}

const PADDING = 14;
const TITLE_HEIGHT = 26;
const AXIS_HEIGHT = 22;
const ROW_HEIGHT = 22;
const BAR_HEIGHT = 14;
const TIMELINE_WIDTH = 640;
/** Room right of the timeline for the duration beside a bar that ends at its right edge. */
const DURATION_WIDTH = Math.ceil('9999.9 ms'.length * CHAR_WIDTH) + 8;
const INDENT = '  ';
/** Tableau 10: distinct at a glance, one per service in order of first appearance. */
const SERVICE_COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** Milliseconds, to three significant digits or whole ones: 0.125 ms, 12.5 ms, 1250 ms, 10 ms. */
function milliseconds(microseconds: number): string {
  const ms = microseconds / 1000;
  return `${Number(ms.toFixed(ms < 10 ? 2 : ms < 100 ? 1 : 0))} ms`;
}

/** The spans depth first: each under its parent (its CHILD_OF reference), siblings by start time. */
function spanRows(trace: JaegerTrace): { span: JaegerSpan; depth: number }[] {
  const ids = new Set(trace.spans.map((span) => span.spanID));
  const children = new Map<string | undefined, JaegerSpan[]>();
  for (const span of trace.spans) {
    // A span whose parent is missing (not received, or in another trace) is drawn as a root.
    const parent = span.references.find((reference) => reference.refType === 'CHILD_OF' && ids.has(reference.spanID))?.spanID;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  for (const siblings of children.values()) siblings.sort((a, b) => a.startTime - b.startTime);
  const rows: { span: JaegerSpan; depth: number }[] = [];
  const visit = (span: JaegerSpan, depth: number) => {
    rows.push({ span, depth });
    for (const child of children.get(span.spanID) ?? []) visit(child, depth + 1);
  };
  for (const root of children.get(undefined) ?? []) visit(root, 0);
  return rows;
}

/** About five ticks at 1, 2 or 5 times a power of ten microseconds. */
function tickStep(totalMicroseconds: number): number {
  const rough = totalMicroseconds / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= rough)!;
}

/** The trace as a waterfall: service and operation on the left, indented by depth; bars on a time axis; colours by service. */
export function drawTraceWaterfall(trace: JaegerTrace, title: string): TracePicture {
  const rows = spanRows(trace);
  const serviceOf = (span: JaegerSpan) => trace.processes[span.processID]?.serviceName ?? span.processID;
  const services = [...new Set(rows.map(({ span }) => serviceOf(span)))];
  const colourOf = (service: string) => SERVICE_COLOURS[services.indexOf(service) % SERVICE_COLOURS.length];
  const labelColumns = Math.max(
    ...rows.map(({ span, depth }) => `${INDENT.repeat(depth)}${serviceOf(span)}  ${span.operationName}`.length),
  );
  const timelineX = PADDING + Math.ceil(labelColumns * CHAR_WIDTH) + 16;
  const width = timelineX + TIMELINE_WIDTH + DURATION_WIDTH + PADDING;
  const rowsY = PADDING + TITLE_HEIGHT + AXIS_HEIGHT;
  const height = rowsY + rows.length * ROW_HEIGHT + PADDING;

  const start = Math.min(...trace.spans.map((span) => span.startTime));
  const end = Math.max(...trace.spans.map((span) => span.startTime + span.duration));
  // A trace of zero-length spans still gets an axis.
  const total = Math.max(end - start, 1);
  const xAt = (microseconds: number) => timelineX + ((microseconds - start) / total) * TIMELINE_WIDTH;

  const parts = [
    `<text x="${PADDING}" y="${PADDING + 15}" font-size="15" font-weight="bold" fill="#222">${escapeXml(title)}</text>`,
    `<text x="${width - PADDING}" y="${PADDING + 15}" text-anchor="end" fill="#666">${rows.length} spans, ${milliseconds(end - start)}</text>`,
    // Every other row shaded, under the grid.
    ...rows.flatMap((_, index) =>
      index % 2 === 1 ? [`<rect x="0" y="${rowsY + index * ROW_HEIGHT}" width="${width}" height="${ROW_HEIGHT}" fill="#f4f4f4"/>`] : [],
    ),
  ];
  const step = tickStep(total);
  for (let tick = 0; tick <= total; tick += step) {
    const x = xAt(start + tick);
    parts.push(
      `<line x1="${x}" y1="${rowsY - 6}" x2="${x}" y2="${height - PADDING}" stroke="#ddd"/>`,
      `<text x="${x}" y="${rowsY - 10}" text-anchor="middle" font-size="11" fill="#666">${milliseconds(tick)}</text>`,
    );
  }
  rows.forEach(({ span, depth }, index) => {
    const y = rowsY + index * ROW_HEIGHT;
    const service = serviceOf(span);
    const barX = xAt(span.startTime);
    // At least a pixel: a span shorter than one still shows where it happened.
    const barWidth = Math.max((span.duration / total) * TIMELINE_WIDTH, 1);
    const baseline = y + ROW_HEIGHT / 2 + 4.5;
    parts.push(
      `<text x="${PADDING}" y="${baseline}" xml:space="preserve">${INDENT.repeat(depth)}` +
        `<tspan fill="${colourOf(service)}" font-weight="bold">${escapeXml(service)}</tspan>` +
        `<tspan fill="#222">  ${escapeXml(span.operationName)}</tspan></text>`,
      `<rect x="${barX}" y="${y + (ROW_HEIGHT - BAR_HEIGHT) / 2}" width="${barWidth}" height="${BAR_HEIGHT}" rx="2" fill="${colourOf(service)}"/>`,
      `<text x="${barX + barWidth + 6}" y="${baseline}" font-size="11" fill="#444">${milliseconds(span.duration)}</text>`,
    );
  });
  const svg = svgDocument(width, height, parts);
  return { svg, png: renderPng(svg) };
}

/** Draws the waterfall and writes its PNG to `file`. */
export function writeTraceWaterfall(file: string, trace: JaegerTrace, title: string): TracePicture {
  const picture = drawTraceWaterfall(trace, title);
  writeFileSync(file, picture.png);
  return picture;
}
