/**
 * A distributed audit's link rows graded when the report is made, a batch at a time
 * (docs/decisions/0492-distributed-audit-report-in-bounded-memory.md): a row carries its verdict, or
 * names the audit's page that answers for it, whose stored fetch is looked up for the batch; a row
 * its inserter never finished (or whose page was not fetched) is checked here. With checkFragments,
 * a link to the site is graded again with the fragments every page linked it with, against the
 * stored anchors of its page (a page not audited is read, as the one-worker crawl reads it).
 */
import { type CheckOutcome, gradeLink } from '../../checking/grade.js';
import { verdictFor } from '../../checking/verdict.js';
import type { CheckedLink } from '../../model.js';
import { PageTargets, type StoredTargets } from '../../page/fragments.js';
import { MAX_FRAGMENTS_PER_LINK } from '../../page/links.js';
import type { PageFrontier, RowResult } from './page-frontier.js';
import { anchorsOf, type JobRuntime, type LinkRowResult, linkKey, type PageRowResult } from './page-worker.js';

/** Link rows graded at once (the pages they link looked up together). */
export const GRADE_BATCH = 500;

/**
 * The fragments of each link, read from the job's fragment rows in one pass beside the link rows:
 * both are in key order, so `of` is asked for keys in ascending order and never goes back.
 */
export class FragmentCursor {
  private batch: RowResult[] = [];
  private at = 0;
  private ended = false;

  constructor(private readonly rows: AsyncGenerator<RowResult[]>) {}

  /** The fragments `key`'s link was found with, at most MAX_FRAGMENTS_PER_LINK. */
  async of(key: string): Promise<string[]> {
    const fragments: string[] = [];
    for (;;) {
      if (this.at >= this.batch.length) {
        if (this.ended) return fragments;
        const next = await this.rows.next();
        if (next.done) {
          this.ended = true;
          return fragments;
        }
        this.batch = next.value;
        this.at = 0;
        continue;
      }
      const row = (this.batch[this.at] as RowResult).url;
      // `<type> <url> <fragment>`: the link key ends at the second space.
      const split = row.indexOf(' ', row.indexOf(' ') + 1);
      const rowKey = row.slice(0, split);
      if (rowKey > key) return fragments;
      this.at++;
      if (rowKey === key && fragments.length < MAX_FRAGMENTS_PER_LINK) fragments.push(row.slice(split + 1));
    }
  }
}

/** The rows' links graded, in the rows' order; a link left unchecked (out of time) is left out. */
export async function gradeLinkRows(
  frontier: PageFrontier,
  job: JobRuntime,
  rows: readonly RowResult[],
  fragments?: FragmentCursor,
): Promise<CheckedLink[]> {
  const links = rows.map((row) => JSON.parse(row.result) as LinkRowResult);
  const named: string[][] = [];
  for (const row of links)
    named.push(fragments && row.link.type === 'internal' ? await fragments.of(linkKey(row.link)) : []);
  const targetOf = (row: LinkRowResult) => (row.link.type === 'internal' ? job.pages.of(row.link.url) : undefined);
  const answeringPage = (row: LinkRowResult) => (row.record ? undefined : (row.page ?? targetOf(row)));
  const pages = new Set<string>();
  links.forEach((row, i) => {
    for (const page of [answeringPage(row), named[i]?.length ? targetOf(row) : undefined])
      if (page !== undefined) pages.add(page);
  });
  // A page fetched (done with an outcome) answers for links to it; one robots.txt refused does not.
  const outcomes = new Map<string, Omit<CheckOutcome, 'targets'>>();
  for (const row of await frontier.resultsOf(job.jobId, [...pages])) {
    const { outcome } = JSON.parse(row.result) as PageRowResult;
    if (row.done && outcome) outcomes.set(row.url, outcome);
  }
  const withAnchors = links.flatMap((row, i) => {
    const target = named[i]?.length ? targetOf(row) : undefined;
    return target !== undefined && outcomes.has(target) ? [target] : [];
  });
  const anchors = new Map<string, string>();
  for (const row of await frontier.resultsOf(anchorsOf(job.jobId), [...new Set(withAnchors)]))
    anchors.set(row.url, row.result);

  const plain = async (row: LinkRowResult): Promise<CheckedLink | undefined> => {
    if (row.record) return row.record;
    const page = answeringPage(row);
    const outcome = page === undefined ? undefined : outcomes.get(page);
    if (outcome) return gradeLink(row.link, outcome, undefined, job.rules.accepts).record;
    // A page not fetched (robots.txt, a redirect read elsewhere, the budget) or an inserter that died.
    if (job.signal.aborted) return undefined;
    const checked = await job.checker.check(row.link.url).catch(() => undefined);
    return checked && gradeLink(row.link, checked, undefined, job.rules.accepts).record;
  };
  const withFragments = async (row: LinkRowResult, names: string[]): Promise<CheckedLink | undefined> => {
    const target = targetOf(row);
    const fetched = target === undefined ? undefined : outcomes.get(target);
    try {
      const graded = await verdictFor(
        { ...row.link, fragments: names },
        {
          page: '',
          pageTargets: new PageTargets(),
          outcomeOf: async (url) => fetched ?? row.outcome ?? job.checker.check(url),
          targetsOf: async (url) => {
            if (!fetched) return (await job.checker.checkWithTargets(url)).targets;
            const stored = target === undefined ? undefined : anchors.get(target);
            // A page fetched but not read as HTML has no anchors to check against.
            return stored === undefined ? undefined : PageTargets.fromStored(JSON.parse(stored) as StoredTargets);
          },
        },
        true,
        job.rules.accepts,
        job.rules.fragments,
      );
      return graded.record;
    } catch (err) {
      if (job.signal.aborted) return plain(row); // out of time: the verdict without fragments stands
      throw err;
    }
  };
  const graded = await Promise.all(
    links.map((row, i) => (named[i]?.length ? withFragments(row, named[i] as string[]) : plain(row))),
  );
  return graded.filter((link) => link !== undefined);
}

/** The link types a URL may be a row of in the audit (a canonical target's status is any of them). */
const HTTP_LINK_TYPES = ['internal', 'external', 'anchor', 'other'] as const;

/** The checked status of each of `urls` linked in the audit, graded as `gradeLinkRows` grades. */
export async function linkStatuses(
  frontier: PageFrontier,
  job: JobRuntime,
  linkSpace: string,
  urls: readonly string[],
): Promise<Map<string, number | undefined>> {
  const keys = urls.flatMap((url) => HTTP_LINK_TYPES.map((type) => `${type} ${url}`));
  const statuses = new Map<string, number | undefined>();
  for (let i = 0; i < keys.length; i += GRADE_BATCH) {
    const rows = await frontier.resultsOf(linkSpace, keys.slice(i, i + GRADE_BATCH));
    for (const link of await gradeLinkRows(frontier, job, rows)) statuses.set(link.url, link.statusCode);
  }
  return statuses;
}
