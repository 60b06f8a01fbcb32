/**
 * An audit compared with the previous audit of the same site by the same account (decision 0477):
 * the findings (issue type and URL) that are new and those that are gone, listed up to a cap with
 * their totals, and the issue types new and fixed. Kept audits are read and written here, once per
 * audit, by the worker that finished it.
 */
import type { AuditComparison, AuditFinding, SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import type { AuditHistory, KeptAudit } from './audit-history.js';

/** Findings listed per side of a comparison; the totals count them all. */
export const LISTED_CHANGES = 1_000;

const SEPARATOR = '\t';

/**
 * The findings of reports whose affected URLs went to the store (the result lists only the first
 * of each issue): each (issue type, URL), as the report found them.
 */
const foundBy = new WeakMap<object, ReadonlySet<string>>();

/** Notes the findings of `result`, for `findingsOf` to return. */
export function noteFindings(result: SiteAuditResult, findings: ReadonlySet<string>): SiteAuditResult {
  foundBy.set(result, findings);
  return result;
}

/** Each (issue type, URL) of a report, once. */
export function findingsOf(result: Pick<SiteAuditResult, 'issues'>): string[] {
  const found = foundBy.get(result);
  if (found) return [...found].sort();
  const keys = new Set<string>();
  for (const issue of result.issues) for (const a of issue.affected) keys.add(`${issue.id}${SEPARATOR}${a.url}`);
  return [...keys].sort();
}

const asFinding = (key: string): AuditFinding => {
  const at = key.indexOf(SEPARATOR);
  return { issue: key.slice(0, at), url: key.slice(at + 1) };
};

const typeOf = (key: string) => key.slice(0, key.indexOf(SEPARATOR));

export function compareAudits(previous: KeptAudit, findings: readonly string[]): AuditComparison {
  const before = new Set(previous.findings);
  const now = new Set(findings);
  const added = findings.filter((key) => !before.has(key));
  const fixed = previous.findings.filter((key) => !now.has(key));
  const typesBefore = new Set(previous.findings.map(typeOf));
  const typesNow = new Set(findings.map(typeOf));
  return {
    previousJobId: previous.jobId,
    previousScannedAt: previous.scannedAt,
    newIssues: [...typesNow].filter((id) => !typesBefore.has(id)).sort(),
    fixedIssues: [...typesBefore].filter((id) => !typesNow.has(id)).sort(),
    newFindings: added.slice(0, LISTED_CHANGES).map(asFinding),
    fixedFindings: fixed.slice(0, LISTED_CHANGES).map(asFinding),
    newFindingsTotal: added.length,
    fixedFindingsTotal: fixed.length,
  };
}

/** Whose audits are compared: an account's, per start URL; anonymous callers' are not kept. */
export const siteKey = (caller: string | undefined, url: string) =>
  caller?.startsWith('account:') ? `${caller}\n${url}` : undefined;

/**
 * The finished audit with its comparison, and kept as the site's latest. A history that cannot be
 * read or written leaves the audit without a comparison rather than failing it.
 */
export async function withComparison(
  history: AuditHistory | undefined,
  job: { id: string; url: string; caller?: string },
  result: SiteAuditResult,
  onError: (err: unknown) => void,
): Promise<SiteAuditResult> {
  const site = siteKey(job.caller, job.url);
  if (!history || !site) return result;
  try {
    const findings = findingsOf(result);
    const previous = await history.previous(site, job.id);
    await history.keep(site, { jobId: job.id, scannedAt: result.scannedAt, findings });
    return previous ? { ...result, comparison: compareAudits(previous, findings) } : result;
  } catch (err) {
    onError(err);
    return result;
  }
}
