import { addRenderPages } from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { expect } from 'chai';
import { account, creditsHeader, type Envelope, json } from './billing-helpers.js';
import { post } from './crawl-helpers.js';
import { expectNoOpenPages, type RenderStack, startRenderStack } from './render-helpers.js';

/**
 * The browsers are shared fairly (docs/decisions/0261-fair-shares.md): a freed page goes to the
 * waiting caller holding the fewest, and a caller's waiting renders fill only its share of the
 * queue. A flood within its plan's bound (Enterprise: 16 in flight) takes every page of the
 * default pool (2 browsers x 2 pages) and queues the rest; another caller is served next.
 */
describe('render pages shared fairly among callers, through the REST edge', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: RenderStack;
  // How long a flood render holds its page (its pages never finish loading).
  const budgetMs = 6_000;

  before(async () => {
    site = await startFixtureSite();
    addRenderPages(site);
    stack = await startRenderStack({
      allowTargets: '127.0.0.1/32',
      render: {
        RENDER_BROWSERS: '2',
        RENDER_PAGES_PER_BROWSER: '2',
        RENDER_QUEUE_DEPTH: '16',
        RENDER_TIMEOUT_MS: String(budgetMs),
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  async function screenshot(apiKey: string, url: string) {
    const started = Date.now();
    const res = await stack.api('/v1/screenshot', { ...post({ url }), apiKey });
    return { res, body: (await json(res)) as Envelope & Record<string, unknown>, ms: Date.now() - started };
  }

  it(
    "an Enterprise key's 24 never-loading screenshots: another key's screenshot is served at the next freed " +
      'page (within 2x its idle time plus one render), not after the flood',
    async () => {
      const flooder = await account(stack, 'ENTERPRISE');
      const other = await account(stack, 'STARTER');
      // Idle: Chromium warm, nothing else rendering; the median of three, so one quick render on a
      // machine busy with other work does not set the bound.
      await screenshot(other.apiKey, site.url('/page/simple?warm=1'));
      const idleRenders = [];
      for (const i of [1, 2, 3]) idleRenders.push(await screenshot(other.apiKey, site.url(`/page/simple?idle=${i}`)));
      for (const { res, body } of idleRenders) expect(res.status, JSON.stringify(body)).to.equal(200);
      const idle = idleRenders.sort((a, b) => a.ms - b.ms)[1] as (typeof idleRenders)[number];
      const credits = creditsHeader(await stack.api('/v1/quota', { apiKey: flooder.apiKey }));

      let answered = 0;
      const flood = Array.from({ length: 24 }, (_, i) =>
        screenshot(flooder.apiKey, site.url(`/hang?flood=${i}`)).then((r) => {
          answered++;
          return r;
        }),
      );
      // The edge refuses the 8 past the plan's 16 at once; 4 renders hold the pages and 12 wait.
      while (answered < 8) await new Promise((resolve) => setTimeout(resolve, 20));
      const beside = await screenshot(other.apiKey, site.url('/page/simple?beside-flood=1'));
      const results = await Promise.all(flood);

      expect(beside.res.status, JSON.stringify(beside.body)).to.equal(200);
      // One flood render's time: the first of them to end held its page for the whole budget.
      const renderMs = Math.min(...results.filter((r) => r.res.status === 408).map((r) => r.ms));
      expect(renderMs).to.be.at.least(budgetMs);
      const stages = `idle ${idle.res.headers.get('server-timing')}; beside ${beside.res.headers.get('server-timing')}`;
      expect(beside.ms, `idle ${idle.ms} ms, one flood render ${renderMs} ms (${stages})`).to.be.below(
        2 * idle.ms + renderMs,
      );

      const byStatus = (status: number) => results.filter((r) => r.res.status === status);
      expect(byStatus(429)).to.have.length(8);
      for (const { body } of byStatus(429)) expect(body.error?.code).to.equal('concurrency_limited');
      // Waiters past the queue wait are refused 503 render_busy; every admitted one ran out its budget.
      expect(byStatus(408).length + byStatus(503).length).to.equal(16);
      expect(creditsHeader(await stack.api('/v1/quota', { apiKey: flooder.apiKey }))).to.equal(credits);
      await expectNoOpenPages(stack);
    },
  );
});
