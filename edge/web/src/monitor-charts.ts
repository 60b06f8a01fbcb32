/**
 * The monitors' charts, drawn as SVG in the page (no chart library bundled): one bar per day
 * coloured by that day's uptime, and a line of response times. Each chart is one image to a
 * screen reader (role img, with its figures in words); each bar has a title for pointers.
 */

const SVG = 'http://www.w3.org/2000/svg';

/** One day's uptime (the service's DayBar). */
export interface DayBar {
  day: string;
  percent: number | null;
  checks: number;
  failures: number;
}

/** One point of the response-time chart (the service's ResponseTimePoint). */
export interface ResponseTimePoint {
  at: string;
  meanMs: number | null;
  maxMs: number | null;
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  ...children: (SVGElement | string)[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  el.append(...children);
  return el;
}

/** A day's bar class: its colour comes from the stylesheet (light and dark). */
export function barClass(bar: DayBar): string {
  if (bar.percent === null) return 'bar-none';
  if (bar.percent >= 99.9) return 'bar-up';
  if (bar.percent >= 95) return 'bar-partial';
  return 'bar-down';
}

const dayTitle = (bar: DayBar) =>
  bar.percent === null
    ? `${bar.day}: no checks`
    : `${bar.day}: ${bar.percent}% up, ${bar.failures} of ${bar.checks} checks failed`;

/** Uptime bars, oldest day first; scales to its container's width. */
export function uptimeBars(bars: DayBar[], label: string): SVGSVGElement {
  const gap = 2;
  const width = 6;
  const height = 32;
  const total = bars.length * (width + gap) - gap;
  const checked = bars.filter((bar) => bar.percent !== null);
  const worst = checked.reduce<DayBar | undefined>(
    (low, bar) => (low === undefined || (bar.percent ?? 100) < (low.percent ?? 100) ? bar : low),
    undefined,
  );
  const words = checked.length
    ? `${label}: ${bars.length} days, ${checked.length} with checks; lowest ${worst?.percent}% on ${worst?.day}`
    : `${label}: no checks yet`;
  return svg(
    'svg',
    {
      class: 'uptime-bars',
      viewBox: `0 0 ${total} ${height}`,
      preserveAspectRatio: 'none',
      role: 'img',
      'aria-label': words,
    },
    ...bars.map((bar, i) =>
      svg(
        'rect',
        { x: i * (width + gap), y: 0, width, height, rx: 1, class: barClass(bar) },
        svg('title', {}, dayTitle(bar)),
      ),
    ),
  );
}

/** A line of mean response times (gaps where nothing answered), with its slowest and fastest named. */
export function responseTimeChart(points: ResponseTimePoint[], label: string): SVGSVGElement {
  const width = 300;
  const height = 80;
  const pad = 4;
  const values = points.map((point) => point.meanMs).filter((ms): ms is number => ms !== null);
  const top = Math.max(1, ...values);
  const x = (i: number) => pad + (i * (width - 2 * pad)) / Math.max(1, points.length - 1);
  const y = (ms: number) => height - pad - (ms / top) * (height - 2 * pad);
  // One path, "M" after each gap so a missing bucket breaks the line instead of bridging it.
  let d = '';
  let drawing = false;
  for (const [i, point] of points.entries()) {
    if (point.meanMs === null) {
      drawing = false;
      continue;
    }
    d += `${drawing ? 'L' : 'M'}${x(i).toFixed(1)} ${y(point.meanMs).toFixed(1)} `;
    drawing = true;
  }
  const words = values.length
    ? `${label}: mean response time between ${Math.min(...values)} and ${Math.max(...values)} ms`
    : `${label}: no responses yet`;
  return svg(
    'svg',
    { class: 'response-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': words },
    svg('line', { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, class: 'axis' }),
    svg('path', { d: d.trim() || `M${pad} ${height - pad}`, class: 'line', fill: 'none' }),
    svg('text', { x: pad, y: 12, class: 'chart-label' }, `${top} ms`),
  );
}
