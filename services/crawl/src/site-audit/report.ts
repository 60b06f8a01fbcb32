/**
 * From findings to the report (docs/decisions/0443-site-audit-scores.md): issues counted by pages
 * affected, category scores, the health score, status and depth tallies, and an issue's affected
 * URLs a page at a time. The pure functions take every finding at once; `IssueBook` takes them one
 * at a time and sends the affected URLs to the store (decision 0472).
 */
import type {
  AuditAffected,
  AuditCategory,
  AuditCount,
  AuditIssue,
  SiteAuditResult,
} from '@webutil/proto/webutil/crawl/v1/site_audit';
import type { AuditPageStore, StoredAffected } from '../jobs/audit-pages.js';
import { CATEGORIES, type Category, ISSUES, type IssueId, type Priority, priorityRank } from './catalogue.js';
import type { AuditedPage, Finding } from './page-checks.js';

/** Affected URLs a poll lists per issue; the issue route pages through the rest. */
export const LISTED_PER_ISSUE = 20;

/** Errors first, then by pages affected, then by id. */
function byPriority(a: AuditIssue, b: AuditIssue): number {
  return (
    priorityRank(a.priority as Priority) - priorityRank(b.priority as Priority) ||
    b.pagesAffected - a.pagesAffected ||
    (a.id < b.id ? -1 : 1)
  );
}

/** Every issue found, with all its affected URLs. */
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
  return issues.sort(byPriority);
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
  const tally = new Tallies();
  for (const page of pages) tally.add(page, depths.get(page.url));
  return tally.rows();
}

/** The status and depth tallies, a page at a time. */
export class Tallies {
  private readonly statuses = new Map<string, number>();
  private readonly levels = new Map<string, number>();

  add(page: AuditedPage, depth: number | undefined): void {
    const status = page.refused ? 'robots' : page.status === undefined ? 'error' : String(page.status);
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    const level = depth === undefined ? 'unlinked' : String(depth);
    this.levels.set(level, (this.levels.get(level) ?? 0) + 1);
  }

  rows(): { statusCodes: AuditCount[]; depths: AuditCount[] } {
    const rows = (m: Map<string, number>): AuditCount[] =>
      [...m]
        .map(([key, pages]) => ({ key, pages }))
        .sort((a, b) => order(a.key) - order(b.key) || (a.key < b.key ? -1 : 1));
    return { statusCodes: rows(this.statuses), depths: rows(this.levels) };
  }
}

/** Numbers first, in order; words (error, robots, unlinked) after them. */
function order(key: string): number {
  return /^\d+$/.test(key) ? Number(key) : Number.MAX_SAFE_INTEGER;
}

/** The report as a poll shows it: each issue with its first affected URLs (all a report kept before 0472). */
export function forPoll(result: SiteAuditResult): SiteAuditResult {
  return {
    ...result,
    issues: result.issues.map((issue) => ({ ...issue, affected: issue.affected.slice(0, LISTED_PER_ISSUE) })),
  };
}

/**
 * One issue with `limit` affected URLs from `offset`; undefined when the audit did not find it. A
 * result that lists all of an issue's URLs (a small issue, a report made before decision 0472)
 * answers from itself; otherwise they are read from the store.
 */
export async function issuePage(
  result: SiteAuditResult,
  id: string,
  offset: number,
  limit: number,
  stored?: { store: AuditPageStore; jobId: string },
): Promise<AuditIssue | undefined> {
  const issue = result.issues.find((i) => i.id === id);
  if (!issue) return undefined;
  if (issue.affected.length >= issue.affectedTotal || !stored)
    return { ...issue, affected: issue.affected.slice(offset, offset + limit) };
  const rows = await stored.store.affected(stored.jobId, id, offset, limit);
  return { ...issue, affected: rows.map(({ url, detail, sources }) => ({ url, detail, sources })) };
}

/** Affected URLs written to the store at once. */
const AFFECTED_BATCH = 500;

/** An issue as the book keeps it: counts and its first URLs, not every URL. */
interface IssueEntry {
  total: number;
  /** Audited pages affected, by page number; other URLs (a broken link's) by URL. */
  pages: Uint8Array;
  otherPages: Set<string>;
  /** The first LISTED_PER_ISSUE by URL, then by the order found. */
  first: (AuditAffected & { seq: number })[];
}

/**
 * The report's issues, found a finding at a time (docs/decisions/0472): each issue's counts and
 * first URLs are kept; every affected URL goes to the store, where the issue route pages through
 * them. Pages are numbered by the caller (`pageNumber`), so the pages an issue or a score counts are
 * a byte each, not a URL.
 */
export class IssueBook {
  private readonly issues = new Map<IssueId, IssueEntry>();
  /** Per audited page, a bit for "has an error" (0) and per category "has an error or warning" (1 + i). */
  private readonly flags: Uint32Array;
  private readonly rows: StoredAffected[] = [];
  private seq = 0;
  /** Each (issue type, URL) found, for the comparison with the previous audit. */
  readonly keys = new Set<string>();

  constructor(
    /** Number of pages numbered. */
    private readonly size: number,
    /** A page's number, when `url` is one of the audited pages; undefined otherwise. */
    private readonly pageNumber: (url: string) => number | undefined,
    private readonly out: { store: AuditPageStore; jobId: string; expiresAt: Date },
  ) {
    this.flags = new Uint32Array(size);
  }

  /** Notes a finding; call `flush` now and then (every batch of pages) to write its URLs out. */
  add(finding: Finding): void {
    const type = ISSUES[finding.id];
    let entry = this.issues.get(finding.id);
    if (!entry) {
      entry = { total: 0, pages: new Uint8Array(this.size), otherPages: new Set(), first: [] };
      this.issues.set(finding.id, entry);
    }
    entry.total++;
    const category = 1 << (1 + CATEGORIES.indexOf(type.category));
    const flag = (type.priority === 'error' ? 1 : 0) | (type.priority !== 'notice' ? category : 0);
    for (const page of finding.pages ?? [finding.url]) {
      const n = this.pageNumber(page);
      if (n === undefined) entry.otherPages.add(page);
      else {
        entry.pages[n] = 1;
        this.flags[n] = (this.flags[n] as number) | flag;
      }
    }
    const seq = this.seq++;
    const affected = { url: finding.url, detail: finding.detail, sources: finding.sources ?? [], seq };
    const { first } = entry;
    const last = first[first.length - 1];
    if (first.length < LISTED_PER_ISSUE || (last && before(affected, last))) {
      let at = first.length;
      while (at > 0 && before(affected, first[at - 1] as typeof affected)) at--;
      first.splice(at, 0, affected);
      if (first.length > LISTED_PER_ISSUE) first.pop();
    }
    this.rows.push({ issueId: finding.id, ...affected });
    this.keys.add(`${finding.id}\t${finding.url}`);
  }

  /** Writes the affected URLs noted so far to the store once a batch of them is ready (all, with `all`). */
  async flush(all = false): Promise<void> {
    while (this.rows.length >= AFFECTED_BATCH || (all && this.rows.length > 0)) {
      const rows = this.rows.splice(0, AFFECTED_BATCH);
      await this.out.store.addAffected(this.out.jobId, rows, this.out.expiresAt);
    }
  }

  /** The issues with their first URLs, and the scores over the audited pages (`audited(n)`). */
  report(audited: (n: number) => boolean, auditedCount: number) {
    const issues: AuditIssue[] = [];
    for (const [id, entry] of this.issues) {
      const type = ISSUES[id];
      let pagesAffected = entry.otherPages.size;
      for (const hit of entry.pages) pagesAffected += hit;
      issues.push({
        id,
        category: type.category,
        priority: type.priority,
        title: type.title,
        fix: type.fix,
        pagesAffected,
        affectedTotal: entry.total,
        affected: entry.first.map(({ url, detail, sources }) => ({ url, detail, sources })),
      });
    }
    issues.sort(byPriority);
    const score = (bit: number) => {
      if (auditedCount === 0) return 100;
      let bad = 0;
      for (let n = 0; n < this.size; n++) if (audited(n) && ((this.flags[n] as number) & bit) !== 0) bad++;
      return Math.floor((100 * (auditedCount - bad)) / auditedCount);
    };
    const categories: AuditCategory[] = CATEGORIES.map((id, i) => {
      const of = issues.filter((issue) => issue.category === id);
      const tally = (priority: Priority) => of.filter((issue) => issue.priority === priority).length;
      return {
        id,
        score: score(1 << (1 + i)),
        errors: tally('error'),
        warnings: tally('warning'),
        notices: tally('notice'),
      };
    });
    return { issues, healthScore: score(1), categories };
  }
}

/** By URL, then by the order found (the order of `issuesOf`'s stable sort). */
function before(a: { url: string; seq: number }, b: { url: string; seq: number }): boolean {
  return a.url < b.url || (a.url === b.url && a.seq < b.seq);
}
