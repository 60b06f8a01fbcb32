/**
 * An account's public status page (/status/<slug>, decision 0438): each monitor it chose, with its
 * uptime over 24 h, 7 d, 30 d and 90 d, one bar a day for 90 days, the last 24 hours' response
 * times, and the incidents. Read without a credential from GET /v1/status/{slug}.
 */
import { call } from './api.js';
import { h, show } from './dom.js';
import { type DayBar, type ResponseTimePoint, responseTimeChart, uptimeBars } from './monitor-charts.js';
import { showError } from './playground.js';

/** Uptime over one window (24h, 7d, 30d, 90d), shortest first. */
export interface UptimeFigure {
  window: string;
  percent: number | null;
  checks: number;
  failures: number;
}

export interface MonitorFigures {
  id: string;
  name: string;
  kind: string;
  status: string;
  lastRunAt: string | null;
  uptime: UptimeFigure[];
  days: DayBar[];
  responseTimes: ResponseTimePoint[];
}

export interface StatusIncident {
  id: string;
  state: string;
  openedAt: string;
  closedAt?: string;
  durationSeconds: number;
  reason: string;
  monitorName: string;
}

interface StatusPage {
  slug: string;
  title: string;
  overall: 'operational' | 'partial-outage' | 'major-outage' | 'unknown';
  generatedAt: string;
  monitors: MonitorFigures[];
  incidents: StatusIncident[];
}

const OVERALL: Record<StatusPage['overall'], string> = {
  operational: 'All systems operational',
  'partial-outage': 'Partial outage',
  'major-outage': 'Major outage',
  unknown: 'No checks yet',
};

/** "1 h 5 min" from seconds. */
export function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (h) return m ? `${h} h ${m} min` : `${h} h`;
  return m ? `${m} min` : `${seconds} s`;
}

const percent = (figure: UptimeFigure) => (figure.percent === null ? '–' : `${figure.percent}%`);

/** The uptime windows as a list of terms and figures. */
export function uptimeList(uptime: UptimeFigure[]): HTMLElement {
  return h(
    'dl',
    { class: 'uptime-windows' },
    uptime.map((figure) => h('div', {}, h('dt', {}, figure.window), h('dd', {}, percent(figure)))),
  );
}

/** One monitor's figures: status, windows, bars and chart. */
export function monitorFigures(monitor: MonitorFigures, headingLevel: 'h2' | 'h3'): HTMLElement {
  return h(
    'section',
    { class: 'monitor-figures', 'aria-label': monitor.name },
    h(headingLevel, {}, monitor.name, ' ', h('span', { class: `state state-${monitor.status}` }, monitor.status)),
    uptimeList(monitor.uptime),
    h('p', { class: 'chart-caption' }, 'Uptime, last 90 days'),
    uptimeBars(monitor.days, `Uptime of ${monitor.name}`),
    monitor.kind === 'down-check'
      ? [
          h('p', { class: 'chart-caption' }, 'Response time, last 24 hours'),
          responseTimeChart(monitor.responseTimes, `Response time of ${monitor.name}`),
        ]
      : null,
  );
}

export function incidentList(incidents: StatusIncident[], withMonitor: boolean): HTMLElement {
  if (!incidents.length) return h('p', {}, 'No incidents in the last 90 days.');
  return h(
    'ul',
    { class: 'incidents' },
    incidents.map((incident) =>
      h(
        'li',
        {},
        h('strong', {}, incident.state === 'open' ? 'Ongoing' : 'Resolved'),
        withMonitor ? ` ${incident.monitorName}: ` : ': ',
        incident.reason,
        ' · ',
        h('time', { datetime: incident.openedAt }, new Date(incident.openedAt).toLocaleString()),
        incident.state === 'open' ? '' : ` · lasted ${duration(incident.durationSeconds)}`,
      ),
    ),
  );
}

export async function statusPage(main: HTMLElement, slug: string): Promise<void> {
  let page: StatusPage;
  try {
    page = await call<StatusPage>('GET', `/status/${encodeURIComponent(slug)}`);
  } catch (err) {
    show(main, h('h1', {}, 'Status page'));
    const box = h('div');
    main.append(box);
    showError(box, err);
    return;
  }
  show(
    main,
    h('h1', {}, page.title),
    h('p', { class: `overall overall-${page.overall}`, role: 'status' }, OVERALL[page.overall]),
    page.monitors.map((monitor) => monitorFigures(monitor, 'h2')),
    h('h2', {}, 'Incidents'),
    incidentList(page.incidents, true),
    h(
      'p',
      { class: 'muted' },
      'Updated ',
      h('time', { datetime: page.generatedAt }, new Date(page.generatedAt).toLocaleString()),
    ),
  );
}
