import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../src/local-stack.js';

/** The repository's documents: the README and every page under docs/, its folders included. */
const documents = [
  'README.md',
  ...readdirSync(path.join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name.split(path.sep).join('/')}`)
    .sort(),
];

/** The relative link targets of a markdown page, outside code blocks, without their #fragment. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, '');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => decodeURI(target.split('#')[0] ?? ''));
}

/** Issue 12, item 8: a clone has every page the documents link to. */
describe('links in the README and docs/', () => {
  // What a fresh clone holds: the tracked files, and the folders that contain them.
  const tracked = new Set(
    execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\0').filter(Boolean),
  );
  const folders = new Set(
    [...tracked].flatMap((file) =>
      file
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );

  it('finds the documents and their links', () => {
    expect(documents).to.include.members([
      'README.md',
      'docs/architecture.md',
      'docs/benchmarks.md',
      'docs/decisions/README.md',
      'docs/decisions/0001-error-envelope-and-statuses.md',
    ]);
    expect(relativeLinks(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'))).to.include('docs/architecture.md');
  });

  for (const document of documents) {
    it(`${document}: every relative link is a file or folder in the repository`, () => {
      const links = relativeLinks(readFileSync(path.join(REPO_ROOT, document), 'utf8'));
      const broken = links.filter((target) => {
        const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(document), target)).replace(/\/$/, '');
        return !tracked.has(resolved) && !folders.has(resolved);
      });
      expect(broken, `broken links in ${document}`).to.deep.equal([]);
    });
  }

  it('reads links as markdown does: fragments dropped, absolute URLs and code blocks skipped', () => {
    const page = [
      'See [the API](docs/api.md#routes), [a site](https://example.com/x.md) and [mail](mailto:a@b.c).',
      '[top](#top) [chart](<helm/webutil> "the chart")',
      '```sh',
      'echo "[not a link](nowhere.md)"',
      '```',
    ].join('\n');
    expect(relativeLinks(page)).to.deep.equal(['docs/api.md', 'helm/webutil']);
  });
});

/** Issue 30, item 4: every decision record is listed in the index, the index lists no missing record. */
describe('the decision records index', () => {
  const folder = path.join(REPO_ROOT, 'docs', 'decisions');
  const records = readdirSync(folder)
    .filter((name) => /^\d{4}-.+\.md$/.test(name))
    .sort();
  const indexed = relativeLinks(readFileSync(path.join(folder, 'README.md'), 'utf8')).filter((target) =>
    /^\d{4}-.+\.md$/.test(target),
  );

  it('lists every record once, and only records that exist', () => {
    expect(records).to.not.be.empty;
    expect([...indexed].sort()).to.deep.equal(records);
  });
});
