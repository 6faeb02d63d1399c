// A picture of terminals, for the docs: what commands printed in a test run, drawn as SVG and
// rendered to PNG.
import { writeFileSync } from 'node:fs';
import { CHAR_WIDTH, escapeXml, renderPng, svgDocument } from './picture';

export interface Terminal {
  /** The command typed, shown after a prompt. */
  command: string;
  /** What it printed. */
  output: string;
}

const LINE_HEIGHT = 18;
const PADDING = 14;
const GAP = 16;

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
  writeFileSync(file, renderPng(svgDocument(width, y - GAP, parts)));
}
