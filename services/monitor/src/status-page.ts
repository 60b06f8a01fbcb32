/**
 * The public status page of an account (`/status/<slug>`, opt-in): for each monitor it chose, the
 * current status, uptime over 24 h / 7 d / 30 d / 90 d, one bar per day for 90 days, response
 * times over the last 24 hours, and the incidents of the last 90 days. Only names and figures:
 * no target URL, no account, nothing an anonymous reader could not see from outside.
 */
import {
  type DayBar,
  type DayCounts,
  dailyBars,
  type ResponseTimePoint,
  responseTimeSeries,
  type UptimeRun,
  uptimeWindows,
  type WindowFigure,
} from './uptime.js';

/** A status page's address: lower-case letters, digits and inner hyphens, 3 to 40 characters. */
export const STATUS_SLUG = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;
/** Incidents shown at most, newest first. */
export const STATUS_INCIDENTS = 20;
/** Points of the response-time chart (half-hour buckets over 24 hours). */
export const RESPONSE_TIME_POINTS = 48;

const DAY_MS = 86_400_000;

export interface StatusIncidentInput {
  id: string;
  state: string;
  openedAt: string;
  closedAt?: string;
  durationSeconds: number;
  reason: string;
}

export interface StatusMonitorInput {
  id: string;
  name: string;
  kind: string;
  /** up, down, unknown (down-check); ok, failed (the other kinds). */
  status: string;
  lastRunAt?: string;
  /** Its runs, and whole days' counts for the days not among them (the store's rollup). */
  runs: UptimeRun[];
  days?: DayCounts[];
  incidents: StatusIncidentInput[];
}

export interface StatusMonitorView {
  id: string;
  name: string;
  kind: string;
  status: string;
  lastRunAt: string | null;
  uptime: WindowFigure[];
  days: DayBar[];
  responseTimes: ResponseTimePoint[];
}

export interface StatusPageView {
  slug: string;
  title: string;
  /** operational: nothing down; partial-outage: some monitors down; major-outage: all; unknown: no runs yet. */
  overall: 'operational' | 'partial-outage' | 'major-outage' | 'unknown';
  generatedAt: string;
  monitors: StatusMonitorView[];
  incidents: (StatusIncidentInput & { monitorId: string; monitorName: string })[];
}

const isDown = (status: string) => status === 'down' || status === 'failed';

function overallOf(monitors: readonly StatusMonitorInput[]): StatusPageView['overall'] {
  const known = monitors.filter((monitor) => monitor.status !== 'unknown');
  if (!known.length) return 'unknown';
  const down = known.filter((monitor) => isDown(monitor.status)).length;
  if (!down) return 'operational';
  return down === known.length ? 'major-outage' : 'partial-outage';
}

/** A monitor's figures at `now` from its runs and days: what its owner's page and the status page show. */
export function monitorFiguresOf(monitor: Omit<StatusMonitorInput, 'incidents'>, now: number): StatusMonitorView {
  return {
    id: monitor.id,
    name: monitor.name,
    kind: monitor.kind,
    status: monitor.status,
    lastRunAt: monitor.lastRunAt ?? null,
    uptime: uptimeWindows(monitor.runs, now, monitor.days),
    days: dailyBars(monitor.runs, now, 90, monitor.days),
    responseTimes: responseTimeSeries(monitor.runs, now - DAY_MS, now, RESPONSE_TIME_POINTS),
  };
}

/** The page's figures at `now` from the chosen monitors' runs and incidents. */
export function statusPageView(
  page: { slug: string; title: string },
  monitors: readonly StatusMonitorInput[],
  now: number,
): StatusPageView {
  const incidents = monitors
    .flatMap((monitor) =>
      monitor.incidents
        .filter((incident) => incident.state === 'open' || Date.parse(incident.closedAt ?? '') > now - 90 * DAY_MS)
        .map((incident) => ({ ...incident, monitorId: monitor.id, monitorName: monitor.name })),
    )
    .sort((a, b) => Date.parse(b.openedAt) - Date.parse(a.openedAt))
    .slice(0, STATUS_INCIDENTS);
  return {
    slug: page.slug,
    title: page.title,
    overall: overallOf(monitors),
    generatedAt: new Date(now).toISOString(),
    monitors: monitors.map((monitor) => monitorFiguresOf(monitor, now)),
    incidents,
  };
}
