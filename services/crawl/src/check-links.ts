import { setMaxListeners } from 'node:events';
import { parseTargetUrl } from '@webutil/kit';
import { type CheckerDeps, LinkChecker } from './checking/checker.js';
import { type Graded, scoreCard } from './checking/grade.js';
import { verdictFor } from './checking/verdict.js';
import type { PageCheck } from './model.js';
import { type PageReadDeps, readPageLinks } from './page/fetch.js';
import { normalizePageUrl } from './page/page-url.js';
import { StylesheetReader, withStylesheetLinks } from './page/stylesheets.js';
import { compileScan, inScan, type ScanOptions } from './scan-options.js';

export interface PageCheckOptions {
  /** Verify each distinct #fragment against its page's ids and anchor names. */
  checkFragments: boolean;
  /** The request's LinkOptions, checked (scan-options.ts). */
  scan?: ScanOptions;
}

export interface PageCheckDeps extends CheckerDeps, PageReadDeps {
  /**
   * Links checked at most, in document order (in-page anchors, which cost no request, do not
   * count); `truncated` says when there were more.
   */
  checkCap: number;
  /** Time for checking the links; what is unfinished then is dropped and `truncated` set. */
  budgetMs: number;
}

/** CheckLinks (POST /v1/broken-links): every link of one page checked and graded. */
export async function checkLinks(
  rawUrl: string,
  options: PageCheckOptions,
  deps: PageCheckDeps,
  signal: AbortSignal,
): Promise<PageCheck> {
  const scope = compileScan(options.scan ?? {}, parseTargetUrl(rawUrl), true);
  const { url, res, collector } = await readPageLinks(rawUrl, deps, signal, {
    byDocument: true,
    resources: scope.resources,
    originHeaders: scope.originHeaders,
  });
  const budget = AbortSignal.timeout(deps.budgetMs);
  const scan = AbortSignal.any([signal, budget]);
  setMaxListeners(0, scan); // every request in flight listens to it
  const checker = new LinkChecker(deps, scan, Date.now() + deps.budgetMs, {
    soft404: true,
    originHeaders: scope.originHeaders,
  });
  // Links the options leave out are not part of the scan: not checked, counted or reported.
  const onPage = collector.links.filter((link) => inScan(link, scope));
  // The site's stylesheets are read first (a GET that also answers their check), their URLs added.
  const sheets = new StylesheetReader((u) => checker.fetchStylesheet(u), deps.linksPerPage, true, scan);
  const inSheets = scope.resources ? await sheets.linksOf(onPage) : [];
  if (signal.aborted) throw signal.reason;
  const found = withStylesheetLinks(
    onPage,
    inSheets.filter((link) => inScan(link, scope)),
  );
  let requests = 0;
  const toCheck = found.filter((link) => link.type === 'anchor' || requests++ < deps.checkCap);
  const sources = {
    page: normalizePageUrl(res.url),
    pageTargets: collector.targets,
    outcomeOf: (link: string) => checker.check(link),
    targetsOf: async (link: string) => (await checker.checkWithTargets(link)).targets,
  };
  const verdicts = await Promise.all(
    toCheck.map((link) =>
      verdictFor(link, sources, options.checkFragments, scope.accepts, scope.fragments).catch((err: unknown) => {
        if (signal.aborted || !scan.aborted) throw err;
        return undefined; // out of time: not checked, so not reported
      }),
    ),
  );
  if (signal.aborted) throw signal.reason;
  const links = verdicts.filter((v): v is Graded => v !== undefined);
  return {
    url: url.href,
    scannedAt: new Date().toISOString(),
    totalLinks: found.length,
    checkedLinks: links.length,
    truncated: links.length < found.length || collector.truncated || res.truncated,
    ...scoreCard(links),
    links: links.map((l) => l.record),
  };
}
