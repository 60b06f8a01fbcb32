/**
 * A crawl's progress in words: "Checked 640 of 1,120 links on 48 pages; 52 more pages to read".
 * Links are the distinct links of the result (a URL without its fragment, in-page anchors one
 * each); pages are the pages read.
 */

/** The counts a message tells. */
export interface CrawlCounts {
  /** A broken-link crawl (links are checked), not an extract crawl. */
  checking: boolean;
  pagesCrawled: number;
  /** Pages known and under the cap, not read yet. */
  pagesToRead: number;
  linksFound: number;
  linksChecked: number;
  /** Distinct links kept for checking. */
  linksTotal: number;
}

/** Numbers in progress messages: 1,120. */
const grouped = (n: number) => n.toLocaleString('en-US');
export const nPages = (n: number) => `${grouped(n)} ${n === 1 ? 'page' : 'pages'}`;
export const nLinks = (n: number) => `${grouped(n)} ${n === 1 ? 'link' : 'links'}`;

const checkedOfTotal = (c: CrawlCounts) => `${grouped(c.linksChecked)} of ${nLinks(c.linksTotal)}`;

/** While pages are read. */
export function crawlingMessage(c: CrawlCounts): string {
  const toRead = c.pagesToRead;
  const more = toRead > 0 ? `; ${grouped(toRead)} more ${toRead === 1 ? 'page' : 'pages'} to read` : '';
  const found = c.checking ? `Checked ${checkedOfTotal(c)}` : `Found ${nLinks(c.linksFound)}`;
  return `${found} on ${nPages(c.pagesCrawled)}${more}`;
}

/** Once every page is read, while links are still checked. */
export function checkingMessage(c: CrawlCounts): string {
  return `All ${nPages(c.pagesCrawled)} read; checked ${checkedOfTotal(c)}`;
}

/** How the crawl ended: done, or stopped by its time budget (in seconds). */
export function endMessage(stoppedAtSeconds: number | undefined): string {
  return stoppedAtSeconds === undefined ? 'Done' : `Stopped at the ${stoppedAtSeconds} s time budget`;
}
