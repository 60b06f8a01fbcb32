import { BoundedParser, HTML_OPTIONS } from '@webutil/kit/html';
import { hash53 } from './hash.js';

/** Ids and anchor names kept per page at most; a longer list is cut short (and so incomplete). */
export const MAX_TARGETS_PER_PAGE = 10_000;

/**
 * The in-page targets of one page (`#name` scrolls to the element with that id, or to an
 * `<a name>`), bounded: names are kept as 53-bit hashes, at most `cap` of them (MAX_TARGETS_PER_PAGE),
 * each taken from the scan's budget when one is given. Past the cap, or when the page was not read to its end,
 * the list is incomplete, and a name not in it is unknown rather than missing. Once the page is
 * read, `seal()` packs the hashes into a sorted array: 8 bytes each instead of a set entry's ~40.
 */
export class PageTargets {
  private building: Set<number> | undefined = new Set<number>();
  private sealed = new Float64Array(0);
  complete = true;

  constructor(
    private readonly cap = MAX_TARGETS_PER_PAGE,
    private readonly budget?: TargetBudget,
  ) {}

  add(name: string): void {
    if (!this.building) throw new Error('targets added after the page was sealed');
    const hash = hash53(name);
    if (this.building.has(hash)) return;
    if (this.building.size >= this.cap || !(this.budget?.take() ?? true)) this.complete = false;
    else this.building.add(hash);
  }

  /** The page is read: no more targets. */
  seal(): void {
    if (!this.building) return;
    this.sealed = Float64Array.from(this.building).sort();
    this.building = undefined;
  }

  /** Whether the page has the target; undefined when the list is incomplete and it is not in it. */
  has(name: string): boolean | undefined {
    const hash = hash53(name);
    if (this.building ? this.building.has(hash) : sortedHas(this.sealed, hash)) return true;
    return this.complete ? false : undefined;
  }

  get size(): number {
    return this.building ? this.building.size : this.sealed.length;
  }

  /** The list as a store keeps it (a distributed audit checks fragments against it when the report is made). */
  toStored(): StoredTargets {
    const hashes = this.building ? [...this.building].sort((a, b) => a - b) : [...this.sealed];
    return { hashes, complete: this.complete };
  }

  static fromStored(stored: StoredTargets): PageTargets {
    const targets = new PageTargets();
    targets.building = undefined;
    targets.sealed = Float64Array.from(stored.hashes).sort();
    targets.complete = stored.complete;
    return targets;
  }
}

/** A page's targets as stored: their hashes (53-bit integers, exact in JSON) and whether the list is whole. */
export interface StoredTargets {
  hashes: number[];
  complete: boolean;
}

function sortedHas(sorted: Float64Array, value: number): boolean {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const at = sorted[mid] as number;
    if (at === value) return true;
    if (at < value) low = mid + 1;
    else high = mid - 1;
  }
  return false;
}

/** How a scan verifies fragments, beyond the HTML standard (docs/decisions/0303-fragment-options.md). */
export interface FragmentRules {
  /** Fragments left unverified (a single-page app's routes: `#/route`, `#!/route`). */
  skips(fragment: string): boolean;
  /** `#name` also matches the id `user-content-name`, as GitHub's rendered Markdown prefixes ids. */
  githubPrefix: boolean;
}

/** GitHub's prefix of the ids in rendered Markdown (headings, footnotes). */
const GITHUB_ID_PREFIX = 'user-content-';

/** Whether the page has the fragment's target under the rules; undefined when its list cannot say. */
export function findFragment(
  targets: PageTargets,
  name: string,
  rules: FragmentRules | undefined,
): boolean | undefined {
  const found = targets.has(name);
  if (found !== false || !rules?.githubPrefix || name.startsWith(GITHUB_ID_PREFIX)) return found;
  return targets.has(GITHUB_ID_PREFIX + name);
}

/** Adds an element's id, or an `<a name>`, to the page's targets. */
export function addTargets(tag: string, attrs: Record<string, string>, into: PageTargets): void {
  if (attrs.id) into.add(attrs.id);
  if (tag === 'a' && attrs.name) into.add(attrs.name);
}

/**
 * The fragment of a URL, decoded, or undefined when there is none worth checking: an empty
 * fragment and `#top` always work, and text fragments (`#:~:text=`) are the browser's business.
 */
export function checkableFragment(url: string): string | undefined {
  const hash = url.indexOf('#');
  if (hash < 0) return undefined;
  const raw = url.slice(hash + 1);
  if (raw === '' || raw.startsWith(':~:') || raw.toLowerCase() === 'top') return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The targets a scan may keep over all the pages it reads, taken one at a time as they are found (a
 * share set aside per page before reading it would leave nothing to the pages read beside the first ones).
 */
export class TargetBudget {
  constructor(private left: number) {}

  take(): boolean {
    if (this.left <= 0) return false;
    this.left--;
    return true;
  }

  giveBack(count: number): void {
    this.left += count;
  }
}

/** Collects the ids and anchor names of a document fed in chunks, at most `cap` of them. */
export class TargetCollector {
  readonly targets: PageTargets;
  private readonly parser = new BoundedParser(
    { onopentag: (name, attrs) => addTargets(name, attrs, this.targets) },
    HTML_OPTIONS,
  );

  constructor(cap = MAX_TARGETS_PER_PAGE, budget?: TargetBudget) {
    this.targets = new PageTargets(cap, budget);
  }

  get done(): boolean {
    return this.parser.tooDeep;
  }

  write(chunk: string): void {
    this.parser.write(chunk);
  }

  /** The text fed was not the whole document: a name not found is unknown, not missing. */
  cutShort(): void {
    this.targets.complete = false;
  }

  end(): void {
    this.parser.end();
    if (this.parser.tooDeep) this.targets.complete = false;
    this.targets.seal();
  }
}
