import { setMaxListeners } from 'node:events';
import { parseTargetUrl } from '@webutil/kit';
import type { CheckLinksResponse } from '@webutil/proto/webutil/crawl/v1/crawl';
import { normalizePageUrl } from './frontier.js';
import { scoreCard, type Graded } from './grade.js';
import { readPageLinks } from './link-extract.js';
import { LinkChecker, type CheckerDeps } from './link-checker.js';
import { verdictFor } from './link-verdict.js';

export interface PageCheckDeps extends CheckerDeps {
  /** Most links read from the page (as link-extract: 5,000). */
  linkCap: number;
  /** Links checked at most, in document order; `truncated` says when there were more. */
  checkCap: number;
  /** Time for checking the links; what is unfinished then is dropped and `truncated` set. */
  budgetMs: number;
}

/** POST /v1/broken-links: every link of one page checked and graded. */
export async function checkPageLinks(rawUrl: string, deps: PageCheckDeps, signal: AbortSignal): Promise<CheckLinksResponse> {
  const url = parseTargetUrl(rawUrl);
  const { res, collector } = await readPageLinks(url, { ...deps, timeoutMs: deps.pageTimeoutMs }, signal);
  const found = collector.links;
  const budget = AbortSignal.timeout(deps.budgetMs);
  const scan = AbortSignal.any([signal, budget]);
  setMaxListeners(0, scan); // every request in flight listens to it
  const checker = new LinkChecker(deps, scan, Date.now() + deps.budgetMs);
  const sources = {
    page: normalizePageUrl(res.url),
    pageTargets: collector.targets,
    outcomeOf: (link: string) => checker.check(link),
    targetsOf: async (link: string) => (await checker.checkWithTargets(link)).targets,
  };
  const verdicts = await Promise.all(
    found.slice(0, deps.checkCap).map((link) =>
      verdictFor(link, sources).catch((err: unknown) => {
        if (signal.aborted || !scan.aborted) throw err;
        return undefined; // out of time: not checked, so not reported
      }),
    ),
  );
  const links = verdicts.filter((v): v is Graded => v !== undefined);
  const card = scoreCard(links);
  return {
    url: url.href,
    scannedAt: new Date().toISOString(),
    totalLinks: found.length,
    checkedLinks: links.length,
    truncated: links.length < found.length || collector.full || res.truncated,
    ...card,
    links: links.map((l) => l.record),
  };
}
