/** Monitors: what a caller sends to make and change one, and how monitors, runs and incidents read. */
import * as monitor from '@webutil/proto/webutil/monitor/v1/monitor.fields';
import { z } from 'zod';
import { count, queryInteger, required, timestamp } from '../../rest/common.js';
import { restObject } from '../../rest/from-proto.js';
import { webhookUrlField } from '../webhooks/targets.js';
import { MONITOR_KINDS } from './kinds.js';

const name = z
  .string({ error: 'name must be a string' })
  .trim()
  .min(1, 'name must not be empty')
  .max(100, 'name must be at most 100 characters')
  .meta({ description: 'What the monitor is called in lists, alerts and the status page.', example: 'Home page' });

const kind = z.enum(MONITOR_KINDS, { error: `kind must be one of ${MONITOR_KINDS.join(', ')}` }).meta({
  description: 'The operation each run calls.',
});

const input = z.record(z.string(), z.unknown(), { error: 'input must be an object' }).meta({
  description:
    'The operation’s own input: the same fields and rules as its route (down-check: url, expectStatus, keyword, ' +
    'method; ssl-scan: domain, port, fast; meta-scan: url, userAgent; broken-links-crawl and screenshot: their ' +
    'bodies, without webhookUrl).',
  example: { url: 'https://example.com/' },
});

const intervalSeconds = z
  .number({ error: 'intervalSeconds must be a whole number of seconds' })
  .int('intervalSeconds must be a whole number of seconds')
  .meta({
    description:
      'Seconds between runs: at least 60 for down-check, 3,600 for ssl-scan, meta-scan and screenshot, 86,400 for ' +
      'broken-links-crawl, and the plan’s shortest (Free: 300); at most 30 days.',
    example: 300,
  });

const threshold = (field: string, description: string) =>
  z
    .number({ error: `${field} must be a whole number from 1 to 10` })
    .int(`${field} must be a whole number from 1 to 10`)
    .min(1, `${field} must be a whole number from 1 to 10`)
    .max(10, `${field} must be a whole number from 1 to 10`)
    .optional()
    .meta({ description });

const WEEK_MS = 7 * 86_400_000;

const MaintenanceWindowInput = z
  .object({
    startsAt: z.iso.datetime({ error: 'maintenance startsAt must be an ISO 8601 time' }),
    endsAt: z.iso.datetime({ error: 'maintenance endsAt must be an ISO 8601 time' }),
    repeat: z
      .enum(['weekly'], { error: 'maintenance repeat must be weekly (absent: the window is once)' })
      .optional()
      .meta({ description: 'weekly: the same span again every 7 days from startsAt; absent: once.' }),
  })
  .strict()
  .refine((w) => Date.parse(w.endsAt) > Date.parse(w.startsAt), {
    error: 'a maintenance window must end after it starts',
  })
  .refine((w) => w.repeat !== 'weekly' || Date.parse(w.endsAt) - Date.parse(w.startsAt) < WEEK_MS, {
    error: 'a weekly maintenance window must be shorter than a week',
  })
  .meta({ description: 'A time in which alerts are silenced (runs and incidents are still recorded).' });

const slackUrl = webhookUrlField.unwrap().meta({ description: 'A Slack-compatible incoming-webhook URL.' });

export const AlertsInput = z
  .object({
    webhook: z
      .boolean({ error: 'alerts.webhook must be true or false' })
      .optional()
      .meta({
        description:
          'Deliver alerts as signed webhooks to webhookUrl (signed as job webhooks are, with the secret of ' +
          'POST /v1/webhooks/secret, which must exist first: else 400 webhook_secret_missing; listed at ' +
          'GET /v1/webhooks/deliveries). Default: true when webhookUrl is given.',
      }),
    webhookUrl: webhookUrlField.unwrap().optional().meta({
      description:
        'Where signed webhook alerts are POSTed: an http or https URL on an address the outbound policy allows.',
      example: 'https://example.com/hooks/webutil',
    }),
    emails: z
      .array(z.email({ error: 'alerts.emails must be email addresses' }))
      .max(5, 'alerts.emails takes at most 5 addresses')
      .optional(),
    slackUrls: z.array(slackUrl).max(5, 'alerts.slackUrls takes at most 5 URLs').optional(),
    failureThreshold: threshold('failureThreshold', 'down-check: failed runs in a row that open an incident (3).'),
    successThreshold: threshold('successThreshold', 'down-check: good runs in a row that close it (2).'),
    expiryDays: z
      .array(z.number().int().min(1).max(365), { error: 'alerts.expiryDays must be whole numbers of days' })
      .max(10)
      .optional()
      .meta({ description: 'ssl-scan: days before the certificate expires that alert (30, 14, 7, 1).' }),
    changeThresholdPercent: z
      .number({ error: 'alerts.changeThresholdPercent must be a number from 0 to 100' })
      .min(0)
      .max(100)
      .optional()
      .meta({ description: 'screenshot: share of pixels changed that alerts (1).' }),
    maintenance: z
      .array(MaintenanceWindowInput)
      .max(10, 'alerts.maintenance takes at most 10 windows')
      .optional()
      .meta({
        description:
          'Windows in which alerts are silenced; an incident opened in one is marked silenced. Each is once or weekly.',
      }),
  })
  .strict()
  .refine((alerts) => alerts.webhook !== true || alerts.webhookUrl !== undefined, {
    error: 'alerts.webhook needs alerts.webhookUrl: where the signed alerts go',
  })
  .meta({ description: 'Where alerts go and what raises them; absent: no channel, default thresholds.' });

export const NewMonitorInput = z.object({ name, kind, input, intervalSeconds, alerts: AlertsInput.optional() });

const monitorId = required('id').meta({ description: 'The monitor’s id (data.id of its creation).' });
export const MonitorIdInput = z.object({ id: monitorId });

export const MonitorChangeInput = z.object({
  id: monitorId,
  name: name.optional(),
  input: input.optional(),
  intervalSeconds: intervalSeconds.optional(),
  alerts: AlertsInput.optional(),
});

const instant = (field: string, description: string) =>
  z.iso
    .datetime({ error: `${field} must be an ISO 8601 time` })
    .optional()
    .meta({ description });

export const RunsInput = z.object({
  id: monitorId,
  from: instant('from', 'Runs of slots at or after this time.'),
  to: instant('to', 'Runs of slots at or before this time.'),
  limit: queryInteger('limit', 1, 500, {
    description: 'Runs per page, newest first: 1 to 500. Default 50.',
    example: 100,
  }),
  pageToken: z.string().max(40).optional().meta({ description: 'The nextPageToken of the previous page.' }),
});

export const IncidentsInput = z.object({
  id: monitorId,
  limit: queryInteger('limit', 1, 500, { description: 'Incidents, newest first: 1 to 500. Default 50.', example: 20 }),
});

const jsonObject = z.record(z.string(), z.unknown());

const Alerts = restObject(monitor.MonitorAlerts, {
  id: 'MonitorAlerts',
  fields: {
    failureThreshold: { nullable: true },
    successThreshold: { nullable: true },
    changeThresholdPercent: { nullable: true },
    maintenance: {
      value: restObject(monitor.MaintenanceWindow, {
        id: 'MaintenanceWindow',
        fields: { startsAt: { value: timestamp }, endsAt: { value: timestamp } },
      }),
    },
  },
});

export const Monitor = restObject(monitor.Monitor, {
  id: 'Monitor',
  fields: {
    kind: { value: kind },
    intervalSeconds: { value: count },
    alerts: { value: Alerts },
    state: { value: z.enum(['active', 'paused']) },
    pausedReason: { nullable: true, description: 'by request, or out of credits.' },
    status: { description: 'down-check: up, down or unknown; other kinds: ok, failed or unknown.' },
    createdAt: { value: timestamp },
    updatedAt: { value: timestamp },
    lastRunAt: { nullable: true, value: timestamp },
    nextRunAt: { nullable: true, value: timestamp, description: 'The next slot; null while paused.' },
  },
  omit: { inputJson: 'presented as input' },
  add: { input: jsonObject.meta({ description: 'The operation’s input, as given.' }) },
});

export const MonitorList = restObject(monitor.ListMonitorsResponse, {
  id: 'MonitorList',
  fields: { monitors: { value: Monitor, description: 'Newest first.' } },
});

export const DeletedMonitor = restObject(monitor.DeleteMonitorResponse, { id: 'DeletedMonitor' });

const Run = restObject(monitor.Run, {
  id: 'MonitorRun',
  fields: {
    slot: { value: timestamp, description: 'The slot the run is for: each slot runs once across replicas.' },
    startedAt: { value: timestamp },
    finishedAt: { nullable: true, value: timestamp },
    late: { description: 'A catch-up run after an outage (one, however many slots were missed) or past its grace.' },
    outcome: { value: z.enum(['running', 'ok', 'failed', 'skipped', 'interrupted']) },
    verdict: { nullable: true, description: 'down-check: up, down or degraded.' },
    responseTimeMs: { nullable: true },
    creditsSpent: { value: count },
  },
  omit: { changesJson: 'presented as changes', resultJson: 'presented as result' },
  add: {
    changes: jsonObject.nullable().meta({ description: 'What changed since the previous run, per kind.' }),
    result: jsonObject.nullable().meta({ description: 'The operation’s answer (its route’s data).' }),
    diffImageUrl: z
      .string()
      .nullable()
      .meta({ description: 'screenshot: the diff image against the previous capture (a path on this origin).' }),
  },
});

export const RunList = restObject(monitor.ListRunsResponse, {
  id: 'MonitorRunList',
  fields: {
    runs: { value: Run, description: 'Newest first.' },
    nextPageToken: { nullable: true, description: 'Pass as pageToken for the next page; null on the last.' },
  },
});

export const IncidentList = restObject(monitor.ListIncidentsResponse, {
  id: 'MonitorIncidentList',
  fields: {
    incidents: {
      value: restObject(monitor.Incident, {
        id: 'MonitorIncident',
        fields: {
          state: { value: z.enum(['open', 'closed']) },
          openedAt: { value: timestamp },
          closedAt: { nullable: true, value: timestamp },
          durationSeconds: { value: count, description: 'Open so far, while open.' },
          silenced: { description: 'Opened in a maintenance window: no alert was sent.' },
        },
      }),
      description: 'Newest first.',
    },
  },
});
