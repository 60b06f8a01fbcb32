/** What every tool's result view is made of: value readers, facts, grades, scores, charts, the raw reply. */
import { h } from './dom.js';
import type { Row } from './grid.js';

export const isRow = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
export const rowsOf = (v: unknown): Row[] => (Array.isArray(v) ? v.filter(isRow) : []);
export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A value as text, a link when it is a URL we serve. */
export function cell(key: string, value: unknown): Node | string {
  if (typeof value === 'string' && /Url$/.test(key) && value.startsWith('http'))
    return h('a', { href: value }, key === 'downloadUrl' ? 'Download' : value);
  if (Array.isArray(value)) return value.every((v) => !isRow(v)) ? value.join(', ') : `${value.length} items`;
  if (isRow(value)) return facts(value);
  return value === null || value === undefined ? '—' : String(value);
}

export function facts(row: Row, labels: Record<string, string> = {}): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    Object.entries(row)
      .filter(([, v]) => !Array.isArray(v) || v.every((x) => !isRow(x)))
      .flatMap(([k, v]) => [h('dt', {}, labels[k] ?? k), h('dd', {}, cell(k, v))]),
  );
}

/** A letter grade in its colour. */
export const gradeBadge = (grade: string, what: string) =>
  h('p', { class: `grade grade-${grade.replace('+', 'plus')}`, 'aria-label': `${what} grade ${grade}` }, grade);

/** A 0-100 score as a bar. */
export function scoreBar(label: string, score: number): HTMLElement {
  const id = `meter-${label.replace(/\W/g, '')}`;
  return h(
    'div',
    { class: 'score' },
    h('label', { for: id }, `${label}: ${score} / 100`),
    h('meter', { id, min: 0, max: 100, low: 50, high: 80, optimum: 100, value: score }),
  );
}

/** Counts as a small bar chart: each count a bar relative to the largest. */
export function countChart(label: string, counts: [string, number, string][]): HTMLElement {
  const max = Math.max(1, ...counts.map(([, n]) => n));
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', {}, label),
    h(
      'ul',
      {},
      counts.map(([name, n, tone]) =>
        h(
          'li',
          {},
          h('span', { class: 'chart-label' }, name),
          h('meter', { class: `bar-${tone}`, min: 0, max, value: n, 'aria-label': `${name}: ${n}` }),
          h('span', { class: 'chart-value' }, n.toLocaleString('en')),
        ),
      ),
    ),
  );
}

export const raw = (reply: unknown) =>
  h('details', { class: 'raw' }, h('summary', {}, 'Raw JSON'), h('pre', {}, JSON.stringify(reply, null, 2)));

export const day = (iso: unknown) => (typeof iso === 'string' ? new Date(iso).toLocaleDateString('en-GB') : '—');
export const daysLeft = (iso: unknown) =>
  typeof iso === 'string' ? Math.floor((Date.parse(iso) - Date.now()) / 86_400_000) : Number.NaN;
export const nameField = (name: unknown, field: string) =>
  isRow(name) && typeof name[field] === 'string' ? name[field] : '—';

/** A result URL's host, for file names. */
export const host = (url: unknown) => {
  try {
    return new URL(str(url)).hostname || 'result';
  } catch {
    return 'result';
  }
};
export const stamp = () => new Date().toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');
