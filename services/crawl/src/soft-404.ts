import { randomInt } from 'node:crypto';

/**
 * Soft 404s: a page that answers 200 but is the site's "not found" page. The site's answer to a
 * path that cannot exist is the reference; a link whose 200 looks the same (same title, nearly
 * the same words, once the words of either requested path are set aside: such pages often echo
 * the path) is reported as broken.
 */

export interface PageFingerprint {
  title: Set<string>;
  words: Set<string>;
  /** Words of the requested path. */
  pathWords: Set<string>;
  /** Final URL after redirects, when the answer was a redirect. */
  redirectedTo: string | undefined;
}

/** A path no real site serves, for asking a host what its not-found answer looks like. */
export function probePath(): string {
  return `/webutil-probe-${randomInt(1e9)}${randomInt(1e9)}`;
}

/** Words of the page's title and visible text (tags, scripts and digits left out). */
export function fingerprint(html: string, requestedUrl: string, redirectedTo: string | undefined): PageFingerprint {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '';
  const text = html
    .replace(/<(script|style|template|title)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&[a-z#0-9]+;/gi, ' ');
  return { title: words(title), words: words(text), pathWords: words(safeDecode(new URL(requestedUrl).pathname)), redirectedTo };
}

/** True when `page` is the same not-found page the probe got. */
export function sameNotFoundPage(page: PageFingerprint, probe: PageFingerprint): boolean {
  // A site that redirects unknown paths (often to its home page) is matched by that target only:
  // the target page itself, asked for directly, is not a soft 404.
  if (probe.redirectedTo !== undefined) return page.redirectedTo === probe.redirectedTo;
  const echoed = new Set([...page.pathWords, ...probe.pathWords]);
  const without = (set: Set<string>) => new Set([...set].filter((w) => !echoed.has(w)));
  return jaccard(without(page.title), without(probe.title)) === 1 && jaccard(without(page.words), without(probe.words)) >= 0.9;
}

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^a-z\u00c0-\uffff]+/)
      .filter((w) => w.length > 1),
  );
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
