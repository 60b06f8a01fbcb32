/** The link tools' result views: a broken-link check or crawl, a link extraction or crawl. */
import { h } from './dom.js';
import { type Column, grid, type Row } from './grid.js';
import { countChart, gradeBadge, host, isRow, num, rowsOf, scoreBar, str } from './result-parts.js';

const linkCell = (row: Row) => {
  const url = str(row.url);
  return /^https?:/.test(url) ? h('a', { href: url, rel: 'nofollow noopener', target: '_blank' }, url) : url;
};
const statusCell = (row: Row) =>
  row.statusCode === null || row.statusCode === undefined
    ? str(row.statusText) || '—'
    : `${row.statusCode} ${str(row.statusText)}`.trim();
const sourcesCell = (row: Row) => {
  const sources = Array.isArray(row.sources) ? (row.sources as string[]) : [];
  if (!sources.length) return '—';
  const count = num(row.sourceCount) || sources.length;
  return h(
    'details',
    {},
    h('summary', {}, `${count} page${count === 1 ? '' : 's'}`),
    h(
      'ul',
      { class: 'sources' },
      sources.map((s) => h('li', {}, s)),
    ),
  );
};

const BROKEN_COLUMNS: Column[] = [
  { key: 'url', label: 'Link', render: linkCell },
  { key: 'statusCode', label: 'Status', render: statusCell, numeric: true },
  { key: 'severity', label: 'Severity' },
  { key: 'type', label: 'Type' },
  { key: 'reason', label: 'Reason' },
  { key: 'responseTimeMs', label: 'Time (ms)', numeric: true },
];
const SOURCES: Column = { key: 'sourceCount', label: 'Found on', render: sourcesCell, numeric: true };
/** The element a URL was found on (a, img, script…): links name it always, extracted links with resources. */
const ELEMENT: Column = { key: 'element', label: 'Element' };
/** The columns, with Element after Type when the rows name their elements. */
const withElement = (columns: Column[], rows: Row[]): Column[] =>
  rows.some((row) => typeof row.element === 'string')
    ? columns.flatMap((column) => (column.key === 'type' ? [column, ELEMENT] : [column]))
    : columns;
const EXTRACT_COLUMNS: Column[] = [
  { key: 'url', label: 'Link', render: linkCell },
  { key: 'text', label: 'Text' },
  { key: 'type', label: 'Type' },
  { key: 'rel', label: 'Rel' },
];

export function brokenLinksView(reply: Row, crawl: boolean): HTMLElement[] {
  const summary = isRow(reply.summary) ? reply.summary : {};
  const links = rowsOf(reply.links);
  const figures: [string, unknown][] = crawl
    ? [
        ['Pages crawled', reply.pagesCrawled],
        ['Pages found', reply.pagesDiscovered],
        ['Unique links', reply.totalUniqueLinks],
      ]
    : [
        ['Links found', reply.totalLinks],
        ['Links checked', reply.checkedLinks],
      ];
  if (typeof summary.resources === 'number') figures.push(['Resources checked', summary.resources]);
  return [
    h(
      'div',
      { class: 'summary-card' },
      gradeBadge(str(reply.grade), 'Link health'),
      h(
        'div',
        { class: 'summary-body' },
        scoreBar('Health score', num(reply.healthScore)),
        h(
          'dl',
          { class: 'figures' },
          figures.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, String(v ?? '—')))),
        ),
        reply.truncated || reply.truncatedPages || reply.truncatedLinks
          ? h('p', { class: 'muted' }, 'The scan reached its cap: not every link was checked.')
          : null,
        Array.isArray(reply.linksCutBy) && reply.linksCutBy.length > 0
          ? h('p', { class: 'muted' }, `Links left out by: ${reply.linksCutBy.map(String).join(', ')}.`)
          : null,
      ),
      countChart('Links by result', [
        ['OK', num(summary.ok), 'ok'],
        ['Warnings', num(summary.warnings), 'warning'],
        ['Broken', num(summary.broken), 'broken'],
        ['Info', num(summary.info), 'info'],
      ]),
    ),
    grid(
      'Links',
      links,
      withElement(crawl ? [...BROKEN_COLUMNS, SOURCES] : BROKEN_COLUMNS, links),
      `links-${host(reply.url)}.csv`,
    ),
  ];
}

export function linkExtractView(reply: Row, crawl: boolean): HTMLElement[] {
  const counts = isRow(reply.counts) ? reply.counts : {};
  return [
    h(
      'div',
      { class: 'summary-card' },
      countChart(`${num(reply.totalLinks).toLocaleString('en')} links`, [
        ['Internal', num(counts.internal), 'info'],
        ['External', num(counts.external), 'ok'],
        ['Mail', num(counts.mailto), 'warning'],
        ['Phone', num(counts.tel), 'warning'],
      ]),
      reply.truncated ? h('p', { class: 'muted' }, 'The page had more links than the cap.') : null,
    ),
    grid(
      'Links',
      rowsOf(reply.links),
      withElement(crawl ? [...EXTRACT_COLUMNS, SOURCES] : EXTRACT_COLUMNS, rowsOf(reply.links)),
      `links-${host(reply.url)}.csv`,
    ),
  ];
}
