import type http from 'node:http';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { Browser, expectFailure, json, quota } from './billing-helpers.js';
import { post } from './crawl-helpers.js';
import { type FixtureSite, generateSite, serveSite } from './site-audit-fixture.js';
import { expectedAudit, SLOW_MS } from './site-audit-oracle.js';

/**
 * Site audits through the REST edge (decisions 0441-0443): generated sites with each issue type
 * planted, the issues expected computed from each site's definition, and the audit's price.
 */

async function startAudit(stack: TestStack, apiKey: string, body: Record<string, unknown>): Promise<string> {
  return started(await stack.api('/v1/site-audit', { ...post(body), apiKey }));
}

async function started(res: Response): Promise<string> {
  const answer = await json(res);
  expect(res.status, JSON.stringify(answer)).to.equal(202);
  return answer.data.jobId as string;
}

async function pollAudit(stack: TestStack, jobId: string, timeoutMs = 150_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await stack.api(`/v1/site-audit/${jobId}`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    if (body.data.status !== 'crawling') return body.data;
    if (Date.now() > deadline) throw new Error(`still auditing: ${JSON.stringify(body.data.progress)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Every affected URL of an issue, read through the issue route `limit` at a time. */
async function affectedOf(stack: TestStack, jobId: string, issueId: string, limit: number): Promise<string[]> {
  const urls: string[] = [];
  for (let offset = 0; ; offset += limit) {
    const res = await stack.api(`/v1/site-audit/${jobId}/issues/${issueId}?offset=${offset}&limit=${limit}`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.offset).to.equal(offset);
    urls.push(...body.data.issue.affected.map((a: { url: string }) => a.url));
    if (offset + limit >= body.data.issue.affectedTotal) return urls;
  }
}

/** An anonymous browser caller past the challenge, from its own address (its own daily credits). */
async function anonymous(stack: TestStack, ip: string): Promise<Browser> {
  const browser = new Browser(stack, ip);
  await browser.passChallenge();
  return browser;
}

describe('Site audit (POST /v1/site-audit)', function () {
  this.timeout(300_000);
  let stack: TestStack;
  const servers: http.Server[] = [];

  before(async () => {
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { LINK_TIMEOUT_MS: '3000' } });
  });
  after(async () => {
    await stack?.stop();
    for (const server of servers) server.close();
  });

  async function serve(site: FixtureSite): Promise<string> {
    const { server, base } = await serveSite(site);
    servers.push(server);
    return base;
  }

  it('finds on a generated site every planted issue, on exactly the URLs its definition implies', async () => {
    const site = generateSite(20);
    const base = await serve(site);
    const expected = expectedAudit(site, base);
    const apiKey = await fundedKey(stack, 'audit', 100);
    const before = await quota(stack, { apiKey });
    const jobId = await startAudit(stack, apiKey, { url: `${base}/`, maxPages: 150 });
    // 2 credits per 100 pages of the cap begun: 150 pages cost 4.
    expect((await quota(stack, { apiKey })).remaining).to.equal(before.remaining - 4);

    const job = await pollAudit(stack, jobId);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    const report = job.result;
    expect(report.pagesCap).to.equal(150);
    expect(report.pagesAudited).to.equal(expected.audited.size);
    expect(job.progress.pagesAudited).to.equal(expected.audited.size);
    expect(report.truncatedPages).to.equal(false);

    const found = new Map<string, any>(report.issues.map((issue: any) => [issue.id, issue]));
    expect([...found.keys()].sort()).to.deep.equal([...expected.issues.keys()].sort());
    for (const [id, urls] of expected.issues) {
      const issue = found.get(id);
      expect(issue.fix, id).to.be.a('string').and.not.be.empty;
      const affected = await affectedOf(stack, jobId, id, 3);
      if (id === 'slow_ttfb') {
        // The planted page is slow by definition; on a loaded machine another page's first byte may
        // also come late: each such page is listed with the time measured, past the threshold.
        expect(affected, id).to.include.members([...urls]);
        for (const { url, detail } of issue.affected.filter((a: any) => !urls.has(a.url)))
          expect(Number(/after (\d+) ms/.exec(detail)?.[1]), `${url}: ${detail}`).to.be.above(SLOW_MS);
        continue;
      }
      expect(issue.affected.length, id).to.equal(Math.min(20, urls.size));
      expect(affected.sort(), id).to.deep.equal([...urls].sort());
    }
    // Errors first, then warnings, then notices.
    const ranks = report.issues.map((i: any) => ['error', 'warning', 'notice'].indexOf(i.priority));
    expect(ranks).to.deep.equal([...ranks].sort((a: number, b: number) => a - b));
    const errorPages = [...expected.errorPages].filter((url) => expected.audited.has(url)).length;
    const audited = expected.audited.size;
    expect(report.healthScore).to.equal(Math.floor((100 * (audited - errorPages)) / audited));
    const broken = found.get('broken_link_internal').affected.find((a: any) => a.url === `${base}/missing`);
    expect(broken.sources).to.deep.equal([`${base}/`]);
    expect(report.categories.map((c: any) => c.id)).to.include.members(['indexability', 'content', 'links']);
    const statusTotal = report.statusCodes.reduce((n: number, row: any) => n + row.pages, 0);
    expect(statusTotal).to.equal(audited + expected.refused.size);
    expect(report.statusCodes.find((row: any) => row.key === 'robots').pages).to.equal(expected.refused.size);
    expect(report.depths.map((row: any) => row.key).slice(0, 2)).to.deep.equal(['0', '1']);
  });

  it('with checkFragments, finds each link to a missing anchor, on the URLs its definition implies', async () => {
    const site: FixtureSite = {
      pages: [
        { path: '/', ids: ['main'], links: ['/a#intro', '/a#nope', '/b#gone', '#main', '#nowhere', '/moved#intro'] },
        { path: '/a', ids: ['intro'], links: ['/b#here', '/a#nope'] },
        { path: '/b', ids: ['here'], links: ['/#main', '/#lost'] },
        { path: '/moved', redirect: '/a' },
      ],
      sitemap: ['/'],
      disallow: [],
    };
    const base = await serve(site);
    const expected = expectedAudit(site, base, true);
    expect(expected.issues.get('missing_fragment')?.size).to.equal(4);
    const apiKey = await fundedKey(stack, 'fragments', 10);
    const jobId = await startAudit(stack, apiKey, { url: `${base}/`, maxPages: 100, checkFragments: true });
    const job = await pollAudit(stack, jobId);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    const found = new Map<string, any>(job.result.issues.map((issue: any) => [issue.id, issue]));
    expect([...found.keys()].sort()).to.deep.equal([...expected.issues.keys()].sort());
    const missing = found.get('missing_fragment');
    expect(missing.affected.map((a: any) => a.url).sort()).to.deep.equal(
      [...(expected.issues.get('missing_fragment') ?? [])].sort(),
    );
    // A link's pages are every page that has it: /a#nope is on the home page and on /a.
    expect(missing.affected.find((a: any) => a.url === `${base}/a`).sources.sort()).to.deep.equal([
      `${base}/`,
      `${base}/a`,
    ]);
  });

  it('reports a missing sitemap, and nothing else, on a one-page site without one', async () => {
    const site: FixtureSite = { pages: [{ path: '/' }], disallow: [] };
    const base = await serve(site);
    const expected = expectedAudit(site, base);
    const browser = await anonymous(stack, '10.41.0.1');
    const job = await pollAudit(stack, await started(await browser.post('/v1/site-audit', { url: base })));
    expect(job.result.pagesCap).to.equal(100); // an anonymous caller has the Free plan's cap
    expect(job.result.issues.map((i: any) => i.id)).to.deep.equal([...expected.issues.keys()]);
    expect(job.result.healthScore).to.equal(100);
  });

  it('refuses a cap over the plan’s, and a price over the caller’s credits, spending nothing', async () => {
    const base = await serve({ pages: [{ path: '/' }], disallow: [] });
    const browser = await anonymous(stack, '10.41.0.2');
    const remaining = async () => (await json(await browser.fetch('/v1/quota'))).data.remaining;
    const before = await remaining();
    await expectFailure(await browser.post('/v1/site-audit', { url: base, maxPages: 101 }), 400, 'pages_over_plan');
    expect(await remaining()).to.equal(before);
    const poor = await fundedKey(stack, 'poor', 3);
    // A Starter caller's default cap is 1,000 pages: 20 credits.
    const refused = await expectFailure(
      await stack.api('/v1/site-audit', { ...post({ url: base }), apiKey: poor }),
      402,
      'insufficient_credits',
    );
    expect(refused.error?.creditsRequired).to.equal(20);
    expect((await quota(stack, { apiKey: poor })).remaining).to.equal(3);
    await expectFailure(
      await stack.api('/v1/site-audit', { ...post({ url: base, maxPages: 0 }), apiKey: poor }),
      400,
      'invalid_request',
    );
  });

  it('answers an issue the audit did not find with 404, and a bad page size with 400', async () => {
    const base = await serve({ pages: [{ path: '/' }], disallow: [] });
    const browser = await anonymous(stack, '10.41.0.3');
    const jobId = await started(await browser.post('/v1/site-audit', { url: base }));
    await pollAudit(stack, jobId);
    await expectFailure(await stack.api(`/v1/site-audit/${jobId}/issues/title_missing`), 404, 'issue_not_found');
    await expectFailure(
      await stack.api(`/v1/site-audit/${jobId}/issues/sitemap_missing?limit=5000`),
      400,
      'invalid_request',
    );
  });
});
