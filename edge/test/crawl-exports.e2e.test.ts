import { type CrawlSite, startCrawlSite } from '@webutil/scripts/fixture-crawl-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import { marked, type Tokens } from 'marked';
import { creditsHeader, expectFailure, json } from './billing-helpers.js';
import { pollJob, post, startCrawl } from './crawl-helpers.js';
import { elementsOf, parseXml, validateSarif } from './report-parsers.js';

/**
 * The link-check exports through the edge (decision 0217): a finished crawl's result and a
 * single-page check as CSV, Markdown, JUnit XML and SARIF, each parsed back by a real parser; a bad
 * format refused before anything is spent; a crawl still running answered 409.
 */

const withSources = (links: any[]) => links.reduce((n, link) => n + (link.sources?.length ?? 1), 0);
const problems = (links: any[], severity: string) => links.filter((link) => link.severity === severity);

describe('link-check exports through the edge', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let small: CrawlSite;
  let slow: CrawlSite;
  let jobId: string;
  let result: any;

  before(async () => {
    [small, slow] = await Promise.all([
      startCrawlSite({ pages: 20, silentHost: false, rateLimited: false }),
      startCrawlSite({ pages: 60, latencyMs: 400, silentHost: false, rateLimited: false }),
    ]);
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', envFor: { crawl: { CRAWL_TIME_BUDGET_MS: '8000' } } });
    jobId = await startCrawl(stack, 'broken-links', small.entryUrl);
    const { job } = await pollJob(stack, 'broken-links', jobId);
    expect(job.status).to.equal('done');
    result = job.result;
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([small?.close(), slow?.close()]);
  });

  const download = async (format: string) => {
    const res = await stack.api(`/v1/broken-links/crawl/${jobId}?format=${format}`);
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).to.equal(200);
    return { res, text };
  };

  it('CSV: one row per link and page it is on, as attachment, free', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const { res, text } = await download('csv');
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.equal(`attachment; filename="broken-links-${jobId}.csv"`);
    const rows: Record<string, string>[] = parseCsv(text, { columns: true });
    expect(rows).to.have.length(withSources(result.links));
    const broken = result.links.find((link: any) => link.url === small.expected.notFound);
    const brokenRows = rows.filter((row) => row.url === small.expected.notFound);
    expect(brokenRows.map((row) => row.source)).to.deep.equal(broken.sources);
    expect(brokenRows[0]).to.include({ severity: 'broken', statusCode: '404', category: '4xx Client error' });
    expect(creditsHeader(res)).to.equal(before);
  });

  it('Markdown: a table of every broken link and of every warning', async () => {
    const { res, text } = await download('md');
    expect(res.headers.get('content-type')).to.equal('text/markdown; charset=utf-8; variant=GFM');
    expect(res.headers.get('content-disposition')).to.equal(`attachment; filename="broken-links-${jobId}.md"`);
    const tables = marked.lexer(text).filter((t): t is Tokens.Table => t.type === 'table');
    const broken = problems(result.links, 'broken');
    const warnings = problems(result.links, 'warning');
    expect(tables[0]?.rows).to.have.length(broken.length);
    expect(tables[1]?.rows).to.have.length(warnings.length);
    const linkOf = (row: Tokens.TableCell[]) => (row[0]!.tokens[0] as Tokens.Codespan).text;
    expect(tables[0]!.rows.map(linkOf)).to.deep.equal(broken.map((link: any) => link.url));
  });

  it('JUnit XML: a failure per broken link on each page it is on', async () => {
    const { res, text } = await download('junit');
    expect(res.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.equal(`attachment; filename="broken-links-${jobId}.junit.xml"`);
    const elements = elementsOf(parseXml(text));
    expect(elements[0]?.name).to.equal('testsuites');
    expect(elements.filter((e) => e.name === 'testcase')).to.have.length(withSources(result.links));
    expect(elements.filter((e) => e.name === 'failure')).to.have.length(withSources(problems(result.links, 'broken')));
    expect(elements[0]?.attributes.failures).to.equal(String(withSources(problems(result.links, 'broken'))));
  });

  it('SARIF 2.1.0: valid against the schema, an error per broken link and page', async () => {
    const { res, text } = await download('sarif');
    expect(res.headers.get('content-type')).to.equal('application/sarif+json');
    expect(res.headers.get('content-disposition')).to.equal(`attachment; filename="broken-links-${jobId}.sarif"`);
    const log = JSON.parse(text);
    expect(validateSarif(log), JSON.stringify(validateSarif.errors)).to.equal(true);
    const results = log.runs[0].results;
    expect(results.filter((r: any) => r.level === 'error')).to.have.length(
      withSources(problems(result.links, 'broken')),
    );
    expect(results.filter((r: any) => r.level === 'warning')).to.have.length(
      withSources(problems(result.links, 'warning')),
    );
  });

  it('refuses an unknown format with 400 before anything is spent, on both routes', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    for (const res of [
      await stack.api(`/v1/broken-links/crawl/${jobId}?format=xlsx`),
      await stack.api(`/v1/broken-links/crawl/${jobId}?format=csv&format=md`),
      await stack.api('/v1/broken-links?format=pdf', post({ url: small.entryUrl })),
    ]) {
      const failure = await expectFailure(res, 400, 'invalid_format');
      expect(failure.error?.message).to.equal('format must be one of csv, md, junit, sarif');
    }
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    expect(small.main.requests.filter((q) => q.path === '/' && q.method === 'GET')).to.have.length(1);
  });

  it('answers 409 for a crawl still running, and the JSON poll as ever', async () => {
    const running = await startCrawl(stack, 'broken-links', slow.entryUrl);
    await expectFailure(await stack.api(`/v1/broken-links/crawl/${running}?format=csv`), 409, 'job_not_finished');
    const res = await stack.api(`/v1/broken-links/crawl/${running}`);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect((await json(res)).data.status).to.equal('crawling');
  });

  it('POST /v1/broken-links?format=: the single-page check as a file, for its credits', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const res = await stack.api('/v1/broken-links?format=sarif', post({ url: small.entryUrl }));
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/sarif+json');
    expect(res.headers.get('content-disposition')).to.match(
      /^attachment; filename="broken-links-127\.0\.0\.1-\d+\.sarif"$/,
    );
    const log = JSON.parse(text);
    expect(validateSarif(log), JSON.stringify(validateSarif.errors)).to.equal(true);
    const uris = log.runs[0].results.map((r: any) => r.locations[0].physicalLocation.artifactLocation.uri);
    expect(new Set(uris)).to.deep.equal(new Set([small.entryUrl]));
    expect(creditsHeader(res)).to.equal(before - 2);
  });

  it('an idempotent retry of an export is rendered from the kept answer: same file, nothing spent', async () => {
    const key = `export-${Date.now()}`;
    const headers = { 'content-type': 'application/json', 'idempotency-key': key };
    const body = JSON.stringify({ url: small.entryUrl });
    const first = await stack.api('/v1/broken-links?format=csv', { method: 'POST', headers, body });
    const firstText = await first.text();
    expect(first.status).to.equal(200);
    const spent = creditsHeader(first);
    const again = await stack.api('/v1/broken-links?format=csv', { method: 'POST', headers, body });
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(await again.text()).to.equal(firstText);
    const asJson = await stack.api('/v1/broken-links', { method: 'POST', headers, body });
    expect((await json(asJson)).data.links).to.be.an('array');
    expect(creditsHeader(asJson)).to.equal(spent);
  });
});
