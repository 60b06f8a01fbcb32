import type { FoundLink } from '../model.js';
import { checkableFragment, type FragmentRules, findFragment, type PageTargets } from '../page/fragments.js';
import { normalizePageUrl } from '../page/page-url.js';
import { type AcceptStatus, type CheckOutcome, type FragmentCheck, type Graded, gradeLink } from './grade.js';

/** Where a verdict gets its facts; a single-page scan and a crawl answer these differently. */
export interface VerdictSources {
  /** Normalised URL of the page the link is on, and that page's ids and anchor names. */
  page: string;
  pageTargets: PageTargets;
  /** The HTTP outcome of a URL (its fragment ignored). */
  outcomeOf(url: string): Promise<CheckOutcome>;
  /** Fragment targets of an internal page; undefined when it could not be read as HTML. */
  targetsOf(url: string): Promise<PageTargets | undefined>;
}

/**
 * Checks and grades one link. With `checkFragments`, fragments are verified for in-page anchors
 * and internal links (another site's anchors are its own business, and reading every external
 * page would be slow): an in-page anchor's one fragment, or the distinct fragments (at most 25)
 * a page was linked with. A fragment the page's list cannot settle (cut short) is left out.
 */
export async function verdictFor(
  link: FoundLink,
  sources: VerdictSources,
  checkFragments: boolean,
  accepts?: AcceptStatus,
  fragmentRules?: FragmentRules,
): Promise<Graded> {
  if (link.type === 'mailto' || link.type === 'tel' || link.type === 'other') return gradeLink(link, undefined);
  const named = link.type === 'anchor' ? [checkableFragment(link.url) ?? ''] : (link.fragments ?? []);
  // A skipped fragment is not verified: an in-page anchor to it stays a plain in-page anchor.
  const names = fragmentRules ? named.filter((name) => name === '' || !fragmentRules.skips(name)) : named;
  const fragments = async (): Promise<FragmentCheck[] | undefined> => {
    if (!checkFragments || names.length === 0 || names[0] === '') return undefined;
    const target = normalizePageUrl(link.url);
    const targets = target === sources.page ? sources.pageTargets : await sources.targetsOf(target);
    if (!targets) return undefined;
    return names.flatMap((name) => {
      const found = findFragment(targets, name, fragmentRules);
      return found === undefined ? [] : [{ name, found }];
    });
  };
  if (link.type === 'anchor') return gradeLink(link, undefined, await fragments());
  const outcome = await sources.outcomeOf(link.url);
  const answered = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
  return gradeLink(link, outcome, answered && link.type === 'internal' ? await fragments() : undefined, accepts);
}
