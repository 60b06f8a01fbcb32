import { randomInt } from 'node:crypto';
import { BoundedParser, HTML_OPTIONS } from '@webutil/kit/html';
import { hash53 } from '../page/hash.js';

/**
 * Soft 404s: a page that answers 200 but is the site's "not found" page. The site's answer to a
 * path that cannot exist is the reference; a link whose 200 looks the same (same title, nearly
 * the same words, once the words of either requested path are set aside: such pages often echo
 * the path) is reported as broken.
 */

/**
 * What is kept of a page to compare it with the not-found page, fixed in size whatever the page
 * (a scan keeps one per origin): its words as a bottom-k sketch, the k smallest 53-bit word hashes
 * (the whole set when it has fewer words), from which Jaccard similarity is estimated.
 */
export interface PageFingerprint {
  title: Sketch;
  words: Sketch;
  /** Hashes of the words of the requested path (at most a URL's worth). */
  pathWords: number[];
  /** Hash of the final URL after redirects, when the answer was a redirect. */
  redirectedTo: number | undefined;
}

interface Sketch {
  /** The smallest hashes, ascending. */
  hashes: number[];
  /** The largest hash the sketch vouches for: every word hashing at most this is in it (Infinity when whole). */
  upTo: number;
}

const TITLE_SKETCH = 64;
const WORDS_SKETCH = 256;

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
    title: sketch(words(title.join(' ')), TITLE_SKETCH),
    words: sketch(words(text.join(' ')), WORDS_SKETCH),
    pathWords: [...words(safeDecode(new URL(requestedUrl).pathname))].map(hash53),
    redirectedTo: redirectedTo === undefined ? undefined : hash53(redirectedTo),
  };
}

const HIDDEN = new Set(['script', 'style', 'template']);

/** True when `page` is the same not-found page the probe got. */
export function sameNotFoundPage(page: PageFingerprint, probe: PageFingerprint): boolean {
  // A site that redirects unknown paths (often to its home page) is matched by that target only:
  // the target page itself, asked for directly, is not a soft 404.
  if (probe.redirectedTo !== undefined) return page.redirectedTo === probe.redirectedTo;
  const echoed = new Set([...page.pathWords, ...probe.pathWords]);
  return similarity(page.title, probe.title, echoed) === 1 && similarity(page.words, probe.words, echoed) >= 0.9;
}

function sketch(words: Set<string>, k: number): Sketch {
  const hashes = [...words].map(hash53).sort((a, b) => a - b);
  return hashes.length <= k
    ? { hashes, upTo: Number.POSITIVE_INFINITY }
    : { hashes: hashes.slice(0, k), upTo: hashes[k - 1] as number };
}

/**
 * Jaccard similarity of two word sets, words in `echoed` left out, from their sketches: exact when
 * both sketches hold their whole set, otherwise estimated on the hashes both vouch for.
 */
function similarity(a: Sketch, b: Sketch, echoed: Set<number>): number {
  const upTo = Math.min(a.upTo, b.upTo);
  const inA = new Set(a.hashes.filter((h) => h <= upTo && !echoed.has(h)));
  const inB = new Set(b.hashes.filter((h) => h <= upTo && !echoed.has(h)));
  return jaccard(inA, inB);
}

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^a-z\u00c0-\uffff]+/)
      .filter((w) => w.length > 1),
  );
}

function jaccard<T>(a: Set<T>, b: Set<T>): number {
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
