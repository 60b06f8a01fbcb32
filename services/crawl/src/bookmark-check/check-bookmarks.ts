import { setMaxListeners } from 'node:events';
import zlib from 'node:zlib';
import type { BookmarkEntry, FolderSummary } from '@webutil/proto/webutil/crawl/v1/crawl';
import { LinkChecker } from '../checking/checker.js';
import { type CheckOutcome, type Graded, gradeLink, scoreCard } from '../checking/grade.js';
import type { CrawlJob } from '../jobs/store.js';
import type { BookmarkCheckResult, CheckedBookmark, CrawlProgress, CrawlResult, FoundLink } from '../model.js';
import { CrawlFailure } from '../model.js';
import type { CrawlDeps } from '../site-crawl/crawler.js';

/**
 * A bookmark check: every distinct URL of a bookmark list checked once by the link checker (HEAD
 * then GET, Retry-After, soft 404s, bot walls, the process-wide per-host throttle), within the
 * crawl's time budget; each bookmark then graded by its URL's check.
 */

/** What a bookmark check job works on (its packed input). */
export interface BookmarkCheckInput {
  bookmarks: BookmarkEntry[];
  totalBookmarks: number;
  /** The bookmark service's kept file, for cleaned copies. */
  fileId: string;
  sourceFormat: string;
}

/** Bookmarks checked at most (the bookmark service lists no more). */
export const MAX_BOOKMARKS = 5_000;
/** A URL this long or longer is not checked. */
const MAX_URL_CHARS = 4_096;
/** Folders summarised at most (one row per distinct folder path, first seen first). */
const MAX_FOLDERS = 5_000;

export const packInput = (input: BookmarkCheckInput): Buffer => zlib.gzipSync(JSON.stringify(input), { level: 1 });
export const unpackInput = (packed: Buffer): BookmarkCheckInput =>
  JSON.parse(zlib.gunzipSync(packed).toString('utf8')) as BookmarkCheckInput;

/** A list's progress in the crawl's progress shape: linksFound bookmarks, linksTotal URLs, linksChecked. */
export function listProgress(bookmarks: number, urls: number, checked: number, phase: string, message: string) {
  return {
    phase,
    message,
    sitemapFound: false,
    sitemapUrlCount: 0,
    pagesCrawled: 0,
    pagesDiscovered: 0,
    pagesCap: 0,
    linksFound: bookmarks,
    linksChecked: checked,
    linksTotal: urls,
  } satisfies CrawlProgress;
}

/** The identity of a URL for duplicates: its WHATWG serialisation (case of scheme and host, default port). */
function identity(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

function checkable(url: string): URL | undefined {
  if (url.length >= MAX_URL_CHARS) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function linkOf(url: string, title: string): FoundLink {
  const parsed = checkable(url);
  let scheme = '';
  try {
    scheme = new URL(url).protocol.replace(/:$/, '');
  } catch {}
  return {
    url: parsed ? parsed.href : url,
    originalHref: url,
    text: title,
    rel: undefined,
    type: parsed ? 'external' : scheme === 'mailto' ? 'mailto' : scheme === 'tel' ? 'tel' : 'other',
    scheme,
    // A bookmark is a link the way an anchor is: checked, never followed.
    element: 'a',
  };
}

/** The worker's task for a `bookmarks` job (jobs/run.ts). */
export async function checkBookmarkList(
  job: CrawlJob,
  deps: CrawlDeps,
  onProgress: (p: CrawlProgress) => void,
  signal: AbortSignal,
): Promise<CrawlResult> {
  if (!job.input) throw new CrawlFailure('invalid_job', 'the bookmark check has no list');
  const input = unpackInput(job.input);
  return { kind: 'bookmarks', result: await checkBookmarks(input, deps, onProgress, signal) };
}

export async function checkBookmarks(
  input: BookmarkCheckInput,
  deps: CrawlDeps,
  onProgress: (p: CrawlProgress) => void,
  signal: AbortSignal,
): Promise<BookmarkCheckResult> {
  const bookmarks = input.bookmarks.slice(0, MAX_BOOKMARKS);
  const firstOf = new Map<string, number>();
  const duplicateOf: (number | undefined)[] = [];
  /** Distinct URLs in first-seen order, with the link the first bookmark makes of it. */
  const urls = new Map<string, FoundLink>();
  bookmarks.forEach((b, index) => {
    const key = identity(b.url);
    const first = firstOf.get(key);
    duplicateOf.push(first);
    if (first === undefined) firstOf.set(key, index);
    const link = linkOf(b.url, b.title);
    if (link.type === 'external' && !urls.has(link.url)) urls.set(link.url, link);
  });
  const total = urls.size;
  let checked = 0;
  const report = (phase: string, message: string) =>
    onProgress(listProgress(bookmarks.length, total, checked, phase, message));
  report('checking', `Checking ${total} distinct URLs of ${bookmarks.length} bookmarks`);

  const budgetMs = deps.limits.timeBudgetMs;
  const budget = AbortSignal.timeout(budgetMs);
  const scan = AbortSignal.any([signal, budget]);
  setMaxListeners(0, scan); // every request in flight listens to it
  const checker = new LinkChecker(deps, scan, Date.now() + budgetMs);
  const outcomes = new Map<string, { graded: Graded; outcome?: CheckOutcome }>();
  const checkOne = async (link: FoundLink) => {
    try {
      const outcome = await checker.check(link.url);
      outcomes.set(link.url, { graded: gradeLink(link, outcome), outcome });
    } catch (err) {
      if (signal.aborted || !scan.aborted) throw err;
      // Out of time: not checked.
    } finally {
      checked++;
      report('checking', `Checked ${checked} of ${total} distinct URLs`);
    }
  };
  await byHost([...urls.values()], (host) => deps.throttle.limitOf(host), checkOne);
  if (signal.aborted) throw signal.reason;

  const records: CheckedBookmark[] = bookmarks.map((b, index) => {
    const link = linkOf(b.url, b.title);
    const found = link.type === 'external' ? outcomes.get(link.url) : undefined;
    const graded =
      found?.graded ??
      (link.type === 'external' ? undefined : b.url.length >= MAX_URL_CHARS ? undefined : gradeLink(link, undefined));
    const record = graded?.record;
    const outcome = found?.outcome;
    const permanent =
      record?.redirected === true &&
      (outcome?.firstStatus === 301 || outcome?.firstStatus === 308) &&
      record.statusCode !== undefined &&
      record.statusCode >= 200 &&
      record.statusCode < 300 &&
      record.severity !== 'broken';
    return {
      index,
      title: b.title,
      url: b.url,
      folderPath: b.folderPath,
      addedAt: b.addedAt,
      statusCode: record?.statusCode,
      statusText: record?.statusText ?? 'Not checked',
      severity: record?.severity ?? 'info',
      reason:
        record?.reason ??
        (b.url.length >= MAX_URL_CHARS
          ? `not checked: the URL is longer than ${MAX_URL_CHARS - 1} characters`
          : `not checked: the ${Math.round(budgetMs / 1000)} s time budget ended first`),
      finalUrl: record?.redirected ? record.finalUrl : undefined,
      permanentRedirect: permanent,
      duplicateOf: duplicateOf[index],
    };
  });
  const card = scoreCard([...outcomes.values()].map((o) => o.graded));
  const timedOut = outcomes.size < total;
  report('done', timedOut ? `Stopped at the ${Math.round(budgetMs / 1000)} s time budget` : 'Done');
  return {
    scannedAt: new Date().toISOString(),
    sourceFormat: input.sourceFormat,
    totalBookmarks: input.totalBookmarks,
    checkedBookmarks: bookmarks.length,
    uniqueUrls: outcomes.size,
    truncated: input.totalBookmarks > bookmarks.length || timedOut,
    healthScore: card.healthScore,
    grade: card.grade,
    summary: summarise(records),
    statusBreakdown: card.statusBreakdown,
    bookmarks: records,
  };
}

/**
 * Most checks of one list job in flight to one host, whatever the throttle allows a crawl (its
 * HOST_CONCURRENCY_MAX, 64): a list names its hosts and pays per block of URLs rather than per
 * page found, so it gets a lower ceiling (decision 0293).
 */
export const LIST_HOST_CEILING = 8;

/**
 * Runs `check` over links host by host: a host's first link alone (its answer may need the host's
 * not-found page, fetched once), then at most twice the host's current throttle limit at a time,
 * and never more than LIST_HOST_CEILING.
 * Queued all at once, 5,000 links to one host would stand in the throttle's queue for that host
 * ahead of the not-found probe of the first answer, and no check could end before the budget.
 */
export function byHost(
  links: readonly FoundLink[],
  limitOf: (host: string) => number,
  check: (link: FoundLink) => Promise<void>,
): Promise<void> {
  const queues = new Map<string, FoundLink[]>();
  for (const link of links) {
    const host = new URL(link.url).host;
    const queue = queues.get(host);
    if (queue) queue.push(link);
    else queues.set(host, [link]);
  }
  return new Promise<void>((resolve, reject) => {
    let pending = links.length;
    if (pending === 0) return resolve();
    const running = new Map<string, number>();
    const answered = new Set<string>();
    const pump = (host: string) => {
      const queue = queues.get(host) as FoundLink[];
      const window = answered.has(host) ? Math.min(LIST_HOST_CEILING, Math.max(2, 2 * limitOf(host))) : 1;
      while (queue.length > 0 && (running.get(host) ?? 0) < window) {
        const link = queue.shift() as FoundLink;
        running.set(host, (running.get(host) ?? 0) + 1);
        check(link).then(() => {
          running.set(host, (running.get(host) ?? 1) - 1);
          answered.add(host);
          if (--pending === 0) resolve();
          else pump(host);
        }, reject);
      }
    };
    for (const host of queues.keys()) pump(host);
  });
}

type Tally = Omit<FolderSummary, 'folderPath'> & { duplicates: number };

const bucketOf = (b: CheckedBookmark): 'ok' | 'redirected' | 'broken' | 'warnings' | 'unchecked' =>
  b.severity === 'broken'
    ? 'broken'
    : b.finalUrl !== undefined
      ? 'redirected'
      : b.severity === 'warning'
        ? 'warnings'
        : b.severity === 'info'
          ? 'unchecked'
          : 'ok';

/** Counts by outcome, over all bookmarks and per folder (a bookmark counts once, in its own folder). */
export function summarise(records: readonly CheckedBookmark[]): BookmarkCheckResult['summary'] {
  const empty = (): Tally => ({ total: 0, ok: 0, redirected: 0, broken: 0, warnings: 0, unchecked: 0, duplicates: 0 });
  const all = empty();
  const folders = new Map<string, { path: string[]; tally: Tally }>();
  for (const b of records) {
    const bucket = bucketOf(b);
    const key = JSON.stringify(b.folderPath);
    let folder = folders.get(key);
    if (!folder && folders.size < MAX_FOLDERS) {
      folder = { path: b.folderPath, tally: empty() };
      folders.set(key, folder);
    }
    for (const t of folder ? [all, folder.tally] : [all]) {
      t.total++;
      t[bucket]++;
      if (b.duplicateOf !== undefined) t.duplicates++;
    }
  }
  const { total: _total, ...counts } = all;
  return {
    ...counts,
    byFolder: [...folders.values()].map((f) => ({ folderPath: f.path, ...f.tally })),
  };
}

/** What a cleaned copy leaves out and rewrites, from a finished check. */
export function editsOf(
  result: BookmarkCheckResult,
  options: { dropBroken: boolean; dropDuplicates: boolean; updateRedirects: boolean },
): { drop: number[]; rewrites: { index: number; url: string }[] } {
  const drop: number[] = [];
  const rewrites: { index: number; url: string }[] = [];
  for (const b of result.bookmarks) {
    if ((options.dropBroken && b.severity === 'broken') || (options.dropDuplicates && b.duplicateOf !== undefined))
      drop.push(b.index);
    else if (options.updateRedirects && b.permanentRedirect && b.finalUrl)
      rewrites.push({ index: b.index, url: b.finalUrl });
  }
  return { drop, rewrites };
}
