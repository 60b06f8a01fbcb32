import type http from 'node:http';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { creditsHeader, expectFailure, json } from './billing-helpers.js';
import { byUrl, pollJob, post, startCrawl } from './crawl-helpers.js';

/**
 * Resources checked beside anchors (decision 0214) and the link options (0215, 0216), through the
 * REST edge, against two fixture sites: `main` on 127.0.0.1 and `other` on 127.0.0.2. Both record
 * every request with its Authorization header.
 */

const AUTH = 'Basic c3RhZ2U6c2VjcmV0';
const HTML = 'text/html; charset=utf-8';

interface Seen {
  method: string;
  path: string;
  auth: string | undefined;
}

/** A site that answers from a table of paths (404 otherwise) and records what it was asked. */
async function recordingSite(host: string, answer: (path: string, req: http.IncomingMessage) => Answer) {
  const site = await startFixtureSite({ host });
  const seen: Seen[] = [];
  site.route('*', (req, res, url) => {
    seen.push({ method: req.method ?? 'GET', path: url.pathname, auth: req.headers.authorization });
    const a = answer(url.pathname, req);
    res.writeHead(a.status, { 'content-type': a.type ?? HTML, ...(a.location ? { location: a.location } : {}) });
    res.end(a.body ?? '');
  });
  return { site, seen };
}

interface Answer {
  status: number;
  type?: string;
  body?: string;
  location?: string;
}

const page = (body: string, head = ''): Answer => ({
  status: 200,
  body: `<!doctype html><html><head><title>t</title>${head}</head><body>${body}</body></html>`,
});

describe('resources and link options through the edge', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let main: FixtureSite;
  let other: FixtureSite;
  let mainSeen: Seen[];
  let otherSeen: Seen[];
  let home: string;
  const url = (path: string) => main.url(path);
  const otherUrl = (path: string) => other.url(path);

  before(async () => {
    const o = await recordingSite('127.0.0.2', (path) => {
      if (path === '/cdn/missing.png') return { status: 404 };
      if (['/page', '/landing', '/landing-from-secure', '/ext'].includes(path)) return page('elsewhere');
      return { status: 404 };
    });
    other = o.site;
    otherSeen = o.seen;
    const m = await recordingSite('127.0.0.1', (path, req) => {
      if (path.startsWith('/secure/')) {
        if (req.headers.authorization !== AUTH) return { status: 401 };
        if (path === '/secure/')
          return page(
            `<img src="/secure/logo.png"><a href="/secure/inner.html">in</a><a href="/secure/away">away</a>` +
              `<a href="${otherUrl('/ext')}">ext</a>`,
          );
        if (path === '/secure/inner.html') return page('<a href="/secure/">back</a>');
        if (path === '/secure/logo.png') return { status: 200, type: 'image/png', body: 'png' };
        if (path === '/secure/away') return { status: 302, location: otherUrl('/landing-from-secure') };
        return { status: 404 };
      }
      switch (path) {
        case '/':
          return page(
            `<img src="/img/missing.png" alt="Missing">
            <img src="/img/ok.png" srcset="/img/ok.png 1x, /img/missing-2x.png 2x">
            <picture><source srcset="/img/missing.webp" type="image/webp"><img src="/img/ok.png"></picture>
            <iframe src="/frame/missing.html"></iframe><iframe src="/frame/ok.html"></iframe>
            <video src="/media/missing.mp4"></video><audio src="/media/missing.mp3"></audio>
            <object data="/obj/missing.pdf"></object><img src="${otherUrl('/cdn/missing.png')}">
            <a href="/a.html">A</a><a href="/private/p.html">P</a><a href="/forbidden">F</a>
            <a href="/deep/1.html">Deep</a><a href="${otherUrl('/page')}">Other</a><a href="/away">Away</a>`,
            `<link rel="stylesheet" href="/css/site.css"><link rel="stylesheet" href="/css/missing.css">
            <link rel="icon" href="/missing.ico"><link rel="preload" href="/fonts/missing.woff2" as="font">
            <link rel="manifest" href="/missing.webmanifest"><link rel="alternate" href="/feed.xml">
            <meta property="og:image" content="/img/og-missing.png">
            <script src="/js/missing.js"></script><script src="/js/app.js"></script>`,
          );
        case '/a.html':
          return page('<img src="/img/missing.png"><script src="/js/missing.js"></script><a href="/">home</a>');
        case '/private/p.html':
          return page('<a href="/private/q.html">q</a>');
        case '/private/q.html':
          return page('q');
        case '/forbidden':
          return { status: 403, body: 'forbidden' };
        case '/frame/ok.html':
          return page('<a href="/frame/only-here.html">never followed</a>');
        case '/away':
          return { status: 302, location: otherUrl('/landing') };
        case '/css/site.css':
          return { status: 200, type: 'text/css', body: 'body{}' };
        case '/js/app.js':
          return { status: 200, type: 'text/javascript', body: '1' };
        case '/img/ok.png':
          return { status: 200, type: 'image/png', body: 'png' };
      }
      const deep = /^\/deep\/(\d)\.html$/.exec(path);
      if (deep) {
        const n = Number(deep[1]);
        return page(n < 5 ? `<a href="/deep/${n + 1}.html">next</a>` : 'end');
      }
      return { status: 404 };
    });
    main = m.site;
    mainSeen = m.seen;
    home = url('/');
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { LINK_TIMEOUT_MS: '3000' } });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([main?.close(), other?.close()]);
  });

  /** Every missing resource of the home page, with the element it is on. */
  const missingResources = () =>
    new Map([
      [url('/css/missing.css'), 'link'],
      [url('/missing.ico'), 'link'],
      [url('/fonts/missing.woff2'), 'link'],
      [url('/missing.webmanifest'), 'link'],
      // rel=alternate names another form of the page: checked too (decision 0302).
      [url('/feed.xml'), 'link'],
      [url('/img/og-missing.png'), 'meta'],
      [url('/js/missing.js'), 'script'],
      [url('/img/missing.png'), 'img'],
      [url('/img/missing-2x.png'), 'img'],
      [url('/img/missing.webp'), 'source'],
      [url('/frame/missing.html'), 'iframe'],
      [url('/media/missing.mp4'), 'video'],
      [url('/media/missing.mp3'), 'audio'],
      [url('/obj/missing.pdf'), 'object'],
      [otherUrl('/cdn/missing.png'), 'img'],
    ]);

  function expectResources(links: any[], summary: any): void {
    for (const [missing, element] of missingResources()) {
      const records = links.filter((l) => l.url === missing);
      expect(records, missing).to.have.length(1);
      expect(records[0], missing).to.include({ element, severity: 'broken', statusCode: 404 });
    }
    for (const ok of ['/css/site.css', '/js/app.js', '/img/ok.png', '/frame/ok.html']) {
      const records = links.filter((l) => l.url === url(ok));
      expect(records, ok).to.have.length(1);
      expect(records[0], ok).to.include({ severity: 'ok', statusCode: 200 });
    }
    const anchors = links.filter((l) => l.element === 'a');
    expect(anchors.map((l) => l.url)).to.include.members([url('/a.html'), url('/forbidden'), otherUrl('/page')]);
    expect(links.filter((l) => l.element !== 'a'))
      .to.have.length(summary.resources)
      .and.have.length(19);
  }

  it('checks a page’s resources by default, each missing one once with its element', async () => {
    const res = await stack.api('/v1/broken-links', post({ url: home }));
    const body = await json(res);
    expect(res.status, JSON.stringify(body.error)).to.equal(200);
    expectResources(body.data.links, body.data.summary);
    expect(body.data.totalLinks).to.equal(body.data.links.length);

    const anchorsOnly = (await json(await stack.api('/v1/broken-links', post({ url: home, checkResources: false }))))
      .data;
    expect(anchorsOnly.summary.resources).to.equal(0);
    expect(anchorsOnly.links.every((l: any) => l.element === 'a')).to.equal(true);
    expect(anchorsOnly.links).to.have.length(6);
  });

  it('link-extract keeps the spec’s anchors-only counts unless includeResources=true', async () => {
    const plain = (await json(await stack.api(`/v1/link-extract?url=${encodeURIComponent(home)}`))).data;
    expect(plain.counts).to.deep.equal({ total: 6, internal: 5, external: 1, mailto: 0, tel: 0 });
    expect(plain.links.some((l: any) => 'element' in l)).to.equal(false);
    const all = (await json(await stack.api(`/v1/link-extract?url=${encodeURIComponent(home)}&includeResources=true`)))
      .data;
    expect(all.counts).to.deep.equal({ total: 25, internal: 23, external: 2, mailto: 0, tel: 0 });
    expect(byUrl<any>(all.links).get(url('/img/og-missing.png'))).to.include({ element: 'meta' });
    expect(all.links.every((l: any) => typeof l.element === 'string')).to.equal(true);
  });

  it('crawls a site checking resources once across pages, never following them as pages', async () => {
    const before = mainSeen.length;
    const jobId = await startCrawl(stack, 'broken-links', home);
    const { job } = await pollJob(stack, 'broken-links', jobId);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    const r = job.result;
    expectResources(r.links, r.summary);
    const links = byUrl<any>(r.links);
    expect(links.get(url('/img/missing.png'))).to.include({ sourceCount: 2, element: 'img' });
    expect(links.get(url('/js/missing.js'))).to.include({ sourceCount: 2, element: 'script' });
    const pages = byUrl<any>(r.pages);
    expect(pages.has(url('/a.html'))).to.equal(true);
    expect(pages.has(url('/deep/5.html'))).to.equal(true);
    // The iframe's page is a resource: checked, not read for its links.
    expect(pages.has(url('/frame/ok.html'))).to.equal(false);
    const asked = mainSeen.slice(before).map((s) => s.path);
    expect(asked).to.not.include('/frame/only-here.html');
  });

  it('leaves out what exclude matches and other sites without checkExternal; acceptStatus and maxDepth', async () => {
    const otherBefore = otherSeen.length;
    const mainBefore = mainSeen.length;
    const jobId = await startCrawl(stack, 'broken-links', home, {
      exclude: ['**/private/**', '**/*.webmanifest'],
      checkExternal: false,
      acceptStatus: [403, '500-599'],
      maxDepth: 2,
    });
    const { job } = await pollJob(stack, 'broken-links', jobId);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    const r = job.result;
    const urls = r.links.map((l: any) => l.url);
    expect(urls.filter((u: string) => u.includes('/private/') || u.endsWith('.webmanifest'))).to.deep.equal([]);
    expect(r.pages.filter((p: any) => p.url.includes('/private/'))).to.deep.equal([]);
    expect(r.links.filter((l: any) => l.type === 'external')).to.deep.equal([]);
    expect(r.summary.external).to.equal(0);
    const otherAsked = otherSeen.slice(otherBefore).map((s) => s.path);
    expect(otherAsked).to.not.include.members(['/page']);
    expect(otherAsked).to.not.include('/cdn/missing.png');
    const links = byUrl<any>(r.links);
    expect(links.get(url('/forbidden'))).to.include({ severity: 'ok', statusCode: 403 });
    expect(links.get(url('/forbidden')).reason).to.contain('acceptStatus');
    expect(links.get(url('/img/missing.png'))).to.include({ severity: 'broken' });
    // Depth 2 at most: /deep/2.html is read, /deep/3.html (depth 3) only checked.
    const pages = byUrl<any>(r.pages);
    expect(pages.get(url('/deep/2.html'))).to.include({ depth: 2 });
    expect(pages.has(url('/deep/3.html'))).to.equal(false);
    expect(links.get(url('/deep/3.html'))).to.include({ severity: 'ok' });
    const deep3 = mainSeen.slice(mainBefore).filter((s) => s.path === '/deep/3.html');
    expect(deep3.map((s) => s.method)).to.not.include('GET');
    expect(Math.max(...r.pages.map((p: any) => p.depth))).to.equal(2);
  });

  it('follows only what include matches, up to maxPages', async () => {
    const jobId = await startCrawl(stack, 'broken-links', home, { include: ['**/deep/**'], maxPages: 3 });
    const { job } = await pollJob(stack, 'broken-links', jobId);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    expect(job.progress.pagesCap).to.equal(3);
    const r = job.result;
    expect(r).to.include({ pagesCrawled: 3, truncatedPages: true });
    expect(r.links.map((l: any) => l.url).every((u: string) => u.includes('/deep/'))).to.equal(true);
    expect(r.pages.map((p: any) => new URL(p.url).pathname)).to.deep.equal(['/', '/deep/1.html', '/deep/2.html']);

    const entryOnly = await pollJob(
      stack,
      'broken-links',
      await startCrawl(stack, 'broken-links', home, { maxDepth: 0 }),
    );
    expect(entryOnly.job.result.pages.map((p: any) => p.url)).to.deep.equal([home]);
    expect(entryOnly.job.result.truncatedPages).to.equal(false);

    const extractId = await startCrawl(stack, 'link-extract', home, { includeResources: true, maxPages: 1 });
    const extract = await pollJob(stack, 'link-extract', extractId);
    expect(extract.job.status).to.equal('done');
    expect(extract.job.progress).to.include({ pagesScanned: 1, pagesCap: 1 });
    expect(byUrl<any>(extract.job.result.links).get(url('/js/missing.js'))).to.include({ element: 'script' });
  });

  it('sends headers to the entry URL’s origin only, never to another, nor through a redirect off it', async () => {
    const secure = url('/secure/');
    // Without the header, the staging page is not there to check.
    await expectFailure(await stack.api('/v1/broken-links', post({ url: secure })), 400, 'target_http_error');
    const otherBefore = otherSeen.length;
    const mainBefore = mainSeen.length;
    const check = await stack.api('/v1/broken-links', post({ url: secure, headers: { Authorization: AUTH } }));
    const checked = (await json(check)).data;
    expect(check.status).to.equal(200);
    const links = byUrl<any>(checked.links);
    expect(links.get(url('/secure/inner.html'))).to.include({ severity: 'ok', statusCode: 200 });
    expect(links.get(url('/secure/logo.png'))).to.include({ severity: 'ok', element: 'img' });
    expect(links.get(url('/secure/away'))).to.include({ redirected: true, statusCode: 200 });

    const jobId = await startCrawl(stack, 'broken-links', secure, { headers: { Authorization: AUTH } });
    const { job } = await pollJob(stack, 'broken-links', jobId);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    expect(byUrl<any>(job.result.pages).get(url('/secure/inner.html'))).to.include({ statusCode: 200 });
    expect(JSON.stringify(job)).to.not.contain(AUTH);

    const toOther = otherSeen.slice(otherBefore);
    expect(toOther.map((s) => s.path)).to.include.members(['/landing-from-secure', '/ext']);
    expect(toOther.filter((s) => s.auth !== undefined)).to.deep.equal([]);
    const toMain = mainSeen.slice(mainBefore).filter((s) => s.path.startsWith('/secure/'));
    expect(toMain).to.not.be.empty;
    expect(toMain.filter((s) => s.auth !== AUTH)).to.deep.equal([]);
  });

  it('answers each bad option with a 400 naming the field, and spends nothing', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ['/v1/broken-links', { checkResources: 'yes' }, 'invalid_request', /^checkResources must be true or false$/],
      ['/v1/broken-links', { checkExternal: 1 }, 'invalid_request', /^checkExternal must be true or false$/],
      ['/v1/broken-links', { include: '**' }, 'invalid_request', /^include must be an array/],
      ['/v1/broken-links', { exclude: Array(51).fill('**') }, 'invalid_request', /^exclude must have at most 50/],
      ['/v1/broken-links', { exclude: [''] }, 'invalid_request', /^exclude must not hold an empty/],
      ['/v1/broken-links', { exclude: ['[z-a]'] }, 'invalid_option', /^exclude\[0\] is not a valid glob/],
      ['/v1/broken-links', { acceptStatus: ['99'] }, 'invalid_request', /^acceptStatus entries must be/],
      ['/v1/broken-links', { acceptStatus: ['300-200'] }, 'invalid_request', /^acceptStatus entries must be/],
      ['/v1/broken-links', { acceptStatus: Array(21).fill(200) }, 'invalid_request', /^acceptStatus must have/],
      ['/v1/broken-links', { headers: { Host: 'evil.test' } }, 'invalid_option', /^headers may not set Host$/],
      ['/v1/broken-links', { headers: { Connection: 'x' } }, 'invalid_option', /^headers may not set Connection$/],
      ['/v1/broken-links', { headers: { 'X-A': 'a\r\nX-B: b' } }, 'invalid_request', /^headers values must not/],
      ['/v1/broken-links', { headers: { 'bad name': 'x' } }, 'invalid_request', /^headers must have valid/],
      ['/v1/broken-links', { headers: ['x'] }, 'invalid_request', /^headers must be an object/],
      [
        '/v1/broken-links',
        { headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-${i}`, 'v'])) },
        'invalid_request',
        /^headers must have at most 10/,
      ],
      ['/v1/broken-links/crawl', { maxPages: 0 }, 'invalid_request', /^maxPages must be an integer from 1 to 250$/],
      ['/v1/broken-links/crawl', { maxPages: 251 }, 'invalid_request', /^maxPages must be/],
      ['/v1/broken-links/crawl', { maxPages: 1.5 }, 'invalid_request', /^maxPages must be/],
      ['/v1/broken-links/crawl', { maxDepth: -1 }, 'invalid_request', /^maxDepth must be an integer from 0 to 20$/],
      ['/v1/broken-links/crawl', { maxDepth: 21 }, 'invalid_request', /^maxDepth must be/],
      ['/v1/broken-links/crawl', { exclude: ['{a,'] }, 'invalid_option', /^exclude\[0\] is not a valid glob/],
      ['/v1/broken-links/crawl', { headers: { 'User-Agent': 'x' } }, 'invalid_option', /^headers may not set/],
      ['/v1/link-extract/crawl', { includeResources: 'yes' }, 'invalid_request', /^includeResources must be/],
      ['/v1/link-extract/crawl', { maxDepth: 'deep' }, 'invalid_request', /^maxDepth must be/],
      ['/v1/link-extract/crawl', { headers: { host: 'x' } }, 'invalid_option', /^headers may not set host$/],
    ];
    for (const [path, options, code, message] of cases) {
      const failure = await expectFailure(await stack.api(path, post({ url: home, ...options })), 400, code);
      expect(failure.error?.message, `${path} ${JSON.stringify(options)}`).to.match(message);
    }
    const query = await stack.api(`/v1/link-extract?url=${encodeURIComponent(home)}&includeResources=maybe`);
    expect((await expectFailure(query, 400, 'invalid_request')).error?.message).to.equal(
      'includeResources must be true or false',
    );
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
  });
});
