import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Browser } from 'puppeteer-core';
import { expectFailure, json, quota } from './billing-helpers.js';
import { launchChromium, seriousViolations } from './browser-helpers.js';
import { post } from './crawl-helpers.js';
import { type FixtureSite, serveSite } from './site-audit-fixture.js';

/**
 * A site audit's outputs through the REST edge (decisions 0476, 0477): its issues as CSV, the
 * comparison with the account's previous audit of the site, the shareable report page in Chromium
 * (axe, 390 px) and the same report as a PDF printed by the render service.
 */

declare const document: any;
declare const window: any;

async function audit(stack: TestStack, apiKey: string, url: string): Promise<{ jobId: string; job: any }> {
  const res = await stack.api('/v1/site-audit', { ...post({ url, maxPages: 50 }), apiKey });
  const started = await json(res);
  expect(res.status, JSON.stringify(started)).to.equal(202);
  const jobId = started.data.jobId as string;
  const deadline = Date.now() + 150_000;
  for (;;) {
    const body = await json(await stack.api(`/v1/site-audit/${jobId}`));
    if (body.data.status !== 'crawling') {
      expect(body.data.status, JSON.stringify(body.data.error)).to.equal('done');
      return { jobId, job: body.data };
    }
    if (Date.now() > deadline) throw new Error('still auditing');
    await new Promise((r) => setTimeout(r, 250));
  }
}

const csvOf = async (res: Response) => {
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/csv/);
  return parseCsv(await res.text(), { columns: true }) as Record<string, string>[];
};

describe('Site audit outputs: CSV, comparison, report page and PDF', function () {
  this.timeout(300_000);
  let stack: TestStack;
  let server: http.Server;
  let base: string;
  let browser: Browser;
  let apiKey: string;
  const site: FixtureSite = {
    pages: [
      { path: '/', links: ['/a', '/b'] },
      { path: '/a', title: null, links: ['/'] },
      { path: '/b', links: ['/', '/gone'] },
    ],
    disallow: [],
  };
  let first: { jobId: string; job: any };
  let second: { jobId: string; job: any };

  before(async () => {
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { LINK_TIMEOUT_MS: '3000' } });
    ({ server, base } = await serveSite(site));
    apiKey = await fundedKey(stack, 'audit-outputs', 200);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    server?.close();
  });

  it('compares an audit with the account’s previous audit of the site by issue type and URL', async () => {
    first = await audit(stack, apiKey, `${base}/`);
    expect(first.job.result.comparison).to.equal(undefined);
    const ids = first.job.result.issues.map((i: any) => i.id);
    expect(ids).to.include.members(['title_missing', 'broken_link_internal']);
    // The site changes: /a gets a title, /b loses its own and its H1, the broken link goes.
    const [, a, b] = site.pages as [unknown, FixtureSite['pages'][0], FixtureSite['pages'][0]];
    a.title = 'A page with a fair title';
    b.title = null;
    b.h1 = 0;
    b.links = ['/'];
    second = await audit(stack, apiKey, `${base}/`);
    const comparison = second.job.result.comparison;
    expect(comparison.previousJobId).to.equal(first.jobId);
    expect(comparison.previousScannedAt).to.equal(first.job.result.scannedAt);
    // What changed, from the two reports' issue lists (a small site: every affected URL is listed).
    const findings = (job: any) =>
      new Set<string>(job.result.issues.flatMap((i: any) => i.affected.map((a: any) => `${i.id} ${a.url}`)));
    const [then, now] = [findings(first.job), findings(second.job)];
    const listed = (rows: { issue: string; url: string }[]) => rows.map((f) => `${f.issue} ${f.url}`);
    expect(listed(comparison.newFindings)).to.deep.equal([...now].filter((f) => !then.has(f)).sort());
    expect(listed(comparison.fixedFindings)).to.deep.equal([...then].filter((f) => !now.has(f)).sort());
    expect(listed(comparison.newFindings)).to.include.members([`h1_missing ${base}/b`, `title_missing ${base}/b`]);
    expect(listed(comparison.fixedFindings)).to.include.members([
      `broken_link_internal ${base}/gone`,
      `title_missing ${base}/a`,
    ]);
    expect(comparison.newIssues).to.include('h1_missing');
    expect(comparison.fixedIssues).to.include('broken_link_internal');
    expect(comparison.newFindingsTotal).to.equal(comparison.newFindings.length);
    expect(comparison.fixedFindingsTotal).to.equal(comparison.fixedFindings.length);
  });

  it('gives the issues as CSV, a row per issue type and, per type, a row per affected URL', async () => {
    const { jobId, job } = second;
    const issues = await csvOf(await stack.api(`/v1/site-audit/${jobId}?format=csv`));
    expect(issues.map((row) => row.issue)).to.deep.equal(job.result.issues.map((i: any) => i.id));
    expect(issues[0]).to.have.keys(['issue', 'category', 'priority', 'title', 'pagesAffected', 'affectedTotal', 'fix']);
    for (const issue of job.result.issues) {
      const rows = await csvOf(await stack.api(`/v1/site-audit/${jobId}/issues/${issue.id}?format=csv&limit=1000`));
      expect(
        rows.map((row) => row.url),
        issue.id,
      ).to.deep.equal(issue.affected.map((a: any) => a.url));
      expect(rows.every((row) => row.issue === issue.id && row.priority === issue.priority)).to.equal(true);
    }
    const exported = await stack.api(`/v1/site-audit/${jobId}/export?format=csv`);
    expect(exported.headers.get('content-disposition')).to.include(`site-audit-${jobId}.csv`);
    await expectFailure(await stack.api(`/v1/site-audit/${jobId}?format=xlsx`), 400, 'invalid_format');
  });

  it('shows the report page to anyone with its address, at 1366 and 390 px with no axe violation', async () => {
    const { jobId, job } = second;
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.setViewport({ width: 1366, height: 900 });
    const reportPath = `/site-audit/${jobId}`;
    await page.goto(`${stack.edgeUrl}${reportPath}`);
    await page.waitForFunction((p: string) => document.getElementById('main')?.dataset.ready === p, {}, reportPath);
    const shown = await page.evaluate(() => ({
      heading: document.querySelector('h1')?.textContent,
      issues: document.querySelectorAll('section.audit-issue').length,
      charts: [...document.querySelectorAll('figure.chart figcaption')].map((c: any) => c.textContent),
      text: document.getElementById('main').textContent,
    }));
    expect(shown.heading).to.equal('Site audit of 127.0.0.1');
    expect(shown.issues).to.equal(job.result.issues.length);
    expect(shown.charts).to.deep.equal(['Pages by status code', 'Pages by click depth', 'Issue types by category']);
    expect(shown.text).to.include(`Health score: ${job.result.healthScore} / 100`);
    expect(shown.text).to.include(`New issues on URLs: ${job.result.comparison.newFindingsTotal}`);
    expect(await seriousViolations(page), 'axe at 1366 px').to.deep.equal([]);
    await page.setViewport({ width: 390, height: 800 });
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, 'wider than 390 px').to.be.at.most(0);
    expect(await seriousViolations(page), 'axe at 390 px').to.deep.equal([]);
    await context.close();
  });

  it('checks the site’s robots.txt lines and the sitemaps it names, once per audit', async () => {
    const files = http.createServer((req, res) => {
      if (req.url === '/robots.txt')
        res
          .writeHead(200, { 'content-type': 'text/plain' })
          .end(`Disallow: /early\nUser-agent: *\nDisalow: /typo\nSitemap: http://${req.headers.host}/map.xml\n`);
      else if (req.url === '/map.xml') res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
      else
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html lang="en"><title>Home page here</title></html>');
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    try {
      const { job } = await audit(stack, apiKey, `${origin}/`);
      const issue = (id: string) => job.result.issues.find((i: any) => i.id === id);
      expect(issue('robots_txt_invalid').affected).to.deep.equal([
        {
          url: `${origin}/robots.txt`,
          detail: 'line 1: Disallow before any user-agent line; line 3: unknown field "Disalow"',
          sources: [],
        },
      ]);
      expect(issue('sitemap_invalid').affected[0]).to.include({
        url: `${origin}/map.xml`,
        detail: 'not a sitemap: no <urlset> or <sitemapindex>',
      });
      expect(issue('robots_txt_invalid').priority).to.equal('warning');
    } finally {
      files.close();
    }
  });

  it('prints the report to PDF through the render service for a URL-to-PDF’s credits', async () => {
    const { jobId } = second;
    const before = await quota(stack, { apiKey });
    const res = await stack.api(`/v1/site-audit/${jobId}/report.pdf`, { ...post({}), apiKey });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.filename).to.match(/\.pdf$/);
    const file = await stack.api(`/api/uploads/${body.filename}`);
    expect(file.headers.get('content-type')).to.equal('application/pdf');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).to.equal('%PDF-');
    expect(bytes.length).to.be.above(5_000);
    expect((await quota(stack, { apiKey })).remaining).to.equal(before.remaining - 2);
    // An unknown audit is a 404 and spends nothing.
    await expectFailure(
      await stack.api('/v1/site-audit/no-such-job/report.pdf', { ...post({}), apiKey }),
      404,
      'job_not_found',
    );
    expect((await quota(stack, { apiKey })).remaining).to.equal(before.remaining - 2);
  });
});
