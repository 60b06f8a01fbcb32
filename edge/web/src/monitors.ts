/**
 * The monitors page (/monitors): each of the account's monitors with its uptime bars and response
 * times, latest changes and incidents, and the forms to create, edit, pause, resume and delete one.
 * The routes are the REST API's own (/v1/monitors...), called with the session.
 */
import { type Account, call } from './api.js';
import { h, show } from './dom.js';
import { showError } from './playground.js';
import { incidentList, type MonitorFigures, monitorFigures, type StatusIncident } from './status-page.js';

interface Monitor {
  id: string;
  name: string;
  kind: string;
  input: Record<string, unknown>;
  intervalSeconds: number;
  alerts: {
    webhook?: boolean;
    webhookUrl?: string | null;
    emails?: string[];
    slackUrls?: string[];
    expiryDays?: number[];
    changeThresholdPercent?: number;
    maintenance?: MaintenanceWindow[];
  };
  state: string;
  pausedReason?: string;
  status: string;
  lastRunAt?: string;
  nextRunAt?: string;
}

interface MaintenanceWindow {
  startsAt: string;
  endsAt: string;
  repeat?: string | null;
}

interface Run {
  id: string;
  startedAt: string;
  outcome: string;
  late: boolean;
  reason: string;
  changes?: { kind?: string; alert?: boolean; lines?: string[] } | null;
  diffImageUrl?: string;
}

/** The kinds, what their target is called, and the shortest interval each allows (decision 0431). */
export const KINDS: { id: string; label: string; target: 'url' | 'domain'; minSeconds: number }[] = [
  { id: 'down-check', label: 'Uptime (down-check)', target: 'url', minSeconds: 60 },
  { id: 'ssl-scan', label: 'SSL certificate', target: 'domain', minSeconds: 3600 },
  { id: 'meta-scan', label: 'Meta tags', target: 'url', minSeconds: 3600 },
  { id: 'broken-links-crawl', label: 'Broken links (site crawl)', target: 'url', minSeconds: 86_400 },
  { id: 'screenshot', label: 'Visual change (screenshot)', target: 'url', minSeconds: 3600 },
];

const INTERVALS: [number, string][] = [
  [60, 'every minute'],
  [300, 'every 5 minutes'],
  [900, 'every 15 minutes'],
  [3600, 'every hour'],
  [21_600, 'every 6 hours'],
  [86_400, 'every day'],
  [604_800, 'every week'],
];

const intervalWords = (seconds: number) =>
  INTERVALS.find(([s]) => s === seconds)?.[1] ?? `every ${seconds.toLocaleString('en')} s`;
const when = (iso?: string) => (iso ? new Date(iso).toLocaleString() : '–');
const targetOf = (monitor: Monitor) => String(monitor.input.url ?? monitor.input.domain ?? '');
const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);

/** An ISO time as a datetime-local input shows it (the browser's time zone), and back. */
const localInput = (iso?: string) => {
  if (!iso) return undefined;
  const at = new Date(iso);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string) => new Date(value).toISOString();

/** The form edits the first maintenance window; the others (set through the API) are kept as they are. */
function maintenanceOf(values: Record<string, string>, monitor: Monitor | undefined): MaintenanceWindow[] {
  const kept = monitor?.alerts.maintenance?.slice(1) ?? [];
  if (!values.maintenanceStartsAt || !values.maintenanceEndsAt) return kept;
  const first: MaintenanceWindow = {
    startsAt: fromLocalInput(values.maintenanceStartsAt),
    endsAt: fromLocalInput(values.maintenanceEndsAt),
  };
  if (values.maintenanceWeekly === 'on') first.repeat = 'weekly';
  return [first, ...kept];
}

function field(id: string, label: string, control: HTMLElement, hint?: string): HTMLElement {
  control.id = id;
  if (hint) control.setAttribute('aria-describedby', `${id}-hint`);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    hint ? h('small', { id: `${id}-hint` }, hint) : null,
  );
}

/** The create form, or the edit form of `monitor`; `done` runs after a save. */
function monitorForm(monitor: Monitor | undefined, done: () => Promise<void>): HTMLFormElement {
  const prefix = monitor ? `edit-${monitor.id}` : 'new';
  const kind = h(
    'select',
    { name: 'kind', disabled: Boolean(monitor) },
    KINDS.map((k) => h('option', { value: k.id, selected: monitor?.kind === k.id }, k.label)),
  );
  const interval = h(
    'select',
    { name: 'intervalSeconds' },
    INTERVALS.map(([seconds, words]) =>
      h('option', { value: seconds, selected: monitor?.intervalSeconds === seconds }, words),
    ),
  );
  const target = h('input', {
    name: 'target',
    required: true,
    value: monitor ? targetOf(monitor) : undefined,
    disabled: Boolean(monitor),
  });
  const message = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'monitor-form', 'aria-label': monitor ? `Edit ${monitor.name}` : 'New monitor' },
    field(`${prefix}-name`, 'Name', h('input', { name: 'name', required: true, maxlength: 100, value: monitor?.name })),
    field(`${prefix}-kind`, 'What to watch', kind),
    field(`${prefix}-target`, 'URL or domain', target, 'A page URL; for an SSL certificate, the host name only.'),
    field(`${prefix}-interval`, 'How often', interval, 'Uptime every minute at most; scans hourly; crawls daily.'),
    field(
      `${prefix}-emails`,
      'Alert emails',
      h('input', { name: 'emails', type: 'text', autocomplete: 'email', value: monitor?.alerts.emails?.join(', ') }),
      'Comma-separated; leave empty for none.',
    ),
    field(
      `${prefix}-slack`,
      'Slack incoming-webhook URL',
      h('input', { name: 'slack', type: 'url', value: monitor?.alerts.slackUrls?.[0] }),
    ),
    field(
      `${prefix}-expiry`,
      'SSL: alert days before expiry',
      h('input', { name: 'expiryDays', value: (monitor?.alerts.expiryDays ?? [30, 14, 7, 1]).join(', ') }),
    ),
    field(
      `${prefix}-threshold`,
      'Screenshot: alert over % of pixels changed',
      h('input', {
        name: 'changeThresholdPercent',
        type: 'number',
        min: 0,
        max: 100,
        step: 0.1,
        value: monitor?.alerts.changeThresholdPercent ?? 1,
      }),
    ),
    field(
      `${prefix}-maintenance-start`,
      'Maintenance: silence alerts from',
      h('input', {
        name: 'maintenanceStartsAt',
        type: 'datetime-local',
        value: localInput(monitor?.alerts.maintenance?.[0]?.startsAt),
      }),
      'Your local time; leave both empty for no window.',
    ),
    field(
      `${prefix}-maintenance-end`,
      'Maintenance: until',
      h('input', {
        name: 'maintenanceEndsAt',
        type: 'datetime-local',
        value: localInput(monitor?.alerts.maintenance?.[0]?.endsAt),
      }),
    ),
    h(
      'div',
      { class: 'field check' },
      h('input', {
        id: `${prefix}-maintenance-weekly`,
        name: 'maintenanceWeekly',
        type: 'checkbox',
        checked: monitor?.alerts.maintenance?.[0]?.repeat === 'weekly',
      }),
      h('label', { for: `${prefix}-maintenance-weekly` }, 'Repeat the maintenance window every week'),
    ),
    h(
      'div',
      { class: 'field check' },
      h('input', {
        id: `${prefix}-webhook`,
        name: 'webhook',
        type: 'checkbox',
        checked: monitor?.alerts.webhook ?? false,
      }),
      h('label', { for: `${prefix}-webhook` }, 'Send alerts to my signed webhooks'),
    ),
    field(
      `${prefix}-webhook-url`,
      'Signed webhook URL',
      h('input', { name: 'webhookUrl', type: 'url', value: monitor?.alerts.webhookUrl ?? undefined }),
      'Signed with your webhook secret (account page), as job webhooks are.',
    ),
    h('button', { type: 'submit' }, monitor ? 'Save changes' : 'Create monitor'),
    message,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form)) as Record<string, string>;
    const chosen = KINDS.find((k) => k.id === (monitor?.kind ?? values.kind));
    if (!chosen) return;
    const alerts = {
      webhook: values.webhook === 'on',
      ...(values.webhookUrl ? { webhookUrl: values.webhookUrl } : {}),
      emails: list(values.emails ?? ''),
      slackUrls: list(values.slack ?? ''),
      expiryDays: list(values.expiryDays ?? '').map(Number),
      changeThresholdPercent: Number(values.changeThresholdPercent ?? 1),
      maintenance: maintenanceOf(values, monitor),
    };
    const body = {
      name: values.name,
      intervalSeconds: Number(values.intervalSeconds),
      alerts,
      ...(monitor ? {} : { kind: chosen.id, input: { [chosen.target]: values.target } }),
    };
    try {
      if (monitor) await call('PATCH', `/monitors/${encodeURIComponent(monitor.id)}`, body);
      else await call('POST', '/monitors', body);
      await done();
    } catch (err) {
      showError(message, err);
    }
  });
  return form;
}

function changesList(runs: Run[]): HTMLElement {
  const changed = runs.filter((run) => run.changes?.lines?.length);
  if (!changed.length) return h('p', {}, 'No changes in the latest runs.');
  return h(
    'ul',
    { class: 'changes' },
    changed.map((run) =>
      h(
        'li',
        {},
        h('time', { datetime: run.startedAt }, when(run.startedAt)),
        run.late ? ' (late)' : '',
        h(
          'ul',
          {},
          (run.changes?.lines ?? []).map((line) => h('li', {}, line.replace(/^- /, ''))),
        ),
        run.diffImageUrl ? h('a', { href: run.diffImageUrl, download: true }, 'Download the diff image') : null,
      ),
    ),
  );
}

async function monitorCard(monitor: Monitor, refresh: () => Promise<void>): Promise<HTMLElement> {
  const id = encodeURIComponent(monitor.id);
  const [figures, runs, incidents] = await Promise.all([
    call<MonitorFigures>('GET', `/monitors/${id}/summary`).catch(() => undefined),
    call<{ runs: Run[] }>('GET', `/monitors/${id}/runs?limit=20`).then(
      (r) => r.runs,
      () => [],
    ),
    call<{ incidents: StatusIncident[] }>('GET', `/monitors/${id}/incidents`).then(
      (r) => r.incidents,
      () => [],
    ),
  ]);
  const message = h('div', { 'aria-live': 'polite' });
  const act = (method: string, path: string) => async () => {
    try {
      await call(method, path);
      await refresh();
    } catch (err) {
      showError(message, err);
    }
  };
  const paused = monitor.state === 'paused';
  return h(
    'article',
    { class: 'monitor card', 'data-monitor': monitor.id },
    h(
      'h2',
      {},
      monitor.name,
      ' ',
      h('span', { class: `state state-${paused ? 'paused' : monitor.status}` }, paused ? 'paused' : monitor.status),
    ),
    h(
      'p',
      { class: 'muted' },
      `${KINDS.find((k) => k.id === monitor.kind)?.label ?? monitor.kind} · `,
      h('code', { class: 'target' }, targetOf(monitor)),
      ` · ${intervalWords(monitor.intervalSeconds)} · last run ${when(monitor.lastRunAt)}`,
      monitor.pausedReason ? ` · paused ${monitor.pausedReason}` : '',
    ),
    figures ? monitorFigures({ ...figures, name: monitor.name }, 'h3') : null,
    h('h3', {}, 'Latest changes'),
    changesList(runs),
    h('h3', {}, 'Incidents'),
    incidentList(incidents, false),
    h(
      'p',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', class: 'ghost', onclick: act('POST', `/monitors/${id}/${paused ? 'resume' : 'pause'}`) },
        paused ? 'Resume' : 'Pause',
      ),
      h('button', { type: 'button', class: 'danger', onclick: act('DELETE', `/monitors/${id}`) }, 'Delete'),
    ),
    h('details', {}, h('summary', {}, 'Edit'), monitorForm(monitor, refresh)),
    message,
  );
}

export async function monitorsPage(main: HTMLElement, account: Account | undefined): Promise<void> {
  if (!account) {
    show(
      main,
      h('h1', {}, 'Monitors'),
      h('p', {}, 'Watch uptime, certificates, meta tags, broken links and visual changes on a schedule. '),
      h(
        'p',
        {},
        h('a', { href: '/sign-in' }, 'Sign in'),
        ' or ',
        h('a', { href: '/sign-up' }, 'create an account'),
        ' to add monitors.',
      ),
    );
    return;
  }
  const listing = h('div', { id: 'monitor-list' });
  const refresh = async () => {
    try {
      const { monitors } = await call<{ monitors: Monitor[] }>('GET', '/monitors');
      if (!monitors.length) show(listing, h('p', {}, 'No monitors yet: create one below.'));
      else show(listing, await Promise.all(monitors.map((monitor) => monitorCard(monitor, refresh))));
    } catch (err) {
      showError(listing, err);
    }
  };
  show(
    main,
    h('h1', {}, 'Monitors'),
    listing,
    h('h2', { id: 'new-monitor' }, 'New monitor'),
    monitorForm(undefined, refresh),
  );
  await refresh();
}
