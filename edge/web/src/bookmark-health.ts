/**
 * Bookmark health (POST /v1/bookmarks/check): the check's progress, its result grouped by folder
 * with filters, and the cleaned copies of the file to download.
 */
import { h, show } from './dom.js';
import { grid, type Row } from './grid.js';
import { countChart, gradeBadge, scoreBar } from './result-parts.js';

const isRow = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
const rowsOf = (v: unknown): Row[] => (Array.isArray(v) ? v.filter(isRow) : []);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const pathOf = (row: Row) => (Array.isArray(row.folderPath) ? row.folderPath.map(String) : []);
const folderName = (path: string[]) => (path.length ? path.join(' / ') : 'Top level');

export function showBookmarkProgress(progress: Element, status: string, p: Row): void {
  const total = Math.max(1, num(p.urlsTotal));
  show(
    progress,
    h('p', { class: 'phase' }, `Phase: ${str(p.phase)}`),
    h('label', { for: 'check-bar' }, `${num(p.urlsChecked)} of ${num(p.urlsTotal)} distinct URLs checked`),
    h('progress', { id: 'check-bar', max: total, value: status === 'done' ? total : num(p.urlsChecked) }),
    h('p', { class: 'muted' }, `${num(p.bookmarksTotal).toLocaleString('en')} bookmarks · ${str(p.message)}`),
  );
}

/** Which bookmarks a filter shows. */
const FILTERS: [string, string, (b: Row) => boolean][] = [
  ['all', 'All', () => true],
  ['broken', 'Broken', (b) => b.severity === 'broken'],
  ['redirected', 'Redirected', (b) => typeof b.finalUrl === 'string' && b.severity !== 'broken'],
  ['duplicates', 'Duplicates', (b) => typeof b.duplicateOf === 'number'],
  ['warnings', 'Warnings', (b) => b.severity === 'warning' && typeof b.finalUrl !== 'string'],
  ['unchecked', 'Not checked', (b) => b.severity === 'info'],
];

function bookmarkItem(b: Row, all: Row[]): HTMLElement {
  const first = typeof b.duplicateOf === 'number' ? all[b.duplicateOf] : undefined;
  return h(
    'li',
    { class: `bookmark severity-${str(b.severity)}` },
    h('a', { href: str(b.url), rel: 'noopener noreferrer nofollow', target: '_blank' }, str(b.title) || str(b.url)),
    ' ',
    h('span', { class: `tag tag-${str(b.severity)}` }, b.statusCode === null ? str(b.severity) : String(b.statusCode)),
    h('div', { class: 'muted' }, str(b.reason)),
    typeof b.finalUrl === 'string'
      ? h(
          'div',
          { class: 'muted' },
          b.permanentRedirect ? 'Moved permanently to ' : 'Redirects to ',
          h('code', {}, b.finalUrl),
        )
      : null,
    first ? h('div', { class: 'muted' }, `Duplicate of “${str(first.title)}” in ${folderName(pathOf(first))}`) : null,
  );
}

/** One collapsible section per folder, the bookmarks the filter keeps, folders without any left out. */
function byFolder(bookmarks: Row[], keep: (b: Row) => boolean): HTMLElement[] {
  const folders = new Map<string, Row[]>();
  for (const b of bookmarks) {
    if (!keep(b)) continue;
    const key = folderName(pathOf(b));
    const list = folders.get(key) ?? [];
    list.push(b);
    folders.set(key, list);
  }
  if (folders.size === 0) return [h('p', { class: 'muted' }, 'No bookmark matches this filter.')];
  return [...folders].map(([name, list]) =>
    h(
      'details',
      { class: 'folder', open: folders.size <= 12 },
      h('summary', {}, `${name} (${list.length})`),
      h(
        'ul',
        { class: 'bookmarks' },
        list.slice(0, 500).map((b) => bookmarkItem(b, bookmarks)),
      ),
      list.length > 500 ? h('p', { class: 'muted' }, `and ${list.length - 500} more (see the table below)`) : null,
    ),
  );
}

/** Links to the cleaned copies: what to leave out and rewrite, and the format. */
function downloads(jobId: string, sourceFormat: string): HTMLElement {
  const options = {
    broken: h('input', { type: 'checkbox', id: 'drop-broken', checked: true }),
    duplicates: h('input', { type: 'checkbox', id: 'drop-duplicates', checked: true }),
    redirects: h('input', { type: 'checkbox', id: 'update-redirects', checked: true }),
    format: h(
      'select',
      { id: 'clean-format' },
      h('option', { value: 'xbel', selected: sourceFormat === 'xbel' }, 'XBEL'),
      h('option', { value: 'html', selected: sourceFormat === 'html' }, 'Browser HTML'),
    ),
  };
  const link = h('a', { class: 'button', download: '' }, 'Download the cleaned file');
  const update = () => {
    const drop = [options.broken.checked ? 'broken' : '', options.duplicates.checked ? 'duplicates' : '']
      .filter(Boolean)
      .join(',');
    const query = new URLSearchParams({ format: options.format.value });
    if (drop) query.set('drop', drop);
    if (options.redirects.checked) query.set('update', 'redirects');
    link.setAttribute('href', `/api/v1/bookmarks/check/${encodeURIComponent(jobId)}/download?${query}`);
  };
  for (const input of Object.values(options)) input.addEventListener('change', update);
  update();
  return h(
    'section',
    { class: 'card downloads', 'aria-label': 'Cleaned file' },
    h('h3', {}, 'Cleaned file'),
    h(
      'p',
      { class: 'muted' },
      'Your file with only these changes: nothing else (titles, dates, folders, separators) is touched. ' +
        'Available for 30 minutes.',
    ),
    h('label', {}, options.broken, ' Remove broken bookmarks'),
    h('label', {}, options.duplicates, ' Remove duplicates (the first stays)'),
    h('label', {}, options.redirects, ' Update permanently moved bookmarks to their new address'),
    h('label', {}, 'Format ', options.format),
    h('p', {}, link),
  );
}

export function bookmarkHealthView(reply: Row, jobId: string): HTMLElement[] {
  const summary = isRow(reply.summary) ? reply.summary : {};
  const bookmarks = rowsOf(reply.bookmarks);
  const sections = h('div', { class: 'folders' });
  const select = h(
    'select',
    { id: 'bookmark-filter' },
    FILTERS.map(([id, label]) => h('option', { value: id }, label)),
  );
  const refresh = () => {
    const keep = FILTERS.find(([id]) => id === select.value)?.[2] ?? (() => true);
    show(sections, byFolder(bookmarks, keep));
  };
  select.addEventListener('change', refresh);
  refresh();
  return [
    h(
      'div',
      { class: 'summary-card' },
      gradeBadge(str(reply.grade), 'Bookmark health'),
      h(
        'div',
        { class: 'summary-body' },
        scoreBar('Health score', num(reply.healthScore)),
        h(
          'dl',
          { class: 'figures' },
          [
            ['Bookmarks', reply.totalBookmarks],
            ['Checked', reply.checkedBookmarks],
            ['Distinct URLs', reply.uniqueUrls],
            ['Duplicates', summary.duplicates],
          ].map(([k, v]) => h('div', {}, h('dt', {}, String(k)), h('dd', {}, String(v ?? '—')))),
        ),
        reply.truncated
          ? h('p', { class: 'muted' }, 'Not every bookmark was checked (over 5,000, or the 6-minute budget ended).')
          : null,
      ),
      countChart('Bookmarks by result', [
        ['OK', num(summary.ok), 'ok'],
        ['Redirected', num(summary.redirected), 'warning'],
        ['Warnings', num(summary.warnings), 'warning'],
        ['Broken', num(summary.broken), 'broken'],
        ['Not checked', num(summary.unchecked), 'info'],
      ]),
    ),
    jobId ? downloads(jobId, str(reply.sourceFormat)) : h('p', {}),
    h('h3', {}, 'By folder'),
    h('label', { for: 'bookmark-filter' }, 'Show ', select),
    sections,
    grid(
      'Bookmarks',
      bookmarks.map((b) => ({ ...b, folder: folderName(pathOf(b)) })),
      [
        { key: 'title', label: 'Title' },
        { key: 'url', label: 'URL' },
        { key: 'folder', label: 'Folder' },
        { key: 'statusCode', label: 'Status', numeric: true },
        { key: 'severity', label: 'Severity' },
        { key: 'reason', label: 'Reason' },
        { key: 'finalUrl', label: 'Final URL' },
        { key: 'duplicateOf', label: 'Duplicate of', numeric: true },
      ],
      'bookmarks.csv',
    ),
  ];
}
