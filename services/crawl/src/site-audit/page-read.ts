import type { SafeResponse } from '@webutil/kit';
import type { FoundLink } from '../model.js';
import type { PageTargets, StoredTargets } from '../page/fragments.js';
import { LinkCollector } from '../page/links.js';
import { pageFormat, pageSink } from '../page/page-format.js';
import { parseStream } from '../page/parse-stream.js';
import { type PageFacts, PageFactsReader } from './page-facts.js';

/** How an audit reads a page's body. */
export interface PageReadOptions {
  /** Most distinct links read from the page. */
  linksPerPage: number;
  /** Images, scripts, stylesheets and the like are links too. */
  resources: boolean;
  /** Characters of the text returned as its sample (soft-404 and bot-wall recognition). */
  sampleChars: number;
}

/** What one parse of a page's body gives an audit. */
export interface PageRead {
  links: FoundLink[];
  targets: PageTargets;
  facts: PageFacts;
  sample: string;
}

/** A page read as a thread hands it back: its targets as stored. */
export interface PageReadMessage extends Omit<PageRead, 'targets'> {
  targets: StoredTargets;
}

/** What a read needs of a response: a thread is given its body as the chunks that came. */
export type ReadableResponse = Pick<SafeResponse, 'url' | 'headers' | 'timeToHeadersMs' | 'body' | 'dump'>;

/** Reads a page's body (HTML, or Markdown rendered to it) for its links, targets and facts in one parse. */
export async function readAuditPage(res: ReadableResponse, options: PageReadOptions): Promise<PageRead> {
  const collector = new LinkCollector(new URL(res.url), options.linksPerPage, true, options.resources);
  const reader = new PageFactsReader(collector, res);
  const sample = await parseStream(res, pageSink(pageFormat(res) ?? 'html', reader), options.sampleChars);
  return { links: collector.links, targets: collector.targets, facts: reader.facts, sample };
}
