/**
 * From findings to the report (docs/decisions/0443-site-audit-scores.md): issues counted by pages
 * affected, category scores, the health score, status and depth tallies, and an issue's affected
 * URLs a page at a time. Pure.
 */
import type {
  AuditCategory,
  AuditCount,
  AuditIssue,
  SiteAuditResult,
} from '@webutil/proto/webutil/crawl/v1/site_audit';
import { CATEGORIES, type Category, ISSUES, type IssueId, type Priority, priorityRank } from './catalogue.js';
import type { AuditedPage, Finding } from './page-checks.js';

/** Affected URLs a poll lists per issue; the issue route pages through the rest. */
export const LISTED_PER_ISSUE = 20;

/** Every issue found, with all its affected URLs (the stored form). */
export function issuesOf(findings: readonly Finding[]): AuditIssue[] {
  const by = new Map<IssueId, Finding[]>();
  for (const finding of findings) by.set(finding.id, [...(by.get(finding.id) ?? []), finding]);
  const issues: AuditIssue[] = [];
  for (const [id, found] of by) {
    const type = ISSUES[id];
    const pages = new Set(found.flatMap((f) => f.pages ?? [f.url]));
    issues.push({
      id,
      category: type.category,
      priority: type.priority,
      title: type.title,
      fix: type.fix,
      pagesAffected: pages.size,
      affectedTotal: found.length,
      affected: found
        .map((f) => ({ url: f.url, detail: f.detail, sources: f.sources ?? [] }))
        .sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0)),
    });
  }
  return issues.sort(
    (a, b) =>
      priorityRank(a.priority as Priority) - priorityRank(b.priority as Priority) ||
      b.pagesAffected - a.pagesAffected ||
      (a.id < b.id ? -1 : 1),
  );
}

/** Pages with a finding of each priority in each category. */
function pagesWith(findings: readonly Finding[], keep: (category: Category, priority: Priority) => boolean) {
  const pages = new Set<string>();
  for (const f of findings) {
    const type = ISSUES[f.id];
    if (keep(type.category, type.priority)) for (const page of f.pages ?? [f.url]) pages.add(page);
  }
  return pages;
}

/** Share of `total` pages outside `hit`, 0-100, rounded down (a site with one bad page is not 100). */
function share(hit: Set<string>, audited: ReadonlySet<string>): number {
  if (audited.size === 0) return 100;
  let bad = 0;
  for (const page of hit) if (audited.has(page)) bad++;
  return Math.floor((100 * (audited.size - bad)) / audited.size);
}

/**
 * The health score: the share of audited pages with no error (Ahrefs' published rule). A category's
 * score: the share with no error or warning of it. Pages are those fetched or refused, never
 * resources or other sites' URLs.
 */
export function scores(findings: readonly Finding[], audited: ReadonlySet<string>, issues: readonly AuditIssue[]) {
  const healthScore = share(
    pagesWith(findings, (_, priority) => priority === 'error'),
    audited,
  );
  const categories: AuditCategory[] = CATEGORIES.map((id) => {
    const of = issues.filter((i) => i.category === id);
    const tally = (priority: Priority) => of.filter((i) => i.priority === priority).length;
    return {
      id,
      score: share(
        pagesWith(findings, (category, priority) => category === id && priority !== 'notice'),
        audited,
      ),
      errors: tally('error'),
      warnings: tally('warning'),
      notices: tally('notice'),
    };
  });
  return { healthScore, categories };
}

/** Pages by status code ("error" when nothing answered, "robots" when refused), and by click depth. */
export function tallies(pages: readonly AuditedPage[], depths: Map<string, number>) {
  const statuses = new Map<string, number>();
  const levels = new Map<string, number>();
  for (const page of pages) {
    const status = page.refused ? 'robots' : page.status === undefined ? 'error' : String(page.status);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const depth = depths.get(page.url);
    const level = depth === undefined ? 'unlinked' : String(depth);
    levels.set(level, (levels.get(level) ?? 0) + 1);
  }
  const rows = (m: Map<string, number>): AuditCount[] =>
    [...m]
      .map(([key, pages]) => ({ key, pages }))
      .sort((a, b) => order(a.key) - order(b.key) || (a.key < b.key ? -1 : 1));
  return { statusCodes: rows(statuses), depths: rows(levels) };
}

/** Numbers first, in order; words (error, robots, unlinked) after them. */
function order(key: string): number {
  return /^\d+$/.test(key) ? Number(key) : Number.MAX_SAFE_INTEGER;
}

/** The report as a poll shows it: each issue with its first affected URLs. */
export function forPoll(result: SiteAuditResult): SiteAuditResult {
  return {
    ...result,
    issues: result.issues.map((issue) => ({ ...issue, affected: issue.affected.slice(0, LISTED_PER_ISSUE) })),
  };
}

/** One issue with `limit` affected URLs from `offset`; undefined when the audit did not find it. */
export function issuePage(result: SiteAuditResult, id: string, offset: number, limit: number): AuditIssue | undefined {
  const issue = result.issues.find((i) => i.id === id);
  return issue && { ...issue, affected: issue.affected.slice(offset, offset + limit) };
}
