/**
 * Status pages and badges (issue 40, docs/decisions/0438-status-pages-and-badges.md): a monitor's
 * figures and the account's status page settings for its owner; the page and its monitors' badges
 * for anyone, without a credential, cacheable.
 */
import { noStore } from '../../envelope.js';
import { download, type RouteSpec, route } from '../../route-spec.js';
import { ownerOf } from './presenters.js';
import { MonitorIdInput } from './schemas.js';
import {
  BadgeInput,
  MonitorSummary,
  SlugInput,
  StatusPage,
  StatusPageInput,
  StatusPageSettings,
} from './status-schemas.js';

const STATUS_TIMEOUT_MS = 15_000;
const OWNER_ERRORS = { account_required: 401, owner_required: 403, live_key_required: 403 };
/** A public answer: the same for every caller, so shared caches may keep it a minute. */
const PUBLIC_PAGE = { 'Cache-Control': 'public, max-age=60' };
/** services/monitor/src/badges.ts BADGE_CACHE_CONTROL. */
const BADGE_CACHE_CONTROL = 'public, max-age=300, stale-while-revalidate=600';

export const monitorStatusRoutes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/monitors/:id/summary',
    operation: 'monitor-summary',
    summary:
      'A monitor’s uptime over 24 h, 7 d, 30 d and 90 d, one bar per day for 90 days, ' +
      'and its last 24 hours’ response times.',
    credits: 0,
    callers: 'owner',
    input: MonitorIdInput,
    output: MonitorSummary,
    errors: { ...OWNER_ERRORS, monitor_not_found: 404 },
    timeoutMs: STATUS_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.monitorStatus.getMonitorSummary({ owner: ownerOf(caller), id: input.id }, options),
    // The figures at the top level of data (the spread `monitor`).
    present: (reply) => reply.monitor,
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/status-page',
    operation: 'put-status-page',
    summary:
      'Creates or replaces the account’s public status page (/status/<slug>): its title, the monitors it shows, ' +
      'and whether it is on. Its monitors’ badges are public while it is.',
    credits: 0,
    callers: 'owner',
    input: StatusPageInput,
    output: StatusPageSettings,
    errors: {
      ...OWNER_ERRORS,
      invalid_slug: 400,
      invalid_title: 400,
      unknown_monitor: 400,
      too_many_monitors: 400,
      slug_taken: 409,
    },
    timeoutMs: STATUS_TIMEOUT_MS,
    call: (c, input, options, caller) => c.monitorStatus.putStatusPage({ owner: ownerOf(caller), ...input }, options),
    present: (reply) => reply.page,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/status-page',
    operation: 'get-status-page-settings',
    summary: 'The account’s status page settings (404 when it has none).',
    credits: 0,
    callers: 'owner',
    input: MonitorIdInput.omit({ id: true }),
    output: StatusPageSettings,
    errors: { ...OWNER_ERRORS, status_page_not_found: 404 },
    timeoutMs: STATUS_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.monitorStatus.getOwnStatusPage({ owner: ownerOf(caller) }, options),
    present: (reply) => reply.page,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/status/:slug',
    operation: 'status-page',
    summary:
      'An account’s public status page, for anyone: each chosen monitor’s status, uptime over 24 h, 7 d, 30 d and ' +
      '90 d, daily bars, response times, and the incidents of the last 90 days. No target or account is shown.',
    credits: 0,
    callers: 'ip',
    input: SlugInput,
    output: StatusPage,
    errors: { status_page_not_found: 404 },
    timeoutMs: STATUS_TIMEOUT_MS,
    call: (c, input, options) => c.monitorStatus.getStatusPage({ slug: input.slug }, options),
    headers: () => PUBLIC_PAGE,
    successHeaders: { 'Cache-Control': 'public, max-age=60: the same answer for every caller.' },
  }),
];

export const monitorStatusDownloads = [
  download({
    paths: ['/v1/badges/:monitorId/:figure', '/api/v1/badges/:monitorId/:figure'],
    operation: 'monitor-badge',
    summary:
      'A monitor’s badge in the shields.io style (SVG): uptime over a window, SSL days left, or broken links. ' +
      'For anyone, only while the monitor is on its account’s enabled status page; cacheable for 5 minutes.',
    input: BadgeInput,
    nameParam: 'figure',
    disposition: 'inline',
    contentTypes: ['image/svg+xml'],
    callers: 'ip',
    cacheControl: BADGE_CACHE_CONTROL,
    errors: { monitor_not_found: 404, badge_not_for_kind: 400 },
    timeoutMs: STATUS_TIMEOUT_MS,
    call: (c, input, options) =>
      badgeFile(
        c.monitorStatus.getBadge(
          {
            monitorId: input.monitorId,
            figure: input.figure,
            window: input.window ?? '30d',
            style: input.style ?? 'flat',
          },
          options,
        ),
      ),
  }),
];

/** The badge's SVG as the one part of a file. */
async function* badgeFile(reply: Promise<{ svg: string }>) {
  const chunk = Buffer.from((await reply).svg);
  yield { contentType: 'image/svg+xml', sizeBytes: String(chunk.byteLength), fileName: 'badge.svg', chunk };
}
