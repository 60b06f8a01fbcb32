import { randomInt } from 'node:crypto';
import { BoundedParser, HTML_OPTIONS } from '@webutil/kit/html';

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

/**
 * Words of the page's title and visible text (scripts, styles and digits left out). Read with the
 * bounded parser, not regular expressions: patterns such as `<title[^>]*>` rescan the rest of the
 * sample from every `<`, which costs its square on a body of unclosed tags.
 */
export function fingerprint(html: string, requestedUrl: string, redirectedTo: string | undefined): PageFingerprint {
  const title: string[] = [];
  const text: string[] = [];
  let hidden = 0;
  let inTitle = false;
  const parser = new BoundedParser(
    {
      onopentag: (name) => {
        if (name === 'title') inTitle = true;
        else if (HIDDEN.has(name)) hidden++;
      },
      onclosetag: (name) => {
        if (name === 'title') inTitle = false;
        else if (HIDDEN.has(name) && hidden > 0) hidden--;
      },
      ontext: (t) => {
        if (inTitle) title.push(t);
        else if (hidden === 0) text.push(t);
      },
    },
    HTML_OPTIONS,
  );
  parser.write(html);
  parser.end();
  return {
    title: words(title.join(' ')),
    words: words(text.join(' ')),
    pathWords: words(safeDecode(new URL(requestedUrl).pathname)),
    redirectedTo,
  };
}

const HIDDEN = new Set(['script', 'style', 'template']);

/** True when `page` is the same not-found page the probe got. */
export function sameNotFoundPage(page: PageFingerprint, probe: PageFingerprint): boolean {
  // A site that redirects unknown paths (often to its home page) is matched by that target only:
  // the target page itself, asked for directly, is not a soft 404.
  if (probe.redirectedTo !== undefined) return page.redirectedTo === probe.redirectedTo;
  const echoed = new Set([...page.pathWords, ...probe.pathWords]);
  const without = (set: Set<string>) => new Set([...set].filter((w) => !echoed.has(w)));
  return (
    jaccard(without(page.title), without(probe.title)) === 1 &&
    jaccard(without(page.words), without(probe.words)) >= 0.9
  );
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
