/**
 * The site-level checks of an audit's report (decision 0489): the TLS scan of the host, the
 * down-check of the start URL and the start page's screenshots, each "not available" with why
 * when it could not run.
 */
import { h } from './dom.js';
import type { Row } from './grid.js';
import { gradeBadge, isRow, num, str } from './result-parts.js';

const notAvailable = (check: Row) => h('p', { class: 'muted' }, `Not available: ${str(check.unavailableReason)}.`);

function tlsView(tls: Row): HTMLElement {
  const problems = Array.isArray(tls.problems) ? tls.problems.map(String) : [];
  return h(
    'div',
    { class: 'card' },
    h('h3', {}, 'TLS'),
    !tls.available
      ? notAvailable(tls)
      : [
          gradeBadge(str(tls.grade), 'TLS'),
          h(
            'p',
            {},
            `${str(tls.protocol)} · certificate ` +
              (num(tls.daysUntilExpiry) < 0 ? 'expired' : `expires in ${num(tls.daysUntilExpiry)} days`),
          ),
          problems.length
            ? h(
                'ul',
                {},
                problems.map((p) => h('li', {}, p)),
              )
            : h('p', {}, 'No problems found.'),
        ],
  );
}

function downView(down: Row): HTMLElement {
  return h(
    'div',
    { class: 'card' },
    h('h3', {}, 'Down-check'),
    !down.available
      ? notAvailable(down)
      : h(
          'p',
          {},
          h('span', { class: `priority sev-${down.up ? 'ok' : 'broken'}` }, str(down.verdict)),
          ` ${str(down.reason)}`,
          down.responseTimeMs !== undefined ? ` · ${num(down.responseTimeMs)} ms` : '',
        ),
  );
}

function screenshotView(label: string, shot: unknown): HTMLElement {
  const row: Row = isRow(shot) ? shot : {};
  return h(
    'figure',
    { class: 'card audit-screenshot' },
    h('figcaption', {}, label),
    row.available
      ? h(
          'a',
          { href: str(row.imageUrl) },
          h('img', { src: str(row.imageUrl), alt: `The start page on ${label.toLowerCase()}`, loading: 'eager' }),
        )
      : notAvailable(row),
  );
}

/** The site card of the report; nothing for audits made before these checks. */
export function siteChecksView(site: unknown): HTMLElement[] {
  if (!isRow(site)) return [];
  const shots = isRow(site.screenshots) ? site.screenshots : {};
  return [
    h('h2', {}, 'The site'),
    h(
      'div',
      { class: 'figures audit-site' },
      isRow(site.tls) ? tlsView(site.tls) : null,
      isRow(site.downCheck) ? downView(site.downCheck) : null,
    ),
    h(
      'div',
      { class: 'figures audit-site' },
      screenshotView('Desktop', shots.desktop),
      screenshotView('Mobile', shots.mobile),
    ),
  ];
}
