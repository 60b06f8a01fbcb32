/**
 * Severity, reason and category of every checked link, the summary, the status breakdown, the
 * health score and its letter grade. The rules are written down in docs/grading.md; this file is
 * the only place that applies them.
 */
import { STATUS_CODES } from 'node:http';
import { letterGrade } from '@webutil/kit';
import type { BreakdownRow, CheckedLink, FoundLink, LinkSummary, ScoreCard, Severity } from '../model.js';
import type { PageTargets } from '../page/fragments.js';
import { isResource } from '../page/links.js';

/** What checking one URL found out. */
export interface CheckOutcome {
  /** Final HTTP status, after redirects; absent when no response came. */
  status?: number;
  /** Status of the first answer (a 3xx when redirected). */
  firstStatus?: number;
  /** Redirect hops followed. */
  redirects: number;
  finalUrl?: string;
  /** The redirect limit was reached: `loop` when a URL came round again. */
  redirectTrouble?: 'loop' | 'too_many';
  responseTimeMs?: number;
  error?: { kind: string; code: string; message: string };
  /** Vendor of the bot-protection challenge that answered. */
  botWall?: string;
  /** The 200 is the host's not-found page. */
  soft404?: boolean;
  /** Seconds a 429 asked us to wait when that did not fit the scan's budget or our retries. */
  retryAfterSeconds?: number;
  /** Ids and anchor names of the page, when it was read as HTML. */
  targets?: PageTargets;
}

/** A fragment checked against its page: the decoded name and whether the page has it. */
export interface FragmentCheck {
  name: string;
  found: boolean;
}

export interface Graded {
  record: CheckedLink;
  /** Row of the status breakdown this link counts in. */
  bucket: { code: string; label: string };
}

const CLIENT = '4xx Client error';
/** The category of a link whose fragment its page lacks (the site audit's missing_fragment). */
export const MISSING_ANCHOR = 'Missing anchor';
const SERVER = '5xx Server error';

/** What the rules say about one link, before it becomes a record. */
interface Verdict {
  severity: Severity;
  reason: string;
  category: string;
  statusText: string;
  /** Breakdown row. */
  code: string;
  label: string;
  /** Overrides the network error code (a redirect loop has none of its own). */
  errorCode?: string;
}

/** Statuses the caller's acceptStatus option makes ok. */
export type AcceptStatus = (status: number) => boolean;

/**
 * Grades a link from what its check found (no outcome for non-HTTP links). `fragments` are its
 * verified fragments: the first missing one decides the verdict, and all are on the record.
 * `accepts`: statuses graded ok whatever they are (a redirect whose first status it accepts is ok).
 */
export function gradeLink(
  link: FoundLink,
  outcome: CheckOutcome | undefined,
  fragments?: readonly FragmentCheck[],
  accepts?: AcceptStatus,
): Graded {
  const missing = fragments?.filter((f) => !f.found) ?? [];
  const fragment = missing[0] ?? fragments?.[0];
  const v = verdictOf(link, outcome, fragment, accepts);
  const more = missing.length > 1 ? ` (and ${missing.length - 1} more missing fragments)` : '';
  const redirected = outcome !== undefined && outcome.redirects > 0;
  // One literal with every field in one order: records are made by the thousand.
  const record: CheckedLink = {
    url: link.url,
    originalHref: link.originalHref,
    text: link.text,
    type: link.type,
    rel: link.rel,
    statusCode: outcome?.status,
    statusText: v.statusText,
    severity: v.severity,
    reason: v.reason + more,
    category: v.category,
    redirected,
    finalUrl: redirected ? outcome.finalUrl : undefined,
    responseTimeMs: outcome?.responseTimeMs,
    errorCode: v.errorCode ?? outcome?.error?.code,
    fragments:
      link.type === 'anchor' || fragments === undefined
        ? undefined
        : fragments.map((f) => ({ fragment: f.name, found: f.found })),
    element: link.element,
  };
  return { record, bucket: { code: v.code, label: v.label } };
}

const verdict = (
  severity: Severity,
  reason: string,
  category: string,
  statusText: string,
  code: string,
  label: string,
): Verdict => ({
  severity,
  reason,
  category,
  statusText,
  code,
  label,
});

function verdictOf(
  link: FoundLink,
  outcome: CheckOutcome | undefined,
  fragment: FragmentCheck | undefined,
  accepts: AcceptStatus | undefined,
): Verdict {
  if (link.type === 'anchor') {
    if (fragment && !fragment.found) {
      return verdict(
        'warning',
        `no element with id or name "${fragment.name}" on the page`,
        MISSING_ANCHOR,
        'In-page anchor',
        'MISSING_ANCHOR',
        'Missing anchor target',
      );
    }
    return verdict(
      'info',
      fragment ? `in-page anchor; #${fragment.name} exists` : 'in-page anchor',
      'In-page anchor',
      'In-page anchor',
      'anchor',
      'In-page anchor',
    );
  }
  if (link.type === 'mailto' || link.type === 'tel') {
    const what = link.type === 'mailto' ? 'Email' : 'Phone';
    return verdict(
      'info',
      `${what.toLowerCase()} link; not checked`,
      'Non-HTTP link',
      `${what} link`,
      link.type,
      `${what} link (not checked)`,
    );
  }
  if (link.type === 'other') {
    if (link.scheme === 'http' || link.scheme === 'https') {
      return verdict(
        'broken',
        `malformed URL: ${link.originalHref.slice(0, 200)}`,
        'Invalid URL',
        'Invalid URL',
        'INVALID_URL',
        'Malformed URL',
      );
    }
    const scheme = link.scheme || 'unknown';
    return verdict(
      'info',
      `${scheme}: link; not checked`,
      'Non-HTTP link',
      `${scheme}: link`,
      scheme,
      `${scheme}: link (not checked)`,
    );
  }
  if (!outcome) throw new Error(`no check outcome for ${link.url}`);
  return outcome.error ? failureVerdict(outcome.error) : httpVerdict(outcome, fragment, accepts);
}

function httpVerdict(outcome: CheckOutcome, fragment: FragmentCheck | undefined, accepts?: AcceptStatus): Verdict {
  const status = outcome.status ?? 0;
  const label = STATUS_CODES[status] ?? 'Non-standard status';
  const code = String(status);
  const answer = (severity: Severity, reason: string, category: string, rowCode = code, rowLabel = label) =>
    verdict(severity, reason, category, label, rowCode, rowLabel);
  if (outcome.redirectTrouble) {
    const what = outcome.redirectTrouble === 'loop' ? 'redirect loop' : `more than ${outcome.redirects} redirects`;
    const loop = answer(
      'broken',
      `${what}; the chain never reaches a page`,
      'Redirect loop',
      'ERR_TOO_MANY_REDIRECTS',
      'Redirect loop or too many redirects',
    );
    return { ...loop, errorCode: 'ERR_TOO_MANY_REDIRECTS' };
  }
  const redirected = outcome.redirects > 0;
  if (accepts && !outcome.soft404 && !(fragment && !fragment.found)) {
    // Unredirected, the status is accepted; redirected, the redirect is, and it ends well or accepted.
    const first = outcome.firstStatus ?? status;
    const ends = (status >= 200 && status < 300) || accepts(status);
    if (redirected ? accepts(first) && ends : accepts(status)) {
      const via = redirected ? ` after redirecting (${first}) to ${outcome.finalUrl}` : '';
      return answer('ok', `answered ${status} ${label}${via}, accepted by acceptStatus`, classOf(status));
    }
  }
  if (outcome.botWall) {
    return answer(
      'warning',
      `${outcome.botWall} bot protection answered ${status} with a challenge; the link likely works in a browser`,
      'Bot protection',
      'BOT_WALL',
      'Bot protection challenge',
    );
  }
  if (status >= 200 && status < 300) {
    if (outcome.soft404) {
      return answer(
        'broken',
        `soft 404: answers ${status} but shows the same page as a path that does not exist`,
        'Soft 404',
        'SOFT_404',
        'Soft 404 (not-found page answering 200)',
      );
    }
    if (fragment && !fragment.found) {
      return answer(
        'warning',
        `the page exists but has no element with id or name "${fragment.name}"`,
        MISSING_ANCHOR,
        'MISSING_ANCHOR',
        'Missing anchor target',
      );
    }
    if (redirected) {
      const first = outcome.firstStatus ?? 302;
      const hops = outcome.redirects === 1 ? '' : `, ${outcome.redirects} hops`;
      return answer(
        'warning',
        `redirects (${first}${hops}) to ${outcome.finalUrl}; link to the final URL instead`,
        '3xx Redirect',
        String(first),
        STATUS_CODES[first] ?? 'Redirect',
      );
    }
    return answer('ok', `answered ${status} ${label}`, '2xx Success');
  }
  const via = redirected ? ` after redirecting to ${outcome.finalUrl}` : '';
  if (status === 401 || status === 407)
    return answer('warning', `needs authentication (${status})${via}; it may work for signed-in users`, CLIENT);
  if (status === 403)
    return answer('warning', `access forbidden (403)${via}; it may work in a browser or for signed-in users`, CLIENT);
  if (status === 429) {
    const wait =
      outcome.retryAfterSeconds === undefined
        ? ''
        : `; it asked for a ${outcome.retryAfterSeconds} s pause, more than the scan could wait`;
    return answer('warning', `rate limited (429)${via}${wait}`, CLIENT);
  }
  if (status === 404) return answer('broken', `not found (404)${via}: the page does not exist`, CLIENT);
  if (status === 410) return answer('broken', `gone (410)${via}: the page was removed on purpose`, CLIENT);
  if (status >= 400 && status < 500) return answer('broken', `client error (${status} ${label})${via}`, CLIENT);
  if (status >= 500 && status < 600) return answer('broken', `server error (${status} ${label})${via}`, SERVER);
  return answer('warning', `unexpected status ${status}${via}; browsers may not show a page`, 'Unexpected status');
}

/** The category of a status by its class. */
function classOf(status: number): string {
  if (status >= 200 && status < 300) return '2xx Success';
  if (status >= 300 && status < 400) return '3xx Redirect';
  if (status >= 400 && status < 500) return CLIENT;
  if (status >= 500 && status < 600) return SERVER;
  return 'Unexpected status';
}

const FAILURES: Record<string, [category: string, label: string]> = {
  dns: ['DNS error', 'DNS lookup failed'],
  connect: ['Connection error', 'Connection failed'],
  timeout: ['Timeout', 'Timed out'],
  not_answering: ['Timeout', 'Timed out'],
  tls: ['TLS error', 'TLS/certificate error'],
  protocol: ['Protocol error', 'Invalid HTTP response'],
  too_large: ['Protocol error', 'Response too large'],
};

/** No response: the status text is the network error's label. */
function failureVerdict(error: NonNullable<CheckOutcome['error']>): Verdict {
  if (error.kind === 'blocked') {
    const what =
      error.code === 'EUNSUPPORTEDSCHEME' ? 'redirects to a non-HTTP URL' : 'points to a private or internal address';
    return verdict(
      'info',
      `not checked: ${what}`,
      'Not checked',
      'Not checked',
      error.code,
      'Not checked (blocked target)',
    );
  }
  const [category, label] = FAILURES[error.kind] ?? ['Network error', 'Network error'];
  // The kit words every network failure once (cause and code); the reason is that wording.
  return verdict('broken', error.message, category, label, error.code, label);
}

const SEVERITY_ORDER: Severity[] = ['info', 'ok', 'warning', 'broken'];

/**
 * Summary, breakdown (one row per code, most frequent first; a code's severity is the worst seen
 * with it, though the rules give every code one severity), score and grade.
 */
export function scoreCard(links: readonly Graded[]): ScoreCard {
  const summary: LinkSummary = { ok: 0, warnings: 0, broken: 0, info: 0, internal: 0, external: 0, resources: 0 };
  const rows = new Map<string, BreakdownRow>();
  for (const { record, bucket } of links) {
    const severity = record.severity;
    if (severity === 'ok') summary.ok++;
    else if (severity === 'warning') summary.warnings++;
    else if (severity === 'broken') summary.broken++;
    else summary.info++;
    if (record.type === 'internal') summary.internal++;
    else if (record.type === 'external') summary.external++;
    if (isResource(record.element)) summary.resources++;
    const row = rows.get(bucket.code);
    if (!row) rows.set(bucket.code, { code: bucket.code, label: bucket.label, severity, count: 1 });
    else {
      row.count++;
      if (SEVERITY_ORDER.indexOf(severity) > SEVERITY_ORDER.indexOf(row.severity)) row.severity = severity;
    }
  }
  const statusBreakdown = [...rows.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
  const healthScore = scoreOf(summary);
  return { summary, statusBreakdown, healthScore, grade: letterGrade(healthScore) };
}

/**
 * 100 minus 250 points per unit share of broken links and 40 per unit share of warnings, among
 * scored (ok, warning, broken) links; info links are not scored. Any broken link keeps the score
 * below 100. No scored link: 100.
 */
export function scoreOf(summary: Pick<LinkSummary, 'ok' | 'warnings' | 'broken'>): number {
  const scored = summary.ok + summary.warnings + summary.broken;
  if (scored === 0) return 100;
  const score = Math.round(100 - (250 * summary.broken + 40 * summary.warnings) / scored);
  const bounded = Math.min(100, Math.max(0, score));
  return summary.broken > 0 ? Math.min(99, bounded) : bounded;
}
