// The README, the changelog and docs/ stand on their own: every link resolves inside the
// repository (the file, and the heading an anchor names), and none leads out of it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const pages = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The anchors a Markdown renderer gives a page's headings (GitHub's rule, for the text we write). */
function anchorsOf(markdown: string): Set<string> {
  const headings = withoutCodeBlocks(markdown).match(/^#{1,6} .+$/gm) ?? [];
  return new Set(
    headings.map((heading) =>
      heading
        .replace(/^#+ /, '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

function linksOf(markdown: string): string[] {
  return [...withoutCodeBlocks(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((match) => match[1]);
}

describe('the README and docs/', () => {
  it.each(pages)('%s links only to files and headings of this repository', (page) => {
    const links = linksOf(readFileSync(path.join(root, page), 'utf8'));
    const broken = links.filter((link) => {
      if (/^[a-z][a-z+.-]*:/i.test(link)) return true; // a scheme: it leaves the repository
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const target = file === '' ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file);
      if (!target.startsWith(root + path.sep) || !existsSync(target)) return true;
      return anchor !== undefined && !anchorsOf(readFileSync(target, 'utf8')).has(anchor);
    });
    expect(broken).toEqual([]);
  });

  it('finds the links and anchors it checks', () => {
    // Guards the checks above against a pattern that silently matches nothing.
    expect(linksOf('see [a](docs/api.md#x) and ![b](c.png)')).toEqual(['docs/api.md#x', 'c.png']);
    expect(anchorsOf('## Release 0.4.0: deliveries as `local` activities\n```\n# not a heading\n```')).toEqual(
      new Set(['release-040-deliveries-as-local-activities']),
    );
    expect(linksOf(readFileSync(path.join(root, 'README.md'), 'utf8')).length).toBeGreaterThan(5);
  });
});
