import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { addRenderPages } from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { expect } from 'chai';
import sharp from 'sharp';
import { creditsHeader, expectFailure } from './billing-helpers.js';
import {
  download,
  expectNoOpenPages,
  expectRenderFailure,
  metric,
  type RenderStack,
  render,
  rendered,
  startRenderStack,
} from './render-helpers.js';

/** The Chromium browser processes the render service started (its direct children named chromium). */
function chromiumPids(servicePid: number): number[] {
  const children = readFileSync(`/proc/${servicePid}/task/${servicePid}/children`, 'utf8').trim().split(/\s+/);
  return children
    .map(Number)
    .filter((pid) => pid > 0)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]?.includes('chromium') ?? false;
      } catch {
        return false;
      }
    });
}

async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A small pool with short limits: one browser, two renders at a time, four waiting, a 6 s render
 * budget and 2 s file lifetime, so time-outs, crashes, back-pressure and expiry are quick to see.
 */
describe('rendering limits and failures, through the REST edge', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let stack: RenderStack;
  const queueWaitMs = 20_000;
  const budgetMs = 6_000;

  before(async () => {
    site = await startFixtureSite();
    addRenderPages(site);
    site.route('/page/busy-loop', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<h1>busy</h1><script>addEventListener("load", () => { for (;;) {} });</script>');
    });
    stack = await startRenderStack({
      allowTargets: '127.0.0.1/32',
      render: {
        RENDER_BROWSERS: '1',
        RENDER_PAGES_PER_BROWSER: '2',
        RENDER_QUEUE_DEPTH: '4',
        RENDER_QUEUE_WAIT_MS: String(queueWaitMs),
        RENDER_TIMEOUT_MS: String(budgetMs),
        RENDER_FILE_TTL_MS: '2000',
        RENDER_CACHE_WINDOW_MS: '1000',
        RENDER_SWEEP_MS: '200',
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('answers 408 for a page past the render budget (no answer, or a hung script), spending nothing', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const started = Date.now();
    const calls = await Promise.all([
      render(stack, 'url-to-pdf', { url: site.url('/hang') }),
      render(stack, 'screenshot', { url: site.url('/page/busy-loop') }),
    ]);
    for (const call of calls) {
      expect(expectRenderFailure(call, 408, 'render_timeout')).to.match(/within 6 s/);
      // Server-Timing is a header of the 200 (decision 0034); a failure has none.
      expect(call.res.headers.get('server-timing')).to.equal(null);
    }
    // Liveness: the 6 s budget ends both, far from the route's 60 s deadline.
    expect(Date.now() - started).to.be.below(30_000);
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    await expectNoOpenPages(stack);
  });

  it('fails the render in flight when Chromium is killed, relaunches it, and serves the next one', async () => {
    const servicePid = stack.pid('render')!;
    const [browserPid] = chromiumPids(servicePid);
    expect(browserPid, 'the Chromium process').to.be.a('number');
    const before = creditsHeader(await stack.api('/v1/quota'));
    const seen = site.requests.length;
    const inFlight = render(stack, 'screenshot', { url: site.url('/slow?ms=4000&kill=1') });
    await until(() => site.requests.slice(seen).some((r) => r.path.includes('kill=1')), 10_000, 'the page request');
    process.kill(browserPid!, 'SIGKILL');
    const failed = await inFlight;
    expect(expectRenderFailure(failed, 503, 'browser_crashed')).to.match(/retry/);
    // Chromium is launched again at once; a retry after this finds it.
    expect(failed.res.headers.get('retry-after')).to.equal('2');
    expect(failed.credits).to.equal(before);
    const next = await rendered(stack, 'screenshot', { url: site.url('/page/simple?after-kill=1') });
    expect(next.body.success).to.equal(true);
    expect(chromiumPids(servicePid)).to.not.include(browserPid);
    expect(await metric(stack, 'webutil_render_browser_restarts_total')).to.equal(1);
    await expectNoOpenPages(stack);
  });

  it('takes 20 concurrent renders on a small pool: each succeeds or gets a fast 503 with Retry-After', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const started = Date.now();
        const call = await render(stack, 'screenshot', { url: site.url(`/page/simple?burst=${i}`) });
        return { call, ms: Date.now() - started };
      }),
    );
    const ok = results.filter((r) => r.call.res.status === 200);
    const refused = results.filter((r) => r.call.res.status !== 200);
    const outcomes = JSON.stringify(results.map((r) => r.call.body.error?.code ?? r.call.res.status));
    // Two rendering and four waiting are accepted; the rest are refused at once.
    expect(ok.length, outcomes).to.be.at.least(6);
    expect(ok.length + refused.length).to.equal(20);
    // None hangs: an accepted render ends within its longest wait for a browser plus its budget.
    for (const { ms } of ok) expect(ms).to.be.below(queueWaitMs + budgetMs);
    // The stack's Enterprise key may have 16 renders in flight: the edge refuses the rest at once.
    expect(refused.filter((r) => r.call.res.status === 429).length, outcomes).to.be.at.most(4);
    for (const { call, ms } of refused) {
      if (call.res.status === 429) expectRenderFailure(call, 429, 'concurrency_limited');
      else expectRenderFailure(call, 503, 'render_busy');
      expect(call.res.headers.get('retry-after')).to.match(/^\d+$/);
      // Refused without waiting for a browser (a liveness bound, far above the few ms it takes).
      expect(ms).to.be.below(5_000);
    }
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before - 2 * ok.length);
    await expectNoOpenPages(stack);
  });

  it('removes result files after their lifetime: 404 for downloads, gone from the disk', async () => {
    const { body } = await rendered(stack, 'screenshot', { url: site.url('/page/simple?lifetime=1') });
    const dir = path.join(stack.dataDir, 'artifacts', 'render');
    expect(readdirSync(dir)).to.include(body.filename);
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    await expectFailure(await stack.api(`/api/uploads/${body.filename}`), 404, 'file_not_found');
    expect(readdirSync(dir)).to.not.include(body.filename);
  });

  it('refuses download names that try to leave the store', async () => {
    const { body } = await rendered(stack, 'screenshot', { url: site.url('/page/simple?names=1') });
    for (const name of [
      '..%2F..%2Fetc%2Fpasswd',
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      `..%2F${body.filename}`,
      `${body.filename}%00.png`,
      `${body.filename.slice(0, -4)}.PNG`,
      'keys',
      'tmp',
      `${body.filename}.json`,
    ]) {
      await expectFailure(await stack.api(`/api/uploads/${name}`, { anonymous: true }), 404, 'file_not_found');
    }
    const traversal = await stack.api('/api/uploads/../../etc/passwd', { anonymous: true });
    expect(traversal.status).to.equal(404);
  });
});

describe('rendering with no private address allowed, through the REST edge', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let stack: RenderStack;

  before(async () => {
    site = await startFixtureSite();
    addRenderPages(site);
    stack = await startRenderStack({ render: { RENDER_BROWSERS: '1' } });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('refuses loopback by address, as localhost, and behind a public-looking name, reaching nothing', async () => {
    stack.dns.set('www.example.com', ['127.0.0.1']);
    const before = creditsHeader(await stack.api('/v1/quota'));
    for (const url of [
      site.url('/page/simple'),
      `http://localhost:${site.port}/page/simple`,
      `http://www.example.com:${site.port}/page/simple`,
    ]) {
      for (const route of ['screenshot', 'url-to-pdf'] as const) {
        const call = await render(stack, route, { url });
        expect(expectRenderFailure(call, 400, 'target_blocked'), url).to.match(/private or reserved/);
      }
    }
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    expect(site.connections).to.equal(0);
  });
});

/**
 * Result files in GridFS (MONGO_URL) on jongodb, as replicas share them: a render's file is
 * downloaded whole, with its length, and is gone after its lifetime.
 */
describe('rendering with result files in GridFS on jongodb, through the REST edge', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let jongodb: MongoUnderTest;
  let stack: RenderStack;

  before(async () => {
    [site, jongodb] = await Promise.all([startFixtureSite(), startMongo()]);
    addRenderPages(site);
    stack = await startRenderStack({
      allowTargets: '127.0.0.1/32',
      render: {
        MONGO_URL: jongodb.url,
        RENDER_BROWSERS: '1',
        RENDER_FILE_TTL_MS: '2000',
        RENDER_CACHE_WINDOW_MS: '1000',
        RENDER_SWEEP_MS: '200',
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), jongodb?.stop()]);
  });

  it('serves the file from GridFS with its length and bytes, and 404 after its lifetime', async () => {
    const [shot, pdf] = await Promise.all([
      rendered(stack, 'screenshot', { url: site.url('/page/lazy?n=4') }),
      rendered(stack, 'url-to-pdf', { url: site.url('/page/simple?gridfs=1') }),
    ]);
    expect((await sharp(shot.file).metadata()).format).to.equal('png');
    expect(pdf.file.subarray(0, 5).toString()).to.equal('%PDF-');
    // Nothing on the local disk: the files are in the database.
    expect(existsSync(path.join(stack.dataDir, 'artifacts', 'render'))).to.equal(false);
    expect((await download(stack, shot.body.filename)).equals(shot.file)).to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    for (const { body } of [shot, pdf]) {
      await expectFailure(await stack.api(`/api/uploads/${body.filename}`, { anonymous: true }), 404, 'file_not_found');
    }
  });
});
