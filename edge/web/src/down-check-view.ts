/** The down-check's result view: the verdict, its reason, where the time went and the hops. */
import { h } from './dom.js';
import type { Row } from './grid.js';
import { isRow, num, rowsOf, str } from './result-parts.js';

/** Why the site is down, from what the check could and could not do (the spec's meaning of each null). */
function downReason(reply: Row): string {
  if (reply.ipAddress === null) return 'The host name did not resolve (DNS failure).';
  if (reply.responseTimeMs === null) return 'The host could not be reached.';
  const ms = num(reply.responseTimeMs);
  // A quick failure is a refusal or reset; a slow one most likely a time-out.
  return ms < 1000
    ? `The connection was refused or reset after ${ms} ms: nothing answers HTTP at that address and port.`
    : `No HTTP answer within ${ms} ms: the connection timed out, or was refused or reset.`;
}

const TIMING_LABELS: [string, string][] = [
  ['dnsMs', 'DNS lookup'],
  ['connectMs', 'TCP connect'],
  ['tlsMs', 'TLS handshake'],
  ['firstByteMs', 'First byte'],
  ['totalMs', 'Total'],
];

/** Where the time went: each phase a bar relative to the total; a phase that did not happen shows "—". */
function timingTable(timings: Row): HTMLElement {
  const max = Math.max(1, ...TIMING_LABELS.map(([key]) => num(timings[key])));
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Timings' },
    h(
      'table',
      { class: 'timings' },
      h('caption', {}, 'Timings'),
      h(
        'tbody',
        {},
        TIMING_LABELS.map(([key, label]) => {
          const ms = timings[key];
          return h(
            'tr',
            { 'data-timing': key },
            h('th', { scope: 'row' }, label),
            h('td', {}, typeof ms === 'number' ? `${ms} ms` : '—'),
            h(
              'td',
              {},
              typeof ms === 'number'
                ? h('meter', { min: 0, max, value: ms, 'aria-label': `${label}: ${ms} ms` })
                : null,
            ),
          );
        }),
      ),
    ),
  );
}

const VERDICT_WORD: Record<string, string> = { up: 'UP', down: 'DOWN', degraded: 'DEGRADED' };

export function downCheckView(reply: Row): HTMLElement[] {
  const status = num(reply.httpsStatus);
  // The API's verdict and reason when it gives them; before it did, any HTTP answer meant up.
  const verdict = str(reply.verdict) || (typeof reply.httpsStatus === 'number' ? 'up' : 'down');
  const reason = str(reply.reason);
  const sentence =
    verdict === 'up'
      ? `${str(reply.url)} answered HTTP ${status}${status >= 400 ? ' (an error page, but the server is up)' : ''}.`
      : verdict === 'degraded'
        ? `${str(reply.url)} is up, with a problem: ${reason || `HTTP ${status}`}.`
        : `${str(reply.url)} is down. ${reason ? `${reason[0]?.toUpperCase()}${reason.slice(1)}.` : downReason(reply)}`;
  const redirects = rowsOf(reply.redirects);
  const checks: [string, string][] = [];
  if (typeof reply.statusMatches === 'boolean')
    checks.push(['Expected status', reply.statusMatches ? 'matched' : 'not matched']);
  if (typeof reply.keywordFound === 'boolean') checks.push(['Keyword', reply.keywordFound ? 'found' : 'not found']);
  return [
    h(
      'div',
      { class: `banner banner-${verdict}`, role: 'status' },
      h('p', { class: 'banner-word' }, VERDICT_WORD[verdict] ?? verdict.toUpperCase()),
      h('p', { class: 'banner-reason' }, sentence),
    ),
    h(
      'dl',
      { class: 'figures' },
      [
        ['Status', typeof reply.httpsStatus === 'number' ? String(status) : 'none'],
        ['Response time', reply.responseTimeMs === null ? '—' : `${reply.responseTimeMs} ms`],
        ['Address', str(reply.ipAddress) || '—'],
        ['Tested from', str(reply.testedFrom)],
        ...checks,
      ].map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
    ),
    isRow(reply.timings) ? timingTable(reply.timings) : null,
    redirects.length
      ? h(
          'section',
          { class: 'redirects', 'aria-label': 'Redirects' },
          h('h3', {}, `Redirects (${redirects.length})`),
          h(
            'ol',
            {},
            redirects.map((r) => h('li', {}, `${num(r.status)} `, h('code', {}, str(r.url)))),
          ),
        )
      : null,
  ].filter((el): el is HTMLElement => el !== null);
}
