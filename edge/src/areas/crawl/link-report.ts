/**
 * A link check's result as a file: CSV, Markdown, JUnit XML or SARIF 2.1.0 (decision 0217). Pure:
 * it reads the spec's JSON as the route presents it (so an idempotent replay renders the same file
 * from the kept answer) and returns text. Well-kept writers do the quoting and escaping: csv-stringify
 * (with formula escaping, as a site's authored hrefs and texts reach the cells) and fast-xml-parser's
 * builder (which, unlike xmlbuilder2, escapes an `&amp;` in the text as the text it is).
 */
import { stringify } from 'csv-stringify/sync';
import { XMLBuilder } from 'fast-xml-parser';

export const REPORT_FORMATS = ['csv', 'md', 'junit', 'sarif'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const isReportFormat = (value: string): value is ReportFormat =>
  (REPORT_FORMATS as readonly string[]).includes(value);

/** Each format's content type and file extension. */
export const REPORT_TYPES: Record<ReportFormat, { contentType: string; extension: string }> = {
  csv: { contentType: 'text/csv; charset=utf-8', extension: 'csv' },
  md: { contentType: 'text/markdown; charset=utf-8; variant=GFM', extension: 'md' },
  junit: { contentType: 'application/xml; charset=utf-8', extension: 'junit.xml' },
  sarif: { contentType: 'application/sarif+json', extension: 'sarif' },
};

/** A link record as the spec presents it; `element` and the crawl's fields may be absent. */
export interface ReportLink {
  url: string;
  originalHref?: string;
  text?: string;
  type?: string;
  element?: string;
  rel?: string | null;
  statusCode?: number | null;
  statusText?: string;
  severity: string;
  reason?: string;
  category?: string;
  redirected?: boolean;
  finalUrl?: string;
  responseTimeMs?: number;
  errorCode?: string;
  sources?: readonly string[];
  sourceCount?: number;
  fragments?: readonly { fragment: string; found: boolean }[];
}

export interface ReportPage {
  url: string;
  statusCode?: number | null;
  severity: string;
  depth?: number;
  reason?: string;
}

/** The fields of a single-page check's result or of a finished crawl's result. */
export interface LinkReport {
  /** The page a single-page check read, when the result names it. */
  url?: string;
  scannedAt: string;
  healthScore: number;
  grade: string;
  summary: { ok: number; warnings: number; broken: number; info: number };
  links: readonly ReportLink[];
  pages?: readonly ReportPage[];
  pagesCrawled?: number;
  totalUniqueLinks?: number;
  totalLinks?: number;
}

/** What the result is about: the page checked (single page) or the crawl's job. */
export interface ReportSubject {
  /** The page a single-page check read; for a crawl, its entry (the depth-0 page) is used. */
  pageUrl?: string;
  jobId?: string;
}

export interface ReportFile {
  body: string;
  contentType: string;
  fileName: string;
}

export function renderReport(format: ReportFormat, report: LinkReport, subject: ReportSubject): ReportFile {
  const body =
    format === 'csv'
      ? toCsv(report, subject)
      : format === 'md'
        ? toMarkdown(report, subject)
        : format === 'junit'
          ? toJunit(report, subject)
          : toSarif(report, subject);
  const { contentType, extension } = REPORT_TYPES[format];
  return { body, contentType, fileName: `${baseName(report, subject)}.${extension}` };
}

/** `broken-links-<job id>` or `broken-links-<host>`, in characters safe in any file system. */
function baseName(report: LinkReport, subject: ReportSubject): string {
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 100);
  if (subject.jobId) return `broken-links-${safe(subject.jobId)}`;
  const page = pageOf(report, subject);
  const host = page ? hostOf(page) : undefined;
  return host ? `broken-links-${safe(host)}` : 'broken-links';
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
};

/** The page the report is about: the one checked, or the crawl's entry. */
const pageOf = (report: LinkReport, subject: ReportSubject): string | undefined =>
  subject.pageUrl ?? report.url ?? report.pages?.find((page) => page.depth === 0)?.url ?? report.pages?.[0]?.url;

/** The pages a link was found on: its sources in a crawl, the page checked otherwise. */
function sourcesOf(link: ReportLink, report: LinkReport, subject: ReportSubject): readonly string[] {
  if (link.sources && link.sources.length > 0) return link.sources;
  const page = pageOf(report, subject);
  return page ? [page] : [''];
}

const missingFragments = (link: ReportLink) => (link.fragments ?? []).filter((f) => !f.found).map((f) => f.fragment);

// ---- CSV: one row per link and page it is on ----

const CSV_COLUMNS = [
  'source',
  'url',
  'originalHref',
  'element',
  'type',
  'severity',
  'statusCode',
  'statusText',
  'category',
  'reason',
  'errorCode',
  'redirected',
  'finalUrl',
  'responseTimeMs',
  'sourceCount',
  'rel',
  'text',
  'missingFragments',
] as const;

function toCsv(report: LinkReport, subject: ReportSubject): string {
  const rows: unknown[][] = [];
  for (const link of report.links) {
    const cells = [
      link.url,
      link.originalHref ?? '',
      link.element ?? '',
      link.type ?? '',
      link.severity,
      link.statusCode ?? '',
      link.statusText ?? '',
      link.category ?? '',
      link.reason ?? '',
      link.errorCode ?? '',
      link.redirected === undefined ? '' : String(link.redirected),
      link.finalUrl ?? '',
      link.responseTimeMs ?? '',
      link.sourceCount ?? 1,
      link.rel ?? '',
      link.text ?? '',
      missingFragments(link).join(' '),
    ];
    for (const source of sourcesOf(link, report, subject)) rows.push([source, ...cells]);
  }
  // CRLF as RFC 4180 says; formulas escaped, as authored texts and hrefs reach spreadsheet cells.
  return stringify(rows, {
    header: true,
    columns: [...CSV_COLUMNS],
    record_delimiter: 'windows',
    escape_formulas: true,
  });
}

// ---- Markdown: a readable report of what needs fixing ----

/** A table cell of plain text: Markdown's punctuation escaped, on one line. */
function mdText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\\`*_{}[\]()<>#+!|~-]/g, '\\$&');
}

/** A URL as a code span (shown as written, never a live link), its pipes escaped for the table. */
function mdCode(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  const longestRun = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`.replace(/\|/g, '\\|');
}

const status = (link: ReportLink | ReportPage) =>
  link.statusCode === null || link.statusCode === undefined
    ? 'errorCode' in link && link.errorCode
      ? link.errorCode
      : '—'
    : String(link.statusCode);

/** At most this many pages are named per link in the Markdown report (the CSV has them all). */
const MD_PAGES_PER_LINK = 3;

function toMarkdown(report: LinkReport, subject: ReportSubject): string {
  const crawl = report.pages !== undefined;
  const page = pageOf(report, subject);
  const out: string[] = [`# Broken links: ${page ? mdCode(page) : 'link check'}`, ''];
  const s = report.summary;
  const counts = crawl
    ? `${report.pagesCrawled ?? report.pages?.length ?? 0} pages crawled, ` +
      `${report.totalUniqueLinks ?? report.links.length} unique links`
    : `${report.totalLinks ?? report.links.length} links`;
  out.push(
    `Checked ${report.scannedAt}: health score ${report.healthScore}/100, grade ${report.grade}. ${counts}: ` +
      `${s.ok} ok, ${s.broken} broken, ${s.warnings} warnings, ${s.info} info.`,
    '',
  );
  for (const [severity, title] of [
    ['broken', 'Broken'],
    ['warning', 'Warnings'],
  ] as const) {
    const links = report.links.filter((link) => link.severity === severity);
    out.push(`## ${title} (${links.length})`, '');
    if (links.length === 0) {
      out.push('None.', '');
      continue;
    }
    out.push(
      crawl ? '| Link | Element | Status | Reason | Found on |' : '| Link | Element | Status | Reason |',
      crawl ? '| --- | --- | --- | --- | --- |' : '| --- | --- | --- | --- |',
    );
    for (const link of links) {
      const cells = [mdCode(link.url), mdText(link.element ?? ''), mdText(status(link)), mdText(link.reason ?? '')];
      if (crawl) {
        const sources = link.sources ?? [];
        const more = (link.sourceCount ?? sources.length) - Math.min(sources.length, MD_PAGES_PER_LINK);
        cells.push(sources.slice(0, MD_PAGES_PER_LINK).map(mdCode).join(', ') + (more > 0 ? ` and ${more} more` : ''));
      }
      out.push(`| ${cells.join(' | ')} |`);
    }
    out.push('');
  }
  const troubled = (report.pages ?? []).filter((p) => p.severity !== 'ok');
  if (crawl) {
    out.push(`## Pages not crawled cleanly (${troubled.length})`, '');
    if (troubled.length === 0) out.push('None.', '');
    else {
      out.push('| Page | Severity | Status | Reason |', '| --- | --- | --- | --- |');
      for (const p of troubled)
        out.push(`| ${mdCode(p.url)} | ${mdText(p.severity)} | ${mdText(status(p))} | ${mdText(p.reason ?? '')} |`);
      out.push('');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

// ---- JUnit XML: a test suite per page, a test case per link on it ----

/** Characters XML 1.0 cannot carry at all (controls but tab and line ends, lone surrogates, U+FFFE/F). */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const xmlSafe = (text: string) => text.replace(NOT_XML, '\uFFFD');
/** An attribute's value: line ends as the spaces an XML parser reads them as anyway. */
const xmlAttr = (text: string) => xmlSafe(text).replace(/[\t\n\r]/g, ' ');

const junitWriter = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  format: true,
  suppressEmptyNode: true,
});

function toJunit(report: LinkReport, subject: ReportSubject): string {
  const suites = new Map<string, ReportLink[]>();
  for (const link of report.links) {
    for (const source of sourcesOf(link, report, subject)) {
      const suite = suites.get(source) ?? [];
      suite.push(link);
      suites.set(source, suite);
    }
  }
  const tally = (links: readonly ReportLink[]) => ({
    '@tests': links.length,
    '@failures': links.filter((l) => l.severity === 'broken').length,
    '@errors': 0,
    '@skipped': links.filter((l) => l.severity === 'info').length,
  });
  const testcase = (link: ReportLink, source: string) => {
    const message = xmlAttr(link.reason ?? link.category ?? link.severity);
    const details = xmlSafe(
      [
        `${link.url} (${link.element ?? link.type ?? 'link'}) on ${source}`,
        `status: ${status(link)}${link.statusText ? ` ${link.statusText}` : ''}`,
        link.finalUrl ? `redirected to: ${link.finalUrl}` : '',
        missingFragments(link).length ? `missing fragments: ${missingFragments(link).join(', ')}` : '',
      ]
        .filter(Boolean)
        .join('\n'),
    );
    return {
      '@name': xmlAttr(link.url),
      '@classname': xmlAttr(source),
      '@time': ((link.responseTimeMs ?? 0) / 1000).toFixed(3),
      ...(link.severity === 'broken'
        ? { failure: { '@message': message, '@type': xmlAttr(link.category ?? 'broken'), '#text': details } }
        : link.severity === 'info'
          ? { skipped: { '@message': message } }
          : link.severity === 'warning'
            ? { 'system-out': `warning: ${message}\n${details}` }
            : {}),
    };
  };
  const all = [...suites.values()].flat();
  const doc = {
    '?xml': { '@version': '1.0', '@encoding': 'UTF-8' },
    testsuites: {
      '@name': xmlAttr(`Broken links: ${pageOf(report, subject) ?? ''}`),
      ...tally(all),
      '@timestamp': report.scannedAt,
      testsuite: [...suites].map(([source, links]) => ({
        '@name': xmlAttr(source),
        ...tally(links),
        '@timestamp': report.scannedAt,
        testcase: links.map((link) => testcase(link, source)),
      })),
    },
  };
  return junitWriter.build(doc);
}

// ---- SARIF 2.1.0: a result per broken or warning link and page it is on ----

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

/** A category as a rule id: `4xx Client error` -> `4xx-client-error`. */
const ruleId = (category: string) =>
  category
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'link';

/**
 * A page's URL as an RFC 3986 URI, as SARIF's `uri` must be: the characters a WHATWG URL leaves
 * as they are but RFC 3986 does not allow (`|`, `^`...) percent-encoded.
 */
const sarifUri = (url: string) =>
  url.replace(/[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/gu, (c) => {
    try {
      return encodeURIComponent(c);
    } catch {
      return '%EF%BF%BD';
    }
  });

function toSarif(report: LinkReport, subject: ReportSubject): string {
  const rules: { id: string; name: string; shortDescription: { text: string } }[] = [];
  const ruleIndex = new Map<string, number>();
  const results: object[] = [];
  for (const link of report.links) {
    if (link.severity !== 'broken' && link.severity !== 'warning') continue;
    const category = link.category || (link.severity === 'broken' ? 'Broken link' : 'Link warning');
    const id = ruleId(category);
    let index = ruleIndex.get(id);
    if (index === undefined) {
      index = rules.length;
      ruleIndex.set(id, index);
      rules.push({ id, name: category, shortDescription: { text: category } });
    }
    const properties: Record<string, unknown> = { url: link.url, statusCode: link.statusCode ?? null };
    for (const key of ['element', 'type', 'errorCode', 'finalUrl', 'originalHref'] as const)
      if (link[key] !== undefined && link[key] !== '') properties[key] = link[key];
    const missing = missingFragments(link);
    if (missing.length) properties.missingFragments = missing;
    for (const source of sourcesOf(link, report, subject)) {
      results.push({
        ruleId: id,
        ruleIndex: index,
        level: link.severity === 'broken' ? 'error' : 'warning',
        message: { text: `${link.url}: ${link.reason ?? category}` },
        ...(source ? { locations: [{ physicalLocation: { artifactLocation: { uri: sarifUri(source) } } }] } : {}),
        properties,
      });
    }
  }
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'Web Utility API broken-link check', rules } },
        results,
        properties: {
          healthScore: report.healthScore,
          grade: report.grade,
          scannedAt: report.scannedAt,
          ...(subject.jobId ? { jobId: subject.jobId } : {}),
        },
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
