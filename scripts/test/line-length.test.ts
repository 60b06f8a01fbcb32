import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../src/local-stack.js';

const MAX_LINE = 120;

/** The hand-written sources whose lines Biome cannot always wrap itself (it never splits a string literal). */
const CHECKED = ['*.ts', '*.mjs', '*.css'];

/** Generated output, never hand-formatted. */
const GENERATED = /(?:^|\/)(?:dist|proto\/gen)\//;

/** The 1-based numbers and lengths of the lines of `text` longer than `max` characters. */
function longLines(text: string, max = MAX_LINE): { line: number; length: number }[] {
  return text
    .split(/\r?\n/)
    .map((content, i) => ({ line: i + 1, length: [...content].length }))
    .filter(({ length }) => length > max);
}

/** Issue 7, item 11: lines of at most 120 characters. */
describe('line length of the tracked sources', () => {
  const files = execFileSync('git', ['ls-files', '-z', '--', ...CHECKED], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file && !GENERATED.test(file));

  it('finds the sources of every package', () => {
    expect(files).to.include.members([
      'services/kit/src/grpc-server.ts',
      'edge/src/api-index.ts',
      'edge/test/website.e2e.test.ts',
      'scripts/bench/crawl.ts',
    ]);
    expect(files.filter((file) => file.endsWith('.css'))).to.not.be.empty;
    expect(files.filter((file) => file.endsWith('.mjs'))).to.not.be.empty;
  });

  it(`every line is at most ${MAX_LINE} characters`, () => {
    const tooLong = files.flatMap((file) =>
      longLines(readFileSync(path.join(REPO_ROOT, file), 'utf8')).map(
        ({ line, length }) => `${file}:${line} (${length} characters)`,
      ),
    );
    expect(tooLong, 'wrap these lines (split long strings with +)').to.deep.equal([]);
  });

  it('counts characters, not bytes, and flags only lines past the limit', () => {
    const sample = ['a'.repeat(120), `const s = '${'x'.repeat(110)}';`, 'é'.repeat(120), '', 'b'.repeat(121)].join(
      '\n',
    );
    expect(longLines(sample)).to.deep.equal([
      { line: 2, length: 123 },
      { line: 5, length: 121 },
    ]);
    expect(longLines('short\r\nlines\r\n')).to.deep.equal([]);
  });

  it('skips generated output', () => {
    expect(
      ['proto/gen/webutil/crawl/v1/crawl.ts', 'edge/dist/main.js', 'edge/src/main.ts'].filter((f) => GENERATED.test(f)),
    ).to.deep.equal(['proto/gen/webutil/crawl/v1/crawl.ts', 'edge/dist/main.js']);
  });
});
