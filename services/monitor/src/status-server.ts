/**
 * The MonitorStatusService RPCs: a monitor's figures for its owner, the owner's status page
 * settings, and for anyone an enabled status page and its monitors' badges (decision 0438). The
 * monitors, runs and incidents are read from the core's store through MonitorReads.
 */
import { status } from '@grpc/grpc-js';
import { bind, invalidArgument, type Logger, notFound, type ServiceBinding, ServiceError } from '@webutil/kit';
import type { MonitorOwner } from '@webutil/proto/webutil/monitor/v1/monitor';
import {
  type GetStatusPageResponse,
  type MonitorFigures,
  MonitorStatusServiceService,
  type StatusPageSettings,
} from '@webutil/proto/webutil/monitor/v1/status';
import { BADGE_STYLES, type BadgeFigure, type BadgeStyle, badgeSvg } from './badges.js';
import {
  monitorFiguresOf,
  STATUS_SLUG,
  type StatusIncidentInput,
  type StatusMonitorView,
  statusPageView,
} from './status-page.js';
import { SlugTakenError, type StatusPageRecord, type StatusPageStore } from './status-pages/store.js';
import { type DayCounts, UPTIME_WINDOWS, type UptimeRun, uptimeWindows } from './uptime.js';

/** What uptime is figured from: runs read one by one, and the rollup's counts of the other days. */
export interface UptimeHistory {
  runs: UptimeRun[];
  days: DayCounts[];
}

/** A monitor as the status views read it. */
export interface MonitorSummary {
  id: string;
  name: string;
  kind: string;
  status: string;
  lastRunAt?: string;
}

/** What the status views read of the core's store. */
export interface MonitorReads {
  /** One of the account's monitors (undefined: none of that id is the account's). */
  monitor(subject: string, id: string): Promise<MonitorSummary | undefined>;
  /** Its last 90 days up to `at`: runs, and whole days' counts for the days not among them. */
  history(monitorId: string, at: number): Promise<UptimeHistory>;
  /** Its newest incidents, newest first. */
  incidents(monitorId: string, limit: number): Promise<StatusIncidentInput[]>;
  /** The operation's answer of its newest run that has one (parsed JSON). */
  latestResult(monitorId: string): Promise<unknown>;
}

/** Monitors a status page shows at most, and its title's length. */
export const STATUS_PAGE_MONITORS = 50;
export const STATUS_TITLE_MAX = 100;
const INCIDENTS_READ = 50;

const figuresMessage = (view: StatusMonitorView): MonitorFigures => ({
  id: view.id,
  name: view.name,
  kind: view.kind,
  status: view.status,
  lastRunAt: view.lastRunAt ?? undefined,
  uptime: view.uptime.map((f) => ({ ...f, percent: f.percent ?? undefined })),
  days: view.days.map((d) => ({ ...d, percent: d.percent ?? undefined })),
  responseTimes: view.responseTimes.map((p) => ({
    at: p.at,
    meanMs: p.meanMs ?? undefined,
    maxMs: p.maxMs ?? undefined,
  })),
});

const settingsMessage = (page: StatusPageRecord): StatusPageSettings => ({
  slug: page.slug,
  title: page.title,
  monitorIds: page.monitorIds,
  enabled: page.enabled,
  updatedAt: new Date(page.updatedAt).toISOString(),
});

const noMonitor = () => notFound('MONITOR_NOT_FOUND', 'no such monitor');
const noPage = () => notFound('STATUS_PAGE_NOT_FOUND', 'no such status page');

export interface StatusDeps {
  reads: MonitorReads;
  pages: StatusPageStore;
  now?: () => number;
}

export function monitorStatusService({ reads, pages, now = Date.now }: StatusDeps, log: Logger): ServiceBinding {
  const owned = async (owner: MonitorOwner | undefined, id: string) => {
    const monitor = owner && !owner.sandbox ? await reads.monitor(owner.subject, id) : undefined;
    if (!monitor) throw noMonitor();
    return monitor;
  };
  const figures = async (monitor: MonitorSummary, at: number) =>
    monitorFiguresOf({ ...monitor, ...(await reads.history(monitor.id, at)) }, at);

  return bind(
    MonitorStatusServiceService,
    {
      getMonitorSummary: async ({ owner, id }) => {
        const monitor = await owned(owner, id);
        return { monitor: figuresMessage(await figures(monitor, now())) };
      },

      putStatusPage: async ({ owner, slug, title, monitorIds, enabled }) => {
        if (!owner || owner.sandbox) throw invalidArgument('INVALID_OWNER', 'a status page is a live account’s');
        if (!STATUS_SLUG.test(slug))
          throw invalidArgument('INVALID_SLUG', 'slug must be 3 to 40 lower-case letters, digits or inner hyphens');
        const name = title.trim();
        if (!name || name.length > STATUS_TITLE_MAX)
          throw invalidArgument('INVALID_TITLE', `title must be 1 to ${STATUS_TITLE_MAX} characters`);
        const ids = [...new Set(monitorIds)];
        if (ids.length > STATUS_PAGE_MONITORS)
          throw invalidArgument('TOO_MANY_MONITORS', `a status page shows at most ${STATUS_PAGE_MONITORS} monitors`);
        for (const id of ids) {
          await owned(owner, id).catch(() => {
            throw invalidArgument('UNKNOWN_MONITOR', `monitor ${id} is not one of yours`);
          });
        }
        try {
          const page = await pages.put({
            owner: owner.subject,
            slug,
            title: name,
            monitorIds: ids,
            enabled,
            updatedAt: now(),
          });
          return { page: settingsMessage(page) };
        } catch (err) {
          if (err instanceof SlugTakenError) throw new ServiceError(status.ALREADY_EXISTS, 'SLUG_TAKEN', err.message);
          throw err;
        }
      },

      getOwnStatusPage: async ({ owner }) => {
        const page = owner && !owner.sandbox ? await pages.byOwner(owner.subject) : undefined;
        if (!page) throw noPage();
        return { page: settingsMessage(page) };
      },

      getStatusPage: async ({ slug }): Promise<GetStatusPageResponse> => {
        const page = STATUS_SLUG.test(slug) ? await pages.bySlug(slug) : undefined;
        if (!page?.enabled) throw noPage();
        const at = now();
        const monitors = [];
        for (const id of page.monitorIds) {
          // A monitor deleted since the page was saved is left out.
          const monitor = await reads.monitor(page.owner, id);
          if (!monitor) continue;
          const [history, incidents] = await Promise.all([reads.history(id, at), reads.incidents(id, INCIDENTS_READ)]);
          monitors.push({ ...monitor, ...history, incidents });
        }
        const view = statusPageView(page, monitors, at);
        return {
          slug: view.slug,
          title: view.title,
          overall: view.overall,
          generatedAt: view.generatedAt,
          monitors: view.monitors.map(figuresMessage),
          incidents: view.incidents,
        };
      },

      getBadge: async ({ monitorId, figure, window, style }) => {
        const badgeStyle = (style || 'flat') as BadgeStyle;
        if (!BADGE_STYLES.includes(badgeStyle))
          throw invalidArgument('INVALID_STYLE', `style must be one of ${BADGE_STYLES.join(', ')}`);
        const page = await pages.showing(monitorId);
        const monitor = page ? await reads.monitor(page.owner, monitorId) : undefined;
        if (!page || !monitor) throw noMonitor();
        return { svg: badgeSvg(await badgeFigure(reads, monitor, figure, window || '30d', now()), badgeStyle) };
      },
    },
    log,
  );
}

/** The figure a badge shows; a figure the monitor's kind has not is INVALID_ARGUMENT. */
async function badgeFigure(reads: MonitorReads, monitor: MonitorSummary, figure: string, window: string, at: number) {
  const wrongKind = (kind: string) =>
    invalidArgument('BADGE_NOT_FOR_KIND', `a ${figure} badge is for ${kind} monitors; this one is ${monitor.kind}`);
  switch (figure) {
    case 'uptime': {
      if (!(window in UPTIME_WINDOWS))
        throw invalidArgument('INVALID_WINDOW', `window must be one of ${Object.keys(UPTIME_WINDOWS).join(', ')}`);
      const { runs, days } = await reads.history(monitor.id, at);
      const shown = uptimeWindows(runs, at, days).find((f) => f.window === window);
      return { kind: 'uptime', window, percent: shown?.percent ?? null } satisfies BadgeFigure;
    }
    case 'ssl': {
      if (monitor.kind !== 'ssl-scan') throw wrongKind('ssl-scan');
      const result = (await reads.latestResult(monitor.id)) as { daysUntilExpiry?: number } | undefined;
      return { kind: 'ssl', daysUntilExpiry: result?.daysUntilExpiry ?? null } satisfies BadgeFigure;
    }
    case 'broken-links': {
      if (monitor.kind !== 'broken-links-crawl') throw wrongKind('broken-links-crawl');
      const result = (await reads.latestResult(monitor.id)) as { summary?: { broken?: number } } | undefined;
      return { kind: 'broken-links', broken: result?.summary?.broken ?? null } satisfies BadgeFigure;
    }
    default:
      throw invalidArgument('INVALID_FIGURE', 'figure must be one of uptime, ssl, broken-links');
  }
}
