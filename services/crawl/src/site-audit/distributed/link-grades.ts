/**
 * A distributed audit's link rows graded when the report is made, a batch at a time
 * (docs/decisions/0492-distributed-audit-report-in-bounded-memory.md): a row carries its verdict, or
 * names the audit's page that answers for it, whose stored fetch is looked up for the batch; a row
 * its inserter never finished (or whose page was not fetched) is checked here. Holds one batch.
 */
import { gradeLink } from '../../checking/grade.js';
import type { CheckedLink } from '../../model.js';
import { pageOf } from '../../page/page-url.js';
import type { PageFrontier, RowResult } from './page-frontier.js';
import type { JobRuntime, LinkRowResult, PageRowResult } from './page-worker.js';

/** Link rows graded at once (the pages they link looked up together). */
export const GRADE_BATCH = 500;

/** The rows' links graded, in the rows' order; a link left unchecked (out of time) is left out. */
export async function gradeLinkRows(
  frontier: PageFrontier,
  job: JobRuntime,
  rows: readonly RowResult[],
): Promise<CheckedLink[]> {
  const links = rows.map((row) => JSON.parse(row.result) as LinkRowResult);
  const answeringPage = (row: LinkRowResult) =>
    row.record ? undefined : (row.page ?? (row.link.type === 'internal' ? pageOf(row.link.url, job.site) : undefined));
  const pages = [...new Set(links.flatMap((row) => answeringPage(row) ?? []))];
  const outcomes = new Map<string, PageRowResult['outcome']>();
  for (const row of await frontier.resultsOf(job.jobId, pages))
    if (row.done) outcomes.set(row.url, (JSON.parse(row.result) as PageRowResult).outcome);
  const graded = await Promise.all(
    links.map(async (row) => {
      if (row.record) return row.record;
      const page = answeringPage(row);
      const outcome = page === undefined ? undefined : outcomes.get(page);
      if (outcome) return gradeLink(row.link, outcome, undefined, job.rules.accepts).record;
      // A page not fetched (robots.txt, a redirect read elsewhere, the budget) or an inserter that died.
      if (job.signal.aborted) return undefined;
      const checked = await job.checker.check(row.link.url).catch(() => undefined);
      return checked && gradeLink(row.link, checked, undefined, job.rules.accepts).record;
    }),
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
