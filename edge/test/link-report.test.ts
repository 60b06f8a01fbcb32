import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import { marked, type Tokens } from 'marked';
import { type LinkReport, type ReportLink, renderReport } from '../src/areas/crawl/link-report.js';
import { parseXml, validateSarif, type XmlNode } from './report-parsers.js';

/**
 * The link-check exports, each parsed back by a parser that did not write it: csv-parse, saxes, marked's
 * GFM lexer, and the SARIF 2.1.0 JSON schema (report-parsers.ts).
 */

/** A site's authored text at its most hostile: quotes, separators, markup, a formula, a control character. */
const HOSTILE = '=HYPERLINK("x") | <b>&amp;</b> "quoted", `tick` \n next\u0001line';

const child = (node: XmlNode | undefined, name: string) => node?.children.find((c) => c.name === name);

const link = (over: Partial<ReportLink>): ReportLink => ({
  url: 'https://site.test/ok',
  originalHref: '/ok',
  text: 'ok',
  type: 'internal',
  rel: null,
  statusCode: 200,
  statusText: 'OK',
  severity: 'ok',
  reason: 'ok (200)',
  category: '2xx Success',
  redirected: false,
  responseTimeMs: 12,
  fragments: [],
  ...over,
});

const crawl: LinkReport = {
  scannedAt: '2026-11-27T05:00:00.000Z',
  healthScore: 71,
  grade: 'C',
  summary: { ok: 1, warnings: 1, broken: 2, info: 1 },
  pagesCrawled: 3,
  totalUniqueLinks: 5,
  pages: [
    { url: 'https://site.test/', statusCode: 200, severity: 'ok', depth: 0 },
    { url: 'https://site.test/a|b', statusCode: 200, severity: 'ok', depth: 1 },
    { url: 'https://site.test/private/', statusCode: null, severity: 'info', depth: 1, reason: 'disallowed' },
  ],
  links: [
    link({ sources: ['https://site.test/', 'https://site.test/a|b'], sourceCount: 2 }),
    link({
      url: 'https://site.test/gone?q="1",2',
      originalHref: HOSTILE,
      text: HOSTILE,
      statusCode: 404,
      statusText: 'Not Found',
      severity: 'broken',
      reason: `not found (404): ${HOSTILE}`,
      category: '4xx Client error',
      element: 'img',
      sources: ['https://site.test/', 'https://site.test/a|b'],
      sourceCount: 40,
    }),
    link({
      url: 'https://down.test/',
      type: 'external',
      statusCode: null,
      statusText: 'Connection refused',
      severity: 'broken',
      reason: 'connection refused (ECONNREFUSED)',
      category: 'Connection error',
      errorCode: 'ECONNREFUSED',
      responseTimeMs: undefined,
      sources: ['https://site.test/a|b'],
      sourceCount: 1,
    }),
    link({
      url: 'https://site.test/moved',
      severity: 'warning',
      redirected: true,
      finalUrl: 'https://site.test/new',
      category: '3xx Redirect',
      reason: 'redirected (301) to https://site.test/new',
      fragments: [{ fragment: 'gone-part', found: false }],
      sources: ['https://site.test/'],
      sourceCount: 1,
    }),
    link({
      url: 'mailto:a@site.test',
      type: 'mailto',
      statusCode: null,
      severity: 'info',
      category: 'Non-HTTP link',
      reason: 'not checked: mailto',
      sources: ['https://site.test/'],
      sourceCount: 1,
    }),
  ],
};

/** A single-page check's result: no sources, no pages, no element on any record. */
const onePage: LinkReport = {
  scannedAt: '2026-11-27T05:00:00.000Z',
  healthScore: 50,
  grade: 'F',
  summary: { ok: 1, warnings: 0, broken: 1, info: 0 },
  totalLinks: 2,
  links: [
    link({}),
    link({ url: 'https://site.test/x', statusCode: 500, severity: 'broken', category: '5xx Server error' }),
  ],
};

describe('link-check exports', () => {
  it('CSV: a header and one row per link and page it is on, every cell read back as written', () => {
    const file = renderReport('csv', crawl, { jobId: 'job-1' });
    expect(file.contentType).to.equal('text/csv; charset=utf-8');
    expect(file.fileName).to.equal('broken-links-job-1.csv');
    const rows: Record<string, string>[] = parseCsv(file.body, { columns: true, bom: true });
    expect(rows).to.have.length(2 + 2 + 1 + 1 + 1);
    const gone = rows.filter((row) => row.url === 'https://site.test/gone?q="1",2');
    expect(gone.map((row) => row.source)).to.deep.equal(['https://site.test/', 'https://site.test/a|b']);
    const [first] = gone;
    expect(first?.element).to.equal('img');
    expect(first?.statusCode).to.equal('404');
    expect(first?.sourceCount).to.equal('40');
    // A formula is never live in a spreadsheet: the writer prefixes it; the text is otherwise intact.
    expect(first?.text).to.equal(`'${HOSTILE}`);
    expect(first?.reason).to.equal(`not found (404): ${HOSTILE}`);
    const refused = rows.find((row) => row.url === 'https://down.test/');
    expect(refused?.statusCode).to.equal('');
    expect(refused?.errorCode).to.equal('ECONNREFUSED');
    expect(refused?.element).to.equal('');
    expect(rows.find((row) => row.url === 'https://site.test/moved')?.missingFragments).to.equal('gone-part');
  });

  it('CSV of a single-page check: the page checked is the source; an absent element is an empty cell', () => {
    const file = renderReport('csv', onePage, { pageUrl: 'https://site.test/page' });
    expect(file.fileName).to.equal('broken-links-site.test.csv');
    const rows: Record<string, string>[] = parseCsv(file.body, { columns: true });
    expect(rows.map((row) => row.source)).to.deep.equal(['https://site.test/page', 'https://site.test/page']);
    expect(rows.every((row) => row.element === '')).to.equal(true);
  });

  it('Markdown: GFM tables of the broken and warning links, each cell as written', () => {
    const file = renderReport('md', crawl, { jobId: 'job-1' });
    expect(file.contentType).to.equal('text/markdown; charset=utf-8; variant=GFM');
    const tokens = marked.lexer(file.body);
    const heading = tokens.find((t): t is Tokens.Heading => t.type === 'heading' && t.depth === 1);
    expect(heading?.text).to.contain('https://site.test/');
    const tables = tokens.filter((t): t is Tokens.Table => t.type === 'table');
    expect(tables).to.have.length(3); // broken, warnings, pages not crawled cleanly
    const [broken, warnings, pages] = tables;
    expect(broken?.header.map((c) => c.text)).to.deep.equal(['Link', 'Element', 'Status', 'Reason', 'Found on']);
    expect(broken?.rows).to.have.length(2);
    const gone = broken?.rows[0];
    // The cells come back whole: the pipes inside URLs and text did not split them.
    expect(gone).to.have.length(5);
    const codeOf = (cell: Tokens.TableCell | undefined) =>
      cell?.tokens.filter((t) => t.type === 'codespan').map((t) => (t as Tokens.Codespan).text);
    expect(codeOf(gone?.[0])).to.deep.equal(['https://site.test/gone?q="1",2']);
    expect(gone?.[1]?.text).to.equal('img');
    expect(codeOf(gone?.[4])).to.deep.equal(['https://site.test/', 'https://site.test/a|b']);
    expect(gone?.[4]?.text).to.contain('and 38 more');
    // The hostile reason is text, not markup: no HTML and no link came out of it.
    const inline = gone?.[3]?.tokens.map((t) => t.type);
    expect(inline).to.not.include.members(['html', 'link', 'codespan']);
    expect(warnings?.rows).to.have.length(1);
    expect(pages?.rows.map((row) => codeOf(row[0]))).to.deep.equal([['https://site.test/private/']]);
    expect(marked.parse(file.body)).to.not.contain('<b>');
  });

  it('JUnit XML: a suite per page, a failure per broken link, a skip per info link; well-formed', () => {
    const file = renderReport('junit', crawl, { jobId: 'job-1' });
    expect(file.contentType).to.equal('application/xml; charset=utf-8');
    expect(file.fileName).to.equal('broken-links-job-1.junit.xml');
    const root = parseXml(file.body);
    expect(root.name).to.equal('testsuites');
    const suites = root.children.filter((c) => c.name === 'testsuite');
    expect(suites.map((s) => s.attributes.name)).to.deep.equal(['https://site.test/', 'https://site.test/a|b']);
    expect(root.attributes).to.include({ tests: '7', failures: '3', skipped: '1' });
    const home = suites[0]?.children ?? [];
    const gone = home.find((c) => c.attributes.name === 'https://site.test/gone?q="1",2');
    expect(gone?.attributes.classname).to.equal('https://site.test/');
    // The control character XML cannot carry is replaced, a line end in an attribute is the space a
    // parser reads it as; everything else is escaped, not lost.
    const failure = child(gone, 'failure');
    expect(failure?.attributes.message).to.equal(
      `not found (404): ${HOSTILE.replace('\u0001', '\uFFFD').replace('\n', ' ')}`,
    );
    expect(failure?.attributes.type).to.equal('4xx Client error');
    expect(failure?.text).to.contain('(img) on https://site.test/');
    const mail = home.find((c) => c.attributes.name === 'mailto:a@site.test');
    expect(child(mail, 'skipped')?.attributes.message).to.equal('not checked: mailto');
    const moved = home.find((c) => c.attributes.name === 'https://site.test/moved');
    expect(child(moved, 'failure')).to.equal(undefined);
    expect(child(moved, 'system-out')?.text).to.contain('warning: redirected');
    const ok = home.find((c) => c.attributes.name === 'https://site.test/ok');
    expect(ok?.children).to.deep.equal([]);
  });

  it('SARIF 2.1.0: valid against the schema, a result per broken or warning link and page', () => {
    const file = renderReport('sarif', crawl, { jobId: 'job-1' });
    expect(file.contentType).to.equal('application/sarif+json');
    expect(file.fileName).to.equal('broken-links-job-1.sarif');
    const log = JSON.parse(file.body);
    expect(validateSarif(log), JSON.stringify(validateSarif.errors)).to.equal(true);
    const [run] = log.runs;
    const results = run.results as any[];
    expect(results).to.have.length(2 + 1 + 1);
    const rules = run.tool.driver.rules as any[];
    for (const result of results) expect(rules[result.ruleIndex].id).to.equal(result.ruleId);
    const gone = results.filter((r) => r.properties.url === 'https://site.test/gone?q="1",2');
    expect(gone.map((r) => r.level)).to.deep.equal(['error', 'error']);
    expect(gone.map((r) => r.locations[0].physicalLocation.artifactLocation.uri)).to.deep.equal([
      'https://site.test/',
      'https://site.test/a%7Cb',
    ]);
    expect(gone[0].ruleId).to.equal('4xx-client-error');
    expect(gone[0].properties.element).to.equal('img');
    expect(results.find((r) => r.properties.url === 'https://site.test/moved').level).to.equal('warning');
    expect(run.properties).to.include({ healthScore: 71, grade: 'C', jobId: 'job-1' });
  });

  it('the schema check is real: a log with a wrong level fails it', () => {
    const log = JSON.parse(renderReport('sarif', onePage, { pageUrl: 'https://site.test/' }).body);
    expect(validateSarif(log)).to.equal(true);
    log.runs[0].results[0].level = 'fatal';
    expect(validateSarif(log)).to.equal(false);
  });
});
