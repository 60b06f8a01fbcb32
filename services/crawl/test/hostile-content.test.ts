import { expect } from 'chai';
import { fingerprint } from '../src/checking/soft-404.js';
import { hash53 } from '../src/page/hash.js';
import { LinkCollector } from '../src/page/links.js';
import { nextTurn } from '../src/page/parse-stream.js';

/** A liveness bound: the unbounded parse of these inputs took tens of seconds; a bounded one takes milliseconds. */
const BOUND_MS = 2_000;

function elapsed(run: () => void): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

describe('hostile content in the crawl readers', () => {
  it('lets link extraction keep the links before a nesting bomb and say the page was cut short', () => {
    const collector = new LinkCollector(new URL('https://a.test/'), 5_000);
    const ms = elapsed(() => {
      collector.write(`<a href="/before">before</a>${'<b>'.repeat(350_000)}<a href="/after">after</a>`);
      collector.end();
    });
    expect(collector.links.map((l) => l.originalHref)).to.deep.equal(['/before']);
    expect(collector.truncated).to.equal(true);
    expect(ms).to.be.below(BOUND_MS);
  });

  it('keeps at most 1,000 characters of an anchor text that never ends', () => {
    const collector = new LinkCollector(new URL('https://a.test/'), 5_000);
    collector.write('<a href="/x">');
    for (let i = 0; i < 1_000; i++) collector.write('word '.repeat(1_000));
    collector.end();
    expect(collector.links[0]?.text.length).to.equal(500);
  });

  it('fingerprints regex-hostile bodies (unclosed tags) in linear time', () => {
    // Four times the 64 KiB sample: a pattern that rescans the rest of the body from every `<`
    // (the old ones took 1.7-1.9 s on 64 KiB) takes 16 times that here; a linear read, milliseconds.
    const size = 4 * 64 * 1024;
    for (const unit of ['<s', '<title', '<script']) {
      const body = unit.repeat(Math.floor(size / unit.length));
      const ms = elapsed(() => fingerprint(body, 'https://a.test/x', undefined));
      expect(ms, unit).to.be.below(BOUND_MS);
    }
    const page = fingerprint(
      '<title>Not found</title><script>var hidden = 1;</script><p>Sorry, that page is gone</p>',
      'https://a.test/x',
      undefined,
    );
    const hashes = (words: string[]) => words.map(hash53).sort((a, b) => a - b);
    expect(page.title.hashes).to.deep.equal(hashes(['not', 'found']));
    expect(page.words.hashes).to.deep.equal(hashes(['sorry', 'that', 'page', 'is', 'gone']));
  });

  it('lets timers run between the pieces of many concurrent readers, not after all of them', async () => {
    // 100 readers each do 10 ms of work per turn (a chunk of a big page). Run back to back in one
    // turn, they would hold a timer for a second; one per turn, for one piece.
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 1);
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        for (let piece = 0; piece < 3; piece++) {
          await nextTurn();
          busy(10);
        }
      }),
    );
    clearInterval(ticker);
    expect(longestGap).to.be.below(200);
  });
});
