import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressPolicy, SafeHttp, type SafeResponse } from '@webutil/kit';
import { expect } from 'chai';
import { fingerprint } from '../src/checking/soft-404.js';
import { hash53 } from '../src/page/hash.js';
import { LinkCollector } from '../src/page/links.js';
import { nextTurn, parseStream, type TextSink } from '../src/page/parse-stream.js';

/** A liveness bound: the unbounded parse of these inputs took tens of seconds; a bounded one takes milliseconds. */
const BOUND_MS = 2_000;

function elapsed(run: () => void): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** Runs `work` with a 1 ms timer ticking; returns its result and the longest wait between two ticks. */
async function timerGapsDuring<T>(work: () => Promise<T>): Promise<{ result: T; longestGap: number }> {
  let longestGap = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 1);
  try {
    return { result: await work(), longestGap };
  } finally {
    clearInterval(ticker);
  }
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
    const { longestGap } = await timerGapsDuring(() =>
      Promise.all(
        Array.from({ length: 100 }, async () => {
          for (let piece = 0; piece < 3; piece++) {
            await nextTurn();
            busy(10);
          }
        }),
      ),
    );
    expect(longestGap).to.be.below(200);
  });
});

const ANCHORS = 3_000;
/** About 80 KB of nothing but links: thousands of URLs to resolve per socket chunk. */
const anchor = (i: number) => `<a href="/p/${i}">${i}</a>`;
const DENSE = `<!doctype html><body>${Array.from({ length: ANCHORS }, (_, i) => anchor(i)).join('')}`;
/** A 4-byte character whose UTF-16 halves sit on both sides of the 16 K-character piece boundary. */
const ACROSS = `${'x'.repeat(16 * 1024 - 1)}😀${'y'.repeat(100)}`;

describe('parseStream (reading a page body in turns)', () => {
  let server: http.Server;
  let origin: string;
  // A connection per page, so every body can wait unread in its socket at once.
  const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.1/32']), connectionsPerOrigin: 32 });

  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(req.url === '/across' ? ACROSS : DENSE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('lets timers run while many pages already received are parsed, their first pieces too', async () => {
    // Thirty bodies wait in their sockets before parsing starts, as when many pages of several
    // crawls arrive in one turn. Parsed where each arrived, they held a timer for a second or more.
    const responses = await Promise.all(Array.from({ length: 30 }, () => client.fetch(`${origin}/dense`)));
    const { result: collectors, longestGap } = await timerGapsDuring(() =>
      Promise.all(
        responses.map(async (res) => {
          const collector = new LinkCollector(new URL(res.url), 5_000);
          await parseStream(res, collector);
          return collector;
        }),
      ),
    );
    for (const collector of collectors) expect(collector.links).to.have.length(ANCHORS);
    expect(longestGap).to.be.below(250);
  });

  it('feeds at most 16 K characters at a time, never splitting a character, and samples the start', async () => {
    const pieces: string[] = [];
    const sink: TextSink = { write: (text) => void pieces.push(text), end: () => undefined };
    const res: SafeResponse = await client.fetch(`${origin}/across`);
    const sample = await parseStream(res, sink, 20);
    expect(pieces.join('')).to.equal(ACROSS);
    expect(Math.max(...pieces.map((p) => p.length))).to.be.at.most(16 * 1024 + 1);
    expect(pieces.some((p) => p.endsWith('x😀'))).to.equal(true);
    expect(sample).to.equal('x'.repeat(20));
  });
});
