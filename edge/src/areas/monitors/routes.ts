/**
 * Monitors (issue 40, docs/decisions/0431-monitor-scheduling.md, 0432-monitors-api.md): an operation
 * run on a schedule for the account. Managing them is free; each run spends its operation's credits.
 * The account's owner only (a session or an API key without limits); another account's id is a 404.
 */

import { z } from 'zod';
import { billingCall } from '../../billing-client.js';
import type { Clients } from '../../clients.js';
import { HttpError, noStore } from '../../envelope.js';
import type { CallOptions } from '../../grpc-clients.js';
import { required } from '../../rest/common.js';
import { download, type RouteSpec, route } from '../../route-spec.js';
import { checkWebhookTarget } from '../webhooks/targets.js';
import { readKindInput } from './kinds.js';
import { MONITOR_IMAGE_PATH, ownerOf, presentMonitorList, presentMonitorReply, presentRunList } from './presenters.js';
import {
  type AlertsInput,
  DeletedMonitor,
  IncidentList,
  IncidentsInput,
  Monitor,
  MonitorChangeInput,
  MonitorIdInput,
  MonitorList,
  NewMonitorInput,
  RunList,
  RunsInput,
} from './schemas.js';

const MONITOR_TIMEOUT_MS = 10_000;
const OWNER_ERRORS = { account_required: 401, owner_required: 403, live_key_required: 403 };
const FOUND_ERRORS = { ...OWNER_ERRORS, monitor_not_found: 404 };
const INPUT_ERRORS = {
  invalid_input: 400,
  invalid_url: 400,
  invalid_interval: 400,
  invalid_kind: 400,
  invalid_webhook_url: 400,
  target_blocked: 400,
  webhook_secret_missing: 400,
};

/** Slack-compatible and webhook URLs obey the address policy of every outbound call (else 400 invalid_webhook_url). */
async function checkedAlerts(alerts: z.output<typeof AlertsInput> | undefined) {
  for (const url of [...(alerts?.slackUrls ?? []), ...(alerts?.webhookUrl ? [alerts.webhookUrl] : [])])
    await checkWebhookTarget(url);
  const webhook = alerts?.webhookUrl !== undefined;
  return alerts && { emails: [], slackUrls: [], expiryDays: [], maintenance: [], webhook, ...alerts };
}

/**
 * Alerts sent as signed webhooks need the account's signing secret (decision 0482): without one
 * every alert would be dropped, so the monitor is refused (400 webhook_secret_missing, as a job
 * start with a webhookUrl is) and nothing is created or changed.
 */
async function checkSigningSecret(
  c: Clients,
  alerts: { webhook?: boolean; webhookUrl?: string } | undefined,
  subject: string,
  options: CallOptions,
): Promise<void> {
  if (!alerts?.webhook || alerts.webhookUrl === undefined) return;
  const { secretCreatedAt } = await c.webhooks.listWebhookAttempts(
    { subject, limit: 1, sandbox: false },
    billingCall(options.requestId),
  );
  if (secretCreatedAt !== undefined) return;
  throw new HttpError(
    400,
    'webhook_secret_missing',
    'alerts.webhookUrl needs the account’s webhook signing secret: create it first with POST /v1/webhooks/secret ' +
      '(or on the account page), or leave the webhook channel out',
  );
}

export const monitorRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    path: '/monitors',
    operation: 'create-monitor',
    summary:
      'Creates a monitor: one of the operations (down-check, ssl-scan, meta-scan, broken-links-crawl, screenshot) ' +
      'with its own input, run every intervalSeconds (each run spends its credits), with alert channels and rules.',
    credits: 0,
    callers: 'owner',
    input: NewMonitorInput,
    output: Monitor,
    status: 201,
    errors: { ...OWNER_ERRORS, ...INPUT_ERRORS, monitor_limit_reached: 403 },
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: async (c, input, options, caller) => {
      const owner = ownerOf(caller);
      const kind = await readKindInput(input.kind, input.input, caller);
      const alerts = await checkedAlerts(input.alerts);
      await checkSigningSecret(c, alerts, owner.subject, options);
      return c.monitor.createMonitor(
        {
          owner,
          name: input.name,
          kind: input.kind,
          inputJson: kind.inputJson,
          requestJson: kind.requestJson,
          intervalSeconds: input.intervalSeconds,
          alerts,
        },
        options,
      );
    },
    present: presentMonitorReply,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/monitors',
    operation: 'list-monitors',
    summary: 'The account’s monitors, newest first.',
    credits: 0,
    callers: 'owner',
    input: MonitorIdInput.omit({ id: true }),
    output: MonitorList,
    errors: OWNER_ERRORS,
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.monitor.listMonitors({ owner: ownerOf(caller) }, options),
    present: presentMonitorList,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/monitors/:id',
    operation: 'get-monitor',
    summary: 'One of the account’s monitors.',
    credits: 0,
    callers: 'owner',
    input: MonitorIdInput,
    output: Monitor,
    errors: FOUND_ERRORS,
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: (c, input, options, caller) => c.monitor.getMonitor({ owner: ownerOf(caller), id: input.id }, options),
    present: presentMonitorReply,
    headers: noStore,
  }),
  route({
    method: 'PATCH',
    path: '/monitors/:id',
    operation: 'update-monitor',
    summary:
      'Changes a monitor’s name, input (validated as its kind’s route validates it), interval or alerts; ' +
      'fields left out stay as they are. A new interval applies from its next slot.',
    credits: 0,
    callers: 'owner',
    input: MonitorChangeInput,
    output: Monitor,
    errors: { ...FOUND_ERRORS, ...INPUT_ERRORS },
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: async (c, input, options, caller) => {
      const owner = ownerOf(caller);
      let kind: { inputJson?: string; requestJson?: string } = {};
      if (input.input !== undefined) {
        const current = await c.monitor.getMonitor({ owner, id: input.id }, options);
        kind = await readKindInput(current.monitor?.kind as never, input.input, caller);
      }
      const alerts = await checkedAlerts(input.alerts);
      await checkSigningSecret(c, alerts, owner.subject, options);
      return c.monitor.updateMonitor(
        {
          owner,
          id: input.id,
          name: input.name,
          intervalSeconds: input.intervalSeconds,
          alerts,
          ...kind,
        },
        options,
      );
    },
    present: presentMonitorReply,
    headers: noStore,
  }),
  route({
    method: 'DELETE',
    path: '/monitors/:id',
    operation: 'delete-monitor',
    summary: 'Deletes a monitor with its runs and incidents.',
    credits: 0,
    callers: 'owner',
    input: MonitorIdInput,
    output: DeletedMonitor,
    errors: FOUND_ERRORS,
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: (c, input, options, caller) => c.monitor.deleteMonitor({ owner: ownerOf(caller), id: input.id }, options),
  }),
  route({
    method: 'POST',
    path: '/monitors/:id/pause',
    operation: 'pause-monitor',
    summary: 'Stops a monitor’s runs until it is resumed (its history stays).',
    credits: 0,
    callers: 'owner',
    input: MonitorIdInput,
    output: Monitor,
    errors: FOUND_ERRORS,
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: (c, input, options, caller) => c.monitor.pauseMonitor({ owner: ownerOf(caller), id: input.id }, options),
    present: presentMonitorReply,
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/monitors/:id/resume',
    operation: 'resume-monitor',
    summary: 'Runs a paused monitor again from its next slot (the slots it was paused over are not run).',
    credits: 0,
    callers: 'owner',
    input: MonitorIdInput,
    output: Monitor,
    errors: FOUND_ERRORS,
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: (c, input, options, caller) => c.monitor.resumeMonitor({ owner: ownerOf(caller), id: input.id }, options),
    present: presentMonitorReply,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/monitors/:id/runs',
    operation: 'monitor-runs',
    summary: 'A monitor’s runs, newest first, within a time range, a page at a time (data.runs).',
    credits: 0,
    callers: 'owner',
    input: RunsInput,
    output: RunList,
    errors: { ...FOUND_ERRORS, invalid_page_token: 400 },
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.monitor.listRuns(
        {
          owner: ownerOf(caller),
          monitorId: input.id,
          from: input.from,
          to: input.to,
          limit: input.limit ?? 50,
          pageToken: input.pageToken,
        },
        options,
      ),
    present: presentRunList,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/monitors/:id/incidents',
    operation: 'monitor-incidents',
    summary: 'A monitor’s incidents (down-check: opened after failed runs in a row, closed after good ones).',
    credits: 0,
    callers: 'owner',
    input: IncidentsInput,
    output: IncidentList,
    errors: FOUND_ERRORS,
    timeoutMs: MONITOR_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.monitor.listIncidents({ owner: ownerOf(caller), monitorId: input.id, limit: input.limit ?? 50 }, options),
    headers: noStore,
  }),
];

/** A run's capture or diff image: free, no credential (the unguessable name is the capability, as a render's). */
export const monitorImageDownloads = [
  download({
    paths: [`${MONITOR_IMAGE_PATH}/:filename`],
    operation: 'monitor-image',
    summary:
      'A screenshot monitor’s capture or diff image by the name its run gives (changes.diffImage, result.image); ' +
      'kept while the run is in the history.',
    input: z.object({ filename: required('filename') }),
    nameParam: 'filename',
    disposition: 'inline',
    contentTypes: ['image/png', 'image/jpeg', 'image/webp'],
    errors: { file_not_found: 404 },
    timeoutMs: 60_000,
    call: (c, input, options) => c.monitor.readImage({ filename: input.filename }, options),
  }),
];
