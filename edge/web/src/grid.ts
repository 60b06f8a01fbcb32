/**
 * A grid of links: sorts by any column, filters by severity, type and element, searches, shows a
 * page of rows at a time, and exports what matches as CSV. Narrow screens show each row as a card.
 */
import { h, show } from './dom.js';

export type Row = Record<string, unknown>;

export interface Column {
  key: string;
  label: string;
  /** The cell's content; default: the value as text. */
  render?: (row: Row) => Node | string;
  /** Numeric columns sort as numbers. */
  numeric?: boolean;
}

const PAGE_SIZE = 25;
/** Columns offered as filters when the rows have them. */
const FILTERS = [
  ['severity', 'Severity'],
  ['type', 'Type'],
  ['element', 'Element'],
] as const;

const text = (value: unknown): string =>
  value === null || value === undefined ? '' : Array.isArray(value) ? value.join(' ') : String(value);

/** RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled. */
export function toCsv(columns: readonly string[], rows: readonly Row[]): string {
  const field = (value: unknown) => {
    const s = text(value);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.join(','), ...rows.map((row) => columns.map((c) => field(row[c])).join(','))].join('\r\n');
}

let grids = 0;

export function grid(caption: string, rows: Row[], columns: Column[], fileName: string): HTMLElement {
  const id = `grid-${++grids}`;
  let sortKey = '';
  let descending = false;
  let pageIndex = 0;
  const filters = new Map<string, string>();
  let query = '';

  const body = h('tbody');
  const status = h('p', { class: 'muted rows-shown', 'aria-live': 'polite' });
  const pager = h('div', { class: 'pager' });
  const headers = columns.map((column) => {
    const button = h('button', { type: 'button', class: 'sort' }, column.label);
    const th = h('th', { scope: 'col', 'data-key': column.key }, button);
    button.addEventListener('click', () => {
      descending = sortKey === column.key ? !descending : false;
      sortKey = column.key;
      pageIndex = 0;
      for (const other of headers) other.removeAttribute('aria-sort');
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      fill();
    });
    return th;
  });

  const matching = (): Row[] => {
    const needle = query.toLowerCase();
    const kept = rows.filter(
      (row) =>
        [...filters].every(([key, value]) => !value || text(row[key]) === value) &&
        (!needle || columns.some((c) => text(row[c.key]).toLowerCase().includes(needle))),
    );
    if (!sortKey) return kept;
    const numeric = columns.find((c) => c.key === sortKey)?.numeric;
    const sign = descending ? -1 : 1;
    return kept.sort((a, b) => {
      const x = a[sortKey];
      const y = b[sortKey];
      if (numeric) return sign * ((Number(x ?? -1) || 0) - (Number(y ?? -1) || 0));
      return sign * text(x).localeCompare(text(y));
    });
  };

  function fill(): void {
    const all = matching();
    const pages = Math.max(1, Math.ceil(all.length / PAGE_SIZE));
    pageIndex = Math.min(pageIndex, pages - 1);
    const first = pageIndex * PAGE_SIZE;
    const shown = all.slice(first, first + PAGE_SIZE);
    const filtered = all.length < rows.length ? ` (${rows.length} in all)` : '';
    status.textContent = all.length
      ? `Rows ${first + 1}–${first + shown.length} of ${all.length}${filtered}`
      : 'No rows match.';
    show(
      body,
      shown.map((row) =>
        h(
          'tr',
          { class: typeof row.severity === 'string' ? `sev-${row.severity}` : undefined },
          columns.map((c) => {
            const content = c.render ? c.render(row) : text(row[c.key]) || '—';
            return h('td', { 'data-label': c.label, class: content === '—' ? 'empty' : undefined }, content);
          }),
        ),
      ),
    );
    show(
      pager,
      pages > 1
        ? [
            h(
              'button',
              { type: 'button', class: 'ghost', disabled: pageIndex === 0, onclick: () => turn(-1) },
              'Previous',
            ),
            h('span', {}, `Page ${pageIndex + 1} of ${pages}`),
            h(
              'button',
              { type: 'button', class: 'ghost', disabled: pageIndex >= pages - 1, onclick: () => turn(1) },
              'Next',
            ),
          ]
        : [],
    );
  }
  const turn = (by: number) => {
    pageIndex += by;
    fill();
  };

  const controls = h('div', { class: 'grid-controls' });
  const search = h('input', { id: `${id}-search`, type: 'search', placeholder: 'URL, text, status…' });
  search.addEventListener('input', () => {
    query = search.value;
    pageIndex = 0;
    fill();
  });
  controls.append(h('div', { class: 'field' }, h('label', { for: `${id}-search` }, 'Search'), search));
  for (const [key, label] of FILTERS) {
    const values = [...new Set(rows.map((r) => r[key]).filter((v): v is string => typeof v === 'string'))].sort();
    if (values.length < 2) continue;
    const select = h(
      'select',
      { id: `${id}-${key}`, 'data-filter': key },
      h('option', { value: '' }, 'all'),
      values.map((v) => h('option', { value: v }, v)),
    );
    select.addEventListener('change', () => {
      filters.set(key, select.value);
      pageIndex = 0;
      fill();
    });
    controls.append(h('div', { class: 'field' }, h('label', { for: `${id}-${key}` }, label), select));
  }
  const csv = h('button', { type: 'button', class: 'ghost csv' }, 'Export CSV');
  csv.addEventListener('click', () => {
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const blob = new Blob([toCsv(keys, matching())], { type: 'text/csv' });
    const link = h('a', { href: URL.createObjectURL(blob), download: fileName });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  });
  controls.append(csv);
  fill();
  return h(
    'div',
    { class: 'grid' },
    controls,
    status,
    h(
      'div',
      { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': caption },
      h('table', {}, h('caption', {}, caption), h('thead', {}, h('tr', {}, headers)), body),
    ),
    pager,
  );
}
