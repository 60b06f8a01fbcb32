/**
 * A site audit's report (decision 0476): the health score and category scores, charts of pages by
 * status code and click depth and of issues by category, what changed since the previous audit of
 * the site, and a table per issue type with its first affected URLs and its CSV. The same view is
 * the playground's result and the shareable page /site-audit/<job id>, read without a credential
 * from GET /v1/site-audit/{job_id} (a job poll, free) while the job is kept.
 */
import { API, ApiError, call } from './api.js';
import { h, show } from './dom.js';
import type { Row } from './grid.js';
import { countChart, host, isRow, num, rowsOf, scoreBar, str } from './result-parts.js';
import { siteChecksView } from './site-audit-site.js';

const PRIORITY_TONE: Record<string, string> = { error: 'broken', warning: 'warning', notice: 'info' };
const CATEGORY_NAMES: Record<string, string> = {
  indexability: 'Indexability',
  content: 'Content',
  links: 'Links',
  performance: 'Performance',
  international: 'International',
  structured_data: 'Structured data',
  images: 'Images',
  security: 'Security',
  sitemap: 'Sitemap',
};

const figure = (v: unknown) => num(v).toLocaleString('en');
const jobPath = (jobId: string) => `${API}/site-audit/${encodeURIComponent(jobId)}`;

/** Counted rows (status codes, depths) as a chart. */
function countsChart(label: string, rows: Row[], name: (key: string) => string, tone: (key: string) => string) {
  return countChart(
    label,
    rows.map((row) => [name(str(row.key)), num(row.pages), tone(str(row.key))]),
  );
}

const statusTone = (key: string) => (/^2/.test(key) ? 'ok' : /^3/.test(key) || key === 'robots' ? 'warning' : 'broken');
const statusName = (key: string) => (key === 'error' ? 'No answer' : key === 'robots' ? 'Robots.txt' : key);
const depthName = (key: string) => (key === 'unlinked' ? 'Unlinked' : `${key} clicks`);

/** New and fixed issues since the previous audit of the same site by the same caller. */
function comparisonView(comparison: unknown): HTMLElement {
  if (!isRow(comparison))
    return h('p', { class: 'muted' }, 'No earlier audit of this site is kept: the next one will compare with this.');
  const list = (what: string, rows: Row[], total: number) =>
    rows.length === 0
      ? h('p', {}, `${what} issues on URLs: none.`)
      : h(
          'details',
          {},
          h('summary', {}, `${what} issues on URLs: ${total.toLocaleString('en')}`),
          h(
            'ul',
            { class: 'audit-changes' },
            rows.map((row) => h('li', {}, h('code', {}, str(row.issue)), ' ', str(row.url))),
          ),
        );
  return h(
    'div',
    {},
    h(
      'p',
      {},
      'Compared with the audit of ',
      h(
        'time',
        { datetime: str(comparison.previousScannedAt) },
        new Date(str(comparison.previousScannedAt)).toLocaleString(),
      ),
      ` (job ${str(comparison.previousJobId)}). New issue types: ${strings(comparison.newIssues) || 'none'}; fixed: `,
      `${strings(comparison.fixedIssues) || 'none'}.`,
    ),
    list('New', rowsOf(comparison.newFindings), num(comparison.newFindingsTotal)),
    list('Fixed', rowsOf(comparison.fixedFindings), num(comparison.fixedFindingsTotal)),
  );
}

const strings = (v: unknown) => (Array.isArray(v) ? v.map(String).join(', ') : '');

/** One issue type: what it is, how to fix it, its first affected URLs and the file of all of them. */
function issueTable(jobId: string, issue: Row, index: number): HTMLElement {
  const id = str(issue.id);
  const affected = rowsOf(issue.affected);
  const total = num(issue.affectedTotal);
  const headingId = `issue-${index}`;
  return h(
    'section',
    { class: 'card audit-issue', 'aria-labelledby': headingId },
    h(
      'h3',
      { id: headingId },
      h('span', { class: `priority sev-${PRIORITY_TONE[str(issue.priority)] ?? 'info'}` }, str(issue.priority)),
      ' ',
      str(issue.title),
    ),
    h(
      'p',
      {},
      `${num(issue.pagesAffected).toLocaleString('en')} page(s) affected · `,
      h('code', {}, id),
      ` · ${CATEGORY_NAMES[str(issue.category)] ?? str(issue.category)}`,
    ),
    h('p', {}, h('strong', {}, 'Fix: '), str(issue.fix)),
    h(
      'table',
      {},
      h('caption', {}, affected.length < total ? `First ${affected.length} of ${total} URLs` : `${total} URL(s)`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'URL'), h('th', { scope: 'col' }, 'Detail'))),
      h(
        'tbody',
        {},
        affected.map((a) =>
          h(
            'tr',
            {},
            h('td', { class: 'url' }, str(a.url)),
            h(
              'td',
              {},
              str(a.detail),
              Array.isArray(a.sources) && a.sources.length
                ? h('span', { class: 'muted' }, ` · on ${a.sources.slice(0, 3).map(String).join(', ')}`)
                : null,
            ),
          ),
        ),
      ),
    ),
    h(
      'p',
      {},
      h(
        'a',
        { href: `${jobPath(jobId)}/issues/${encodeURIComponent(id)}?format=csv&limit=1000`, download: true },
        `Download the URLs of “${str(issue.title)}” (CSV)`,
      ),
    ),
  );
}

/** The finished audit's report. */
export function siteAuditView(reply: Row, jobId: string): HTMLElement[] {
  const categories = rowsOf(reply.categories);
  const issues = rowsOf(reply.issues);
  return [
    h(
      'div',
      { class: 'card' },
      h(
        'p',
        {},
        `${figure(reply.pagesAudited)} pages audited of ${figure(reply.pagesDiscovered)} found `,
        `(cap ${figure(reply.pagesCap)}) · ${issues.length} issue types · ${figure(reply.brokenLinks)} broken links`,
      ),
      scoreBar('Health score', num(reply.healthScore)),
      reply.truncatedPages ? h('p', { class: 'muted' }, 'The audit reached its page cap or time budget.') : null,
      h(
        'p',
        { class: 'downloads' },
        'Download: ',
        h('a', { href: `${jobPath(jobId)}?format=csv`, download: true }, 'Issues (CSV)'),
        ' · ',
        h('a', { href: `/site-audit/${encodeURIComponent(jobId)}` }, 'Shareable report page'),
      ),
    ),
    h(
      'div',
      { class: 'figures' },
      countsChart('Pages by status code', rowsOf(reply.statusCodes), statusName, statusTone),
      countsChart('Pages by click depth', rowsOf(reply.depths), depthName, () => 'info'),
      countChart(
        'Issue types by category',
        categories.map((c) => [
          CATEGORY_NAMES[str(c.id)] ?? str(c.id),
          num(c.errors) + num(c.warnings) + num(c.notices),
          num(c.errors) ? 'broken' : num(c.warnings) ? 'warning' : 'ok',
        ]),
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Category scores'),
      categories.map((c) => scoreBar(CATEGORY_NAMES[str(c.id)] ?? str(c.id), num(c.score))),
    ),
    ...siteChecksView(reply.site),
    h('h2', {}, 'Since the previous audit'),
    comparisonView(reply.comparison),
    h('h2', {}, 'Issues'),
    ...(issues.length === 0 ? [h('p', {}, 'No issues found.')] : issues.map((issue, i) => issueTable(jobId, issue, i))),
  ];
}

/** /site-audit/<job id>: the report of a kept audit, for anyone with its address. */
export async function siteAuditReportPage(main: HTMLElement, jobId: string): Promise<void> {
  show(main, h('h1', {}, 'Site audit report'), h('p', { class: 'muted', role: 'status' }, 'Loading…'));
  let job: { status: string; result?: Row; error?: { message: string }; progress: Row };
  try {
    job = await call('GET', `/site-audit/${encodeURIComponent(jobId)}`);
  } catch (err) {
    const gone = err instanceof ApiError && err.status === 404;
    show(main, h('h1', {}, 'Site audit report'));
    const why = gone ? 'This audit is unknown or has expired.' : err instanceof Error ? err.message : String(err);
    main.append(h('p', { class: 'error', role: 'alert' }, why));
    return;
  }
  if (job.status !== 'done' || !job.result) {
    show(
      main,
      h('h1', {}, 'Site audit report'),
      h(
        'p',
        { role: 'status' },
        job.status === 'failed'
          ? `The audit failed: ${job.error?.message ?? 'no report'}.`
          : `The audit is still running (${str(job.progress.message)}); reload this page later.`,
      ),
    );
    return;
  }
  show(
    main,
    h('h1', {}, `Site audit of ${host(job.result.url)}`),
    h(
      'p',
      { class: 'muted' },
      h('a', { href: str(job.result.url) }, str(job.result.url)),
      ' · ',
      h('time', { datetime: str(job.result.scannedAt) }, new Date(str(job.result.scannedAt)).toLocaleString()),
    ),
    siteAuditView(job.result, jobId),
  );
}
