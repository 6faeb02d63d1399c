// What the test suites' pictures for the docs share: SVG text in DejaVu Sans Mono (a monospace
// font, so that a text's width is its length times one advance) rendered to PNG with resvg (the
// renderer the bench's charts use).
import { Resvg } from '@resvg/resvg-js';

export const FONT_FAMILY = 'DejaVu Sans Mono';
export const FONT_SIZE = 13;
/** DejaVu Sans Mono's advance at FONT_SIZE. */
export const CHAR_WIDTH = 7.83;

export const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The SVG document of `parts` (SVG elements) at that size, its text in DejaVu Sans Mono. */
export const svgDocument = (width: number, height: number, parts: string[]) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
  `font-family="${FONT_FAMILY}" font-size="${FONT_SIZE}">${parts.join('')}</svg>`;

/** The SVG rendered on white with the system's fonts. */
export const renderPng = (svg: string): Buffer =>
  new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: FONT_FAMILY }, background: 'white' }).render().asPng();
