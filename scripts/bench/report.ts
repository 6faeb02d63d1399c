// Writes a run's results: <stamp>.json (everything), <stamp>.md (the tables) and, when the run
// stepped a fan-out scenario through rates, <stamp>.png (end-to-end latency against offered
// load; drawn as SVG, rendered with @resvg/resvg-js). Each section of the tables is a module
// of report/, in the order they appear.
import fs from 'node:fs';
import path from 'node:path';
import { type Report } from './lib/types';
import { brokersTable } from './report/brokers';
import { chart, chartedScenarios } from './report/chart';
import { cpuTable } from './report/cpu';
import { feedTable } from './report/feed';
import { workloadSections } from './report/format';
import { header } from './report/header';
import { hotSection } from './report/hot';
import { kneeTable } from './report/knees';
import { noisyNeighbourSection } from './report/noisy-neighbour';
import { notes } from './report/notes';
import { probesSection } from './report/probes';
import { baselineRatios, floorRatios } from './report/ratios';
import { recoverySection } from './report/recovery';
import { registrationTable } from './report/registration';
import { relayTable } from './report/relay';
import { sdkTable } from './report/sdk';
import { stepsTable } from './report/steps';
import { traceExportTable } from './report/tracing';

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
  // A run of other scenarios alone (registration, recovery, noisy neighbour, relay) has no curve to draw.
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

export function renderMarkdown(report: Report, image: string | null): string {
  const { scenarios } = report;
  return [
    ...header(report),
    ...kneeTable(report),
    ...brokersTable(report),
    ...baselineRatios(report),
    ...floorRatios(report),
    ...workloadSections(scenarios, 'hot', 'Hot webhook', hotSection),
    ...workloadSections(scenarios, 'recovery', 'Recovery', recoverySection),
    ...workloadSections(scenarios, 'noisyNeighbour', 'Noisy neighbour', noisyNeighbourSection),
    ...workloadSections(scenarios, 'probes', 'Probes beside live traffic', probesSection),
    ...registrationTable(report),
    ...feedTable(report),
    ...relayTable(report),
    ...stepsTable(report),
    ...traceExportTable(report),
    ...sdkTable(report),
    ...cpuTable(report),
    ...notes(report),
    ...(image ? [`![End-to-end latency against offered load](${image})`, ''] : []),
  ].join('\n');
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
