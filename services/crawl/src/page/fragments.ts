import { BoundedParser, HTML_OPTIONS } from '@webutil/kit/html';
import { hash53 } from './hash.js';

/** Ids and anchor names kept per page at most; a longer list is cut short (and so incomplete). */
export const MAX_TARGETS_PER_PAGE = 10_000;

/**
 * The in-page targets of one page (`#name` scrolls to the element with that id, or to an
 * `<a name>`), bounded: names are kept as 53-bit hashes, at most MAX_TARGETS_PER_PAGE of them.
 * Past the cap, or when the page was not read to its end, the list is incomplete, and a name not
 * in it is unknown rather than missing.
 */
export class PageTargets {
  private readonly hashes = new Set<number>();
  complete = true;

  add(name: string): void {
    if (this.hashes.size >= MAX_TARGETS_PER_PAGE) this.complete = false;
    else this.hashes.add(hash53(name));
  }

  /** Whether the page has the target; undefined when the list is incomplete and it is not in it. */
  has(name: string): boolean | undefined {
    if (this.hashes.has(hash53(name))) return true;
    return this.complete ? false : undefined;
  }

  get size(): number {
    return this.hashes.size;
  }
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

/** Collects the ids and anchor names of a document fed in chunks. */
export class TargetCollector {
  readonly targets = new PageTargets();
  private readonly parser = new BoundedParser(
    { onopentag: (name, attrs) => addTargets(name, attrs, this.targets) },
    HTML_OPTIONS,
  );

  get done(): boolean {
    return this.parser.tooDeep;
  }

  write(chunk: string): void {
    this.parser.write(chunk);
  }

  end(): void {
    this.parser.end();
    if (this.parser.tooDeep) this.targets.complete = false;
  }
}
