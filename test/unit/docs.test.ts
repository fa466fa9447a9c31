import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The README is a front page and docs/ stand alone: every link stays inside the repository and
 * lands on a page and heading that exist, every page is one click from the README, and every file of
 * the repository the docs name exists.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DOCS = path.join(ROOT, 'docs');

const pagesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? pagesUnder(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []));
const PAGES = [path.join(ROOT, 'README.md'), ...pagesUnder(DOCS)];
const read = (file: string) => readFileSync(file, 'utf8');
const name = (file: string) => path.relative(ROOT, file);

/** The page without its fenced code blocks, where a link or a path is an example, not a reference. */
const prose = (text: string) => text.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?\n\1\2\s*$/gm, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

function linksOf(text: string): string[] {
  return [...prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

describe('the README and docs/', () => {
  it('when the README is read, then it is a front page of at most 250 lines', () => {
    expect(read(path.join(ROOT, 'README.md')).split('\n').length).toBeLessThanOrEqual(250);
  });

  it('when a page links, then the link stays in the repository and lands on an existing file and heading', () => {
    const problems: string[] = [];
    for (const page of PAGES) {
      for (const link of linksOf(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
          problems.push(`${name(page)}: ${link} leaves the repository`);
          continue;
        }
        const [target, anchor] = link.split('#');
        const file = target ? path.resolve(path.dirname(page), target) : page;
        if (!file.startsWith(ROOT + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`)) problems.push(`${name(page)}: ${link} leaves the repository`);
        else if (!existsSync(file)) problems.push(`${name(page)}: ${link} names a missing file`);
        else if (anchor && !(file.endsWith('.md') && anchorsOf(read(file)).has(anchor))) problems.push(`${name(page)}: ${link} names a missing heading`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('when a page is added to docs/, then the README links to it (and a page in a folder of docs/ is linked from some page)', () => {
    const targets = (page: string) => linksOf(read(page)).map((link) => path.resolve(path.dirname(page), link.split('#')[0]!));
    const fromReadme = new Set(targets(path.join(ROOT, 'README.md')));
    const fromAnyPage = new Set(PAGES.flatMap(targets));
    const unlinked = pagesUnder(DOCS).filter((page) => (path.dirname(page) === DOCS ? !fromReadme.has(page) : !fromAnyPage.has(page)));

    // The fix: a line in the README's "Documentation" list.
    expect(unlinked.map(name)).toEqual([]);
  });

  it('when a page names a file of the repository, then the file exists', () => {
    const GENERATED = /^(dist|data|node_modules|test-results|bench\/results)\//;
    const missing: string[] = [];
    for (const page of PAGES) {
      for (const [, named] of prose(read(page)).matchAll(/`((?:src|test|scripts|bench|console|api-reference|migrations|deploy|docker|assets|docs|\.ci)\/[^`\s*<>{}]*)`/g)) {
        const file = named!.replace(/\/$/, '');
        if (!GENERATED.test(file) && !existsSync(path.join(ROOT, file))) missing.push(`${name(page)}: ${named}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
