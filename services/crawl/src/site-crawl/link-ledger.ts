/**
 * The links of one site crawl: each unique link kept once with its sources, under the crawl's caps
 * (links checked, links reported, in-page anchors) and the result's memory budget; links past a cap
 * are counted as hashes, not kept, and the cap that left them out is remembered for the result.
 */
import type { Graded } from '../checking/grade.js';
import type { CrawlLimits } from '../config.js';
import type { FoundLink } from '../model.js';
import { hash53 } from '../page/hash.js';
import { addFragment, isCounted, linkBytes } from '../page/links.js';
import { inScan, type ScanRules } from '../scan-options.js';

/**
 * UTF-8 bytes of strings (link fields, sample sources) a result holds at most: it must fit a gRPC
 * reply (64 MiB) and, gzip'd, a MongoDB document (16 MB). Links past it are counted, not reported.
 */
export const MAX_RESULT_BYTES = 12 * 1024 * 1024;

/** Why links were left out besides the check cap (crawl.proto's links_cut_by). */
export type LinksCutReason = 'anchor_cap' | 'memory' | 'url_length' | 'time_budget';

export interface LinkEntry<Visit> {
  link: FoundLink;
  sources: string[];
  sourceCount: number;
  verdict?: Promise<Graded | undefined>;
  /** The page it was first found on, whose targets answer a link back to that page's fragments. */
  firstPage?: Visit;
}

type LedgerLimits = Pick<CrawlLimits, 'reportedLinks' | 'checkedLinks' | 'countedLinks' | 'sources'>;

export class LinkLedger<Visit> {
  readonly entries = new Map<string, LinkEntry<Visit>>();
  /** Unique links found, by the rule of the kind's result (see CrawlProgress.linksFound). */
  found = 0;
  /** Links dropped by pages' readers as too long to report (see MAX_HREF). */
  tooLong = 0;
  /** Whether the link-check cap left a link unchecked: the spec's truncatedLinks. */
  checkCapReached = false;
  /** Of `entries`, the ones a check requests (not in-page anchors): what the check cap bounds. */
  private requested = 0;
  /** Of `entries`, the in-page anchors (bounded apart, by the reported-links cap). */
  private anchors = 0;
  /** Links seen beyond a cap: counted (as hashes, to bound memory), not kept. */
  private readonly uncounted = new Set<number>();
  /** Links the options left out, as hashes of their keys (so each is matched once). */
  private readonly outOfScan = new Set<number>();
  /** Of MAX_RESULT_BYTES, what the links and sources kept have taken. */
  private resultBytes = 0;
  /** The other caps that left links out. */
  private readonly cutBy = new Set<LinksCutReason>();

  constructor(
    private readonly limits: LedgerLimits,
    /** A broken-link crawl (links are checked), not an extract crawl. */
    private readonly checking: boolean,
    private readonly checkFragments: boolean,
  ) {}

  /** Unique links known, kept or only counted. */
  get uniqueTotal(): number {
    return this.entries.size + this.uncounted.size;
  }

  /** Whether a link was left out by a cap or for its length (an extract crawl's `truncated`). */
  get cut(): boolean {
    return this.uncounted.size > 0 || this.tooLong > 0;
  }

  /** Whether the options keep a link in the crawl; each left-out link is matched once. */
  inScan(link: FoundLink, rules: ScanRules): boolean {
    const key = `${link.type} ${link.url}`;
    if (this.entries.has(key)) return true;
    const hash = hash53(key);
    if (this.outOfScan.has(hash)) return false;
    if (inScan(link, rules)) return true;
    if (this.outOfScan.size < this.limits.countedLinks) this.outOfScan.add(hash);
    return false;
  }

  /**
   * Records a link found on `visit`'s page (`source`). Answers the entry when the link is new and
   * kept, for a broken-link crawl to check; undefined when it was known or left out.
   */
  add(link: FoundLink, source: string, visit: Visit): LinkEntry<Visit> | undefined {
    const key = `${link.type} ${link.url}`;
    const known = this.entries.get(key);
    if (known) {
      for (const fragment of link.fragments ?? []) addFragment(known.link, fragment);
      // First linked without a fragment, now with one: it is verified at the end too.
      if (link.fragments?.length && this.checkFragments && this.checking) known.firstPage ??= visit;
      known.sourceCount++;
      if (known.sources.length < this.limits.sources && this.spend(Buffer.byteLength(source)))
        known.sources.push(source);
      return undefined;
    }
    // In-page anchors cost no request: they do not take from the check cap, but have a cap of their own.
    const anchor = this.checking && link.type === 'anchor';
    const [kept, cap] = !this.checking
      ? [this.entries.size, this.limits.reportedLinks]
      : anchor
        ? [this.anchors, this.limits.reportedLinks]
        : [this.requested, this.limits.checkedLinks];
    if (kept >= cap || !this.spend(linkBytes(link) + Buffer.byteLength(source))) {
      if (kept < cap) this.cutBy.add('memory');
      else if (anchor) this.cutBy.add('anchor_cap');
      else if (this.checking) this.checkCapReached = true;
      const hash = hash53(key);
      if (this.uncounted.has(hash) || this.uncounted.size >= this.limits.countedLinks) return undefined;
      this.uncounted.add(hash);
      if (this.checking || isCounted(link.type)) this.found++;
      return undefined;
    }
    if (this.checking || isCounted(link.type)) this.found++;
    const entry: LinkEntry<Visit> = { link, sources: [source], sourceCount: 1 };
    this.entries.set(key, entry);
    if (!this.checking) return entry;
    if (anchor) this.anchors++;
    else this.requested++;
    // A link's fragments are verified once the crawl has found them all (see the crawl's finish()).
    if (link.fragments && this.checkFragments) entry.firstPage = visit;
    return entry;
  }

  /** The caps other than the check cap that left links out; `unchecked`: the time budget left some. */
  cutReasons(unchecked: boolean): LinksCutReason[] {
    if (this.tooLong > 0) this.cutBy.add('url_length');
    if (unchecked) this.cutBy.add('time_budget');
    return [...this.cutBy];
  }

  /** Takes `bytes` of the result's budget; false (nothing taken) when they do not fit. */
  private spend(bytes: number): boolean {
    if (this.resultBytes + bytes > MAX_RESULT_BYTES) return false;
    this.resultBytes += bytes;
    return true;
  }
}
