import type { SafeResponse } from '@webutil/kit';
import { expect } from 'chai';
import { type PageRead, type PageReadOptions, readAuditPage } from '../src/site-audit/page-read.js';
import { PageReadThreads } from '../src/site-audit/page-read-threads.js';

const OPTIONS: PageReadOptions = { linksPerPage: 5_000, resources: true, sampleChars: 64 * 1024 };

/** A response whose body comes in chunks of `chunkBytes`, as a socket gives it. */
function response(url: string, contentType: string, text: string, chunkBytes = 4_096): SafeResponse {
  const bytes = Buffer.from(text);
  return {
    url,
    status: 200,
    statusText: 'OK',
    headers: { 'content-type': contentType, 'x-robots-tag': 'noarchive' },
    redirects: [],
    redirectLimitReached: false,
    timeToHeadersMs: 12.4,
    body: (async function* () {
      for (let at = 0; at < bytes.length; at += chunkBytes) yield bytes.subarray(at, at + chunkBytes);
    })(),
    truncated: false,
    text: async () => text,
    dump: async () => undefined,
  };
}

/** A page with one of each thing an audit reads: links of every kind, targets, head facts, CSS, JSON-LD. */
function page(i: number, filler = 0): string {
  return (
    `<!doctype html><html lang="en"><head><title>Page ${i}</title>` +
    '<meta name="description" content="A page with one of each thing.">' +
    `<link rel="canonical" href="/p/${i}"><link rel="stylesheet" href="/site.css">` +
    '<link rel="alternate" hreflang="de" href="/de/">' +
    '<style>body { background: url(/bg.png) }</style>' +
    '<script type="application/ld+json">{"@type": "WebPage"</script></head>' +
    `<body><h1 id="top">Page ${i}</h1><h1>Again</h1><a name="old"></a>` +
    `<p>Words of page ${i} ${'more words '.repeat(filler)}</p>` +
    '<a href="/p/1#top">one</a> <a href="/p/2#a">two</a> <a href="/p/2#b">two again</a> ' +
    '<a href="https://example.com/x">out</a> <a href="#top">up</a> <a href="#nowhere">nowhere</a> ' +
    '<img src="/img/a.png"><img src="/img/b.png" alt=""><img src="http://cdn.test/c.png" alt="c">' +
    '<script src="/app.js"></script><iframe src="/frame.html"></iframe>' +
    `<div style="background: url('/div.png')"></div></body></html>`
  );
}

const MARKDOWN = [
  '# Guide',
  '',
  'See [the install](#install), [another page](/docs/other.md#usage) and <https://example.com/m>.',
  '',
  '## Install',
  '',
  '![logo](/logo.png) and <a href="/raw.html">raw HTML</a>.',
].join('\n');

/** What a read gives, comparable: the targets as stored. */
const plain = (read: PageRead) => ({ ...read, targets: read.targets.toStored() });

describe('page reads on a thread (decision 0501)', function () {
  // A thread's start loads the parse's modules (under tsx, compiled first).
  this.timeout(60_000);
  const pools: PageReadThreads[] = [];
  const pool = (threads: number) => {
    const made = new PageReadThreads(threads);
    pools.push(made);
    return made;
  };
  after(async () => {
    for (const made of pools) await made.close();
  });

  it('reads on a thread what the event loop reads: links, targets, facts and sample, HTML and Markdown', async () => {
    const threads = pool(1);
    const cases = [
      ['http://site.test/p/7', 'text/html; charset=utf-8', page(7)],
      ['http://site.test/docs/guide.md', 'text/markdown', MARKDOWN],
    ] as const;
    for (const [url, type, text] of cases) {
      const here = plain(await readAuditPage(response(url, type, text), OPTIONS));
      const there = plain(await threads.read(response(url, type, text), OPTIONS));
      expect(threads.running).to.equal(1);
      expect(there).to.deep.equal(here);
      expect(here.links.length).to.be.greaterThan(4);
      expect(here.targets.hashes.length).to.be.greaterThan(0);
    }
    // Over https, the http: image is mixed content.
    const html = plain(await threads.read(response('https://site.test/p/7', 'text/html', page(7)), OPTIONS));
    expect(html.facts).to.include({ title: 'Page 7', h1Count: 2, lang: 'en', jsonLdInvalid: 1, ttfbMs: 12 });
    expect(html.facts.mixedContent).to.deep.equal(['http://cdn.test/c.png']);
    expect(html.links.map((l) => l.url)).to.include.members([
      'https://site.test/p/2',
      'https://site.test/bg.png',
      'https://site.test/div.png',
      'https://site.test/site.css',
    ]);
    expect(html.sample.startsWith('<!doctype html>')).to.equal(true);
  });

  it('parses a body past 256 KB on the event loop as it streams, with the same result', async () => {
    const threads = pool(1);
    const text = page(3, 30_000);
    expect(text.length).to.be.greaterThan(256 * 1024);
    const here = plain(await readAuditPage(response('http://site.test/p/3', 'text/html', text), OPTIONS));
    const there = plain(await threads.read(response('http://site.test/p/3', 'text/html', text), OPTIONS));
    expect(there).to.deep.equal(here);
    expect(threads.running).to.equal(0);
    expect(here.facts.htmlChars).to.equal(text.length);
  });

  it('reads a page whose thread died on the event loop instead, and ends an idle thread', async () => {
    const threads = pool(1);
    const url = 'http://site.test/p/9';
    const here = plain(await readAuditPage(response(url, 'text/html', page(9)), OPTIONS));
    const reading = threads.read(response(url, 'text/html', page(9)), OPTIONS);
    // The thread is started once the body is in; it is ended before it can answer (it is still starting).
    const started = Date.now();
    while (threads.running === 0 && Date.now() - started < 10_000) await new Promise((r) => setImmediate(r));
    expect(threads.running).to.equal(1);
    await threads.close();
    expect(plain(await reading)).to.deep.equal(here);
    // A thread started again answers, then is ended after a second with no read.
    expect(plain(await threads.read(response(url, 'text/html', page(9)), OPTIONS))).to.deep.equal(here);
    expect(threads.running).to.equal(1);
    // A liveness bound, ten times the idle second and more.
    const answered = Date.now();
    while (threads.running > 0 && Date.now() - answered < 15_000) await new Promise((r) => setTimeout(r, 50));
    expect(threads.running).to.equal(0);
  });
});
