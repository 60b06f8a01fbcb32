/** Status pages and badges (decision 0438): what an owner sends, and how a page and a monitor's figures read. */
import * as status from '@webutil/proto/webutil/monitor/v1/status.fields';
import { z } from 'zod';
import { count, required, timestamp } from '../../rest/common.js';
import { restObject } from '../../rest/from-proto.js';

/**
 * The service's rules (services/monitor/src/status-page.ts STATUS_SLUG, status-server.ts bounds), said once
 * more for a 400 before the call.
 */
const SLUG = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;
const SLUG_RULE = 'slug must be 3 to 40 lower-case letters, digits or inner hyphens';

const slug = z.string({ error: SLUG_RULE }).regex(SLUG, SLUG_RULE).meta({
  description: 'The page’s address: /status/<slug>. 3 to 40 lower-case letters, digits or inner hyphens.',
  example: 'acme',
});

export const StatusPageInput = z.object({
  slug,
  title: z
    .string({ error: 'title must be a string' })
    .trim()
    .min(1, 'title must not be empty')
    .max(100, 'title must be at most 100 characters')
    .meta({ description: 'The page’s heading.', example: 'Acme status' }),
  monitorIds: z
    .array(z.string({ error: 'monitorIds must be monitor ids' }).min(1).max(100), {
      error: 'monitorIds must be a list',
    })
    .max(50, 'a status page shows at most 50 monitors')
    .meta({ description: 'Your monitors to show, in order; their badges are public while the page is enabled.' }),
  enabled: z.boolean({ error: 'enabled must be true or false' }).meta({
    description: 'A disabled page, and its monitors’ badges, answer 404.',
  }),
});

export const SlugInput = z.object({ slug: required('slug') });

export const BADGE_FIGURES = ['uptime', 'ssl', 'broken-links'] as const;

export const BadgeInput = z.object({
  monitorId: required('monitorId').meta({ description: 'A monitor on an enabled status page.' }),
  figure: z.enum(BADGE_FIGURES, { error: `figure must be one of ${BADGE_FIGURES.join(', ')}` }).meta({
    description:
      'uptime (any monitor), ssl (days left: ssl-scan monitors), broken-links (broken-links-crawl monitors).',
  }),
  window: z
    .enum(['24h', '7d', '30d', '90d'], { error: 'window must be one of 24h, 7d, 30d, 90d' })
    .optional()
    .meta({ default: '30d', description: 'The uptime badge’s window.' }),
  style: z
    .enum(['flat', 'flat-square', 'plastic', 'for-the-badge'], {
      error: 'style must be one of flat, flat-square, plastic, for-the-badge',
    })
    .optional()
    .meta({ default: 'flat', description: 'The shields.io style.' }),
});

const percent = {
  nullable: true as const,
  description: 'Percent of checks up, floored to two decimals; null without checks.',
};

const MonitorFigures = restObject(status.MonitorFigures, {
  id: 'MonitorFigures',
  fields: {
    lastRunAt: { nullable: true, value: timestamp },
    uptime: {
      value: restObject(status.UptimeFigure, {
        id: 'UptimeFigure',
        fields: {
          window: { value: z.enum(['24h', '7d', '30d', '90d']) },
          percent,
          checks: { value: count },
          failures: { value: count },
        },
      }),
      description: '24h, 7d, 30d and 90d.',
    },
    days: {
      value: restObject(status.DayBar, {
        id: 'UptimeDay',
        fields: { percent, checks: { value: count }, failures: { value: count } },
      }),
      description: 'The last 90 UTC days, oldest first.',
    },
    responseTimes: {
      value: restObject(status.ResponseTimePoint, {
        id: 'ResponseTimePoint',
        fields: { at: { value: timestamp }, meanMs: { nullable: true }, maxMs: { nullable: true } },
      }),
      description: 'The last 24 hours in half-hour buckets, oldest first.',
    },
  },
});

export const MonitorSummary = restObject(status.GetMonitorSummaryResponse, {
  id: 'MonitorSummary',
  fields: { monitor: { spread: MonitorFigures } },
});

export const StatusPageSettings = restObject(status.StatusPageSettings, {
  id: 'StatusPageSettings',
  fields: { updatedAt: { value: timestamp } },
});

export const StatusPage = restObject(status.GetStatusPageResponse, {
  id: 'StatusPage',
  fields: {
    overall: { value: z.enum(['operational', 'partial-outage', 'major-outage', 'unknown']) },
    generatedAt: { value: timestamp },
    monitors: { value: MonitorFigures },
    incidents: {
      value: restObject(status.StatusIncident, {
        id: 'StatusIncident',
        fields: {
          state: { value: z.enum(['open', 'closed']) },
          openedAt: { value: timestamp },
          closedAt: { nullable: true, value: timestamp },
          durationSeconds: { value: count },
        },
      }),
      description: 'The newest 20 of the last 90 days, newest first.',
    },
  },
});
