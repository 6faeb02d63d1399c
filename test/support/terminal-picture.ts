// A picture of terminals, for the docs: what commands printed in a test run, drawn as SVG and
// rendered to PNG with resvg (the renderer the bench's charts use).
import { writeFileSync } from 'node:fs';
import { Resvg } from '@resvg/resvg-js';

export interface Terminal {
  /** The command typed, shown after a prompt. */
  command: string;
  /** What it printed. */
  output: string;
}

const FONT_SIZE = 13;
const LINE_HEIGHT = 18;
/** DejaVu Sans Mono's advance at FONT_SIZE. */
const CHAR_WIDTH = 7.83;
const PADDING = 14;
const GAP = 16;

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The terminals one under the other, each a dark window, written as a PNG to `file`. */
export function writeTerminalPicture(file: string, terminals: Terminal[]): void {
  const windows = terminals.map(({ command, output }) => [`$ ${command}`, ...output.trimEnd().split('\n')]);
  const columns = Math.max(...windows.flat().map((line) => line.length));
  const width = Math.ceil(columns * CHAR_WIDTH) + 2 * PADDING;
  let y = 0;
  const parts: string[] = [];
  for (const lines of windows) {
    const height = lines.length * LINE_HEIGHT + 2 * PADDING;
    parts.push(`<rect x="0" y="${y}" width="${width}" height="${height}" rx="6" fill="#1e1e1e"/>`);
    lines.forEach((line, index) => {
      const colour = index === 0 ? '#9cdcfe' : '#d4d4d4';
      const baseline = y + PADDING + (index + 1) * LINE_HEIGHT - 5;
      parts.push(`<text x="${PADDING}" y="${baseline}" fill="${colour}" xml:space="preserve">${escapeXml(line)}</text>`);
    });
    y += height + GAP;
  }
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y - GAP}" ` +
    `font-family="DejaVu Sans Mono" font-size="${FONT_SIZE}">${parts.join('')}</svg>`;
  const png = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans Mono' }, background: 'white' })
    .render()
    .asPng();
  writeFileSync(file, png);
}
