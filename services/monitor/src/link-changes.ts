/**
 * What a broken-links crawl run found against the previous one: links newly broken (alert) and
 * links fixed, either answering again or no longer linked. A link missing from a crawl that hit its
 * page or link cap may only have gone unchecked, so it is not called fixed then.
 */

/** A link record of a crawl result (or of a single-page scan, without sources). */
export interface LinkRecord {
  url: string;
  severity: string;
  statusCode: number | null;
  statusText: string;
  sources?: string[];
  sourceCount?: number;
}

/** The fields of a finished broken-links crawl's `result` a comparison reads. */
export interface LinkCrawlResult {
  links: LinkRecord[];
  summary: { broken: number };
  truncatedPages?: boolean;
  truncatedLinks?: boolean;
  truncated?: boolean;
}

export interface BrokenLink {
  url: string;
  statusCode: number | null;
  statusText: string;
  /** A few pages it is on (the crawl's sample). */
  sources: string[];
  sourceCount: number;
}

export interface FixedLink {
  url: string;
  /** answers: it is checked again and is not broken; removed: no page links it any more. */
  how: 'answers' | 'removed';
  statusCode: number | null;
}

export interface LinkChanges {
  kind: 'broken-links-crawl';
  broken: number;
  newlyBroken: BrokenLink[];
  fixed: FixedLink[];
  alert: boolean;
  lines: string[];
}

/** Links listed by name in an alert's lines; the rest are counted. */
const LISTED = 10;

const isBroken = (link: LinkRecord) => link.severity === 'broken';

/** Compares a run's crawl result with the previous run's (undefined: every broken link is new). */
export function compareLinkCrawls(previous: LinkCrawlResult | undefined, current: LinkCrawlResult): LinkChanges {
  const before = new Map((previous?.links ?? []).map((link) => [link.url, link]));
  const after = new Map(current.links.map((link) => [link.url, link]));
  const newlyBroken: BrokenLink[] = [];
  for (const link of after.values()) {
    if (!isBroken(link)) continue;
    const then = before.get(link.url);
    if (then && isBroken(then)) continue;
    newlyBroken.push({
      url: link.url,
      statusCode: link.statusCode,
      statusText: link.statusText,
      sources: link.sources ?? [],
      sourceCount: link.sourceCount ?? link.sources?.length ?? 0,
    });
  }
  const capped = Boolean(current.truncatedPages || current.truncatedLinks || current.truncated);
  const fixed: FixedLink[] = [];
  for (const then of before.values()) {
    if (!isBroken(then)) continue;
    const now = after.get(then.url);
    if (now && !isBroken(now)) fixed.push({ url: then.url, how: 'answers', statusCode: now.statusCode });
    else if (!now && !capped) fixed.push({ url: then.url, how: 'removed', statusCode: null });
  }

  const lines: string[] = [];
  if (newlyBroken.length) {
    lines.push(`${newlyBroken.length} newly broken link${newlyBroken.length === 1 ? '' : 's'}:`);
    for (const link of newlyBroken.slice(0, LISTED)) {
      const where = link.sources[0]
        ? ` on ${link.sources[0]}${link.sourceCount > 1 ? ` and ${link.sourceCount - 1} more` : ''}`
        : '';
      lines.push(`- ${link.url} (${link.statusCode ?? link.statusText})${where}`);
    }
    if (newlyBroken.length > LISTED) lines.push(`- and ${newlyBroken.length - LISTED} more`);
  }
  if (fixed.length) lines.push(`${fixed.length} link${fixed.length === 1 ? '' : 's'} fixed since the last run.`);
  return {
    kind: 'broken-links-crawl',
    broken: current.links.filter(isBroken).length,
    newlyBroken,
    fixed,
    alert: newlyBroken.length > 0,
    lines,
  };
}
