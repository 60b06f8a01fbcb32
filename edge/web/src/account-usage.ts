/**
 * The account page's usage chart: credits spent per day over the last 30 days, each day's bar
 * stacked by operation (GET /account/usage/daily). Drawn as SVG in the page; to a screen reader
 * it is one image with its figures in words, and the legend lists each operation's total.
 */
import { call } from './api.js';
import { h } from './dom.js';

interface OperationUsage {
  operation: string;
  credits: number;
  calls: number;
}

interface DayUsage {
  day: string;
  credits: number;
  calls: number;
  operations: OperationUsage[];
}

const SVG = 'http://www.w3.org/2000/svg';
/** Operations drawn in colours of their own, the most spent first; the rest share one. */
const SERIES = 5;

function svg(tag: string, attrs: Record<string, string | number>, ...children: (Element | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag) as SVGElement;
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  el.append(...children);
  return el;
}

const dayLabel = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** The chart of `days` (oldest first), with its legend. */
export function usageByDayChart(days: DayUsage[]): HTMLElement {
  const totals = new Map<string, number>();
  for (const day of days)
    for (const op of day.operations) totals.set(op.operation, (totals.get(op.operation) ?? 0) + op.credits);
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = ranked.slice(0, SERIES).map(([operation]) => operation);
  const series = (operation: string) => {
    const i = shown.indexOf(operation);
    return i === -1 ? 'series-other' : `series-${i}`;
  };
  const width = 6;
  const gap = 2;
  const height = 60;
  const top = Math.max(1, ...days.map((day) => day.credits));
  const spent = days.reduce((sum, day) => sum + day.credits, 0);
  const busiest = days.reduce((best, day) => (day.credits > best.credits ? day : best), days[0] as DayUsage);
  const words = spent
    ? `Credits spent per day, last ${days.length} days: ${spent} in all; most on ${dayLabel(busiest.day)} ` +
      `(${busiest.credits}). By operation: ${ranked.map(([op, credits]) => `${op} ${credits}`).join(', ')}.`
    : `Credits spent per day, last ${days.length} days: none yet.`;
  const bars = days.flatMap((day, i) => {
    let y = height;
    const title =
      `${dayLabel(day.day)}: ${day.credits} credits, ${day.calls} calls` +
      (day.operations.length ? ` (${day.operations.map((op) => `${op.operation} ${op.credits}`).join(', ')})` : '');
    const stack = [...day.operations].sort((a, b) => shown.indexOf(a.operation) - shown.indexOf(b.operation));
    return stack.map((op) => {
      const tall = (op.credits / top) * height;
      y -= tall;
      return svg(
        'rect',
        { x: i * (width + gap), y: y.toFixed(2), width, height: tall.toFixed(2), class: series(op.operation) },
        svg('title', {}, title),
      );
    });
  });
  const chart = svg(
    'svg',
    {
      class: 'usage-bars',
      viewBox: `0 0 ${days.length * (width + gap) - gap} ${height}`,
      preserveAspectRatio: 'none',
      role: 'img',
      'aria-label': words,
    },
    svg('line', { x1: 0, y1: height, x2: days.length * (width + gap), y2: height, class: 'axis' }),
    ...bars,
  );
  const legend = [
    ...shown.map((operation) => [operation, totals.get(operation) ?? 0, series(operation)] as const),
    ...(ranked.length > SERIES
      ? [['other', ranked.slice(SERIES).reduce((sum, [, credits]) => sum + credits, 0), 'series-other'] as const]
      : []),
  ];
  return h(
    'figure',
    { class: 'usage-chart', id: 'usage-chart' },
    h('figcaption', {}, `Credits spent per day, last ${days.length} days (UTC), by operation; most in a day: ${top}`),
    chart as unknown as HTMLElement,
    h(
      'div',
      { class: 'usage-axis', 'aria-hidden': 'true' },
      h('span', {}, dayLabel(days[0]?.day ?? '')),
      h('span', {}, dayLabel(days[days.length - 1]?.day ?? '')),
    ),
    legend.length
      ? h(
          'ul',
          { class: 'usage-legend' },
          legend.map(([operation, credits, cls]) =>
            h('li', {}, h('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }), `${operation}: ${credits}`),
          ),
        )
      : h('p', { class: 'muted' }, 'No calls have spent credits in these days.'),
  );
}

/** Reads the last 30 days and draws them into `container`. */
export async function usageByDay(container: HTMLElement): Promise<void> {
  const { days } = await call<{ days: DayUsage[] }>('GET', '/account/usage/daily?days=30');
  container.replaceChildren(usageByDayChart(days));
}
