/**
 * Every check of the meta audit: its category, weight, and the rule that gives it a value,
 * a status and a message a site owner can act on. The rubric is written down in docs/grading.md
 * ("Meta scan"); this file is the only place that applies it.
 */
import { header, type SafeResponse } from '@webutil/kit';
import type { MetaCheck } from '@webutil/proto/webutil/metascan/v1/metascan';
import type { PageHead } from './page-head.js';
import type { FileProbe, RobotsProbe } from './site-files.js';

export type CategoryId = 'basic' | 'technical' | 'social' | 'images';
export type Status = 'pass' | 'warning' | 'fail';

/** Everything the checks look at, fetched beforehand. */
export interface AuditInput {
  url: URL;
  headers: SafeResponse['headers'];
  head: PageHead;
  robots: RobotsProbe;
  sitemap: FileProbe;
  /** The icon the page declares (resolved), if any, and what fetching it and /favicon.ico found. */
  favicon: { declared: string | undefined; declaredProbe: FileProbe | undefined; fallbackProbe: FileProbe | undefined };
}

interface Check {
  id: string;
  category: CategoryId;
  /** Share of the final score; the weights add up to 100. */
  weight: number;
  run(input: AuditInput): Omit<MetaCheck, 'id'>;
}

const pass = (value: string | undefined, message: string) => ({ value, status: 'pass', message });
const warn = (value: string | undefined, message: string) => ({ value, status: 'warning', message });
const fail = (value: string | undefined, message: string) => ({ value, status: 'fail', message });

/** Content of the first <meta> whose name or property is `key`, white space collapsed. */
export function metaContent(head: PageHead, key: string): string | undefined {
  const tag = head.metas.find((m) => m.name === key || m.property === key);
  return tag ? (tag.content ?? '').replace(/\s+/g, ' ').trim() : undefined;
}

/** A length rule: missing or empty fails, outside [min, max] warns. */
function lengthCheck(what: string, tag: string, min: number, max: number) {
  return (value: string | undefined) => {
    if (value === undefined) return fail(value, `No ${what}: add ${tag} of ${min}–${max} characters`);
    const n = [...value].length;
    if (n === 0) return fail(value, `The ${what} is empty: write ${min}–${max} characters`);
    if (n < min) return warn(value, `The ${what} is ${n} characters; use ${min}–${max} to describe the page fully`);
    if (n > max) {
      return warn(value, `The ${what} is ${n} characters; keep it to ${max} so search results do not cut it off`);
    }
    return pass(value, `The ${what} is ${n} characters (${min}–${max})`);
  };
}

/** A tag that should be there: present passes, missing warns with `advice`. */
function presenceCheck(key: string, label: string, advice: string) {
  return ({ head }: AuditInput) => {
    const value = metaContent(head, key);
    if (value === undefined || value === '') return warn(value, `No ${label}: ${advice}`);
    return pass(value, `${label} is set`);
  };
}

/** A card tag X reads, or falls back to its Open Graph twin for. */
function twitterFallback(key: string, ogKey: string, what: string) {
  return ({ head }: AuditInput) => {
    const value = metaContent(head, key);
    if (value) return pass(value, `${key} is set`);
    if (metaContent(head, ogKey)) return pass(value, `No ${key}; X uses ${ogKey} instead, which is set`);
    return fail(value, `Neither ${key} nor ${ogKey}: cards on X show no ${what}; add ${ogKey}`);
  };
}

const detailOf = (probe: FileProbe) => (probe.kind === 'ok' ? 'works' : probe.detail);

const isAbsoluteWebUrl = (text: string) => {
  try {
    return /^https?:$/.test(new URL(text).protocol);
  } catch {
    return false;
  }
};

const TWITTER_CARDS = new Set(['summary', 'summary_large_image', 'app', 'player']);

export const CHECKS: readonly Check[] = [
  // Basic: what search results show.
  {
    id: 'meta_title',
    category: 'basic',
    weight: 12,
    run: ({ head }) => lengthCheck('title', '<title>', 30, 60)(head.title),
  },
  {
    id: 'meta_description',
    category: 'basic',
    weight: 12,
    run: ({ head }) =>
      lengthCheck('meta description', '<meta name="description">', 70, 160)(metaContent(head, 'description')),
  },
  {
    id: 'meta_keywords',
    category: 'basic',
    weight: 1,
    run: ({ head }) => {
      const value = metaContent(head, 'keywords');
      if (!value) return pass(value, 'No meta keywords; search engines ignore them, so none are needed');
      const count = value.split(',').filter((k) => k.trim()).length;
      if (count > 10) {
        return warn(value, `${count} meta keywords: search engines ignore the tag, and a long list reads as stuffing`);
      }
      return pass(value, `${count} meta keywords (search engines ignore them; harmless)`);
    },
  },
  {
    id: 'meta_author',
    category: 'basic',
    weight: 2,
    run: presenceCheck('author', 'meta author', 'add <meta name="author"> naming who wrote the page'),
  },

  // Technical: how browsers and crawlers read the site.
  {
    id: 'meta_viewport',
    category: 'technical',
    weight: 8,
    run: ({ head }) => {
      const value = metaContent(head, 'viewport');
      if (!value) {
        return fail(
          value,
          'No viewport meta tag: phones render the page at desktop width; add ' +
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
        );
      }
      const settings = new Map(
        value.split(/[,;]/).map((part) => {
          const [k = '', v = ''] = part.split('=').map((s) => s.trim().toLowerCase());
          return [k, v] as const;
        }),
      );
      if (settings.get('width') !== 'device-width') {
        return warn(
          value,
          'The viewport does not set width=device-width, so phones may not fit the page to the screen',
        );
      }
      const maxScale = Number(settings.get('maximum-scale') ?? Number.POSITIVE_INFINITY);
      if (settings.get('user-scalable') === 'no' || settings.get('user-scalable') === '0' || maxScale < 2) {
        return warn(
          value,
          'The viewport stops users from zooming (user-scalable=no or maximum-scale under 2); allow it',
        );
      }
      return pass(value, 'The viewport fits the page to the device width');
    },
  },
  {
    id: 'meta_charset',
    category: 'technical',
    weight: 4,
    run: ({ head, headers }) => {
      const fromMeta =
        head.metas.find((m) => m.charset)?.charset ??
        /charset=([\w-]+)/i.exec(head.metas.find((m) => m.httpEquiv === 'content-type')?.content ?? '')?.[1];
      if (!fromMeta) {
        const fromHeader = /charset=["']?([\w-]+)/i.exec(header(headers, 'content-type') ?? '')?.[1];
        return fromHeader
          ? warn(
              undefined,
              `No <meta charset>; only the Content-Type header says ${fromHeader}. Add <meta charset="utf-8"> ` +
                'first in the head so saved copies read right',
            )
          : fail(
              undefined,
              'No character encoding declared: add <meta charset="utf-8"> as the first element of the head',
            );
      }
      if (!/^utf-?8$/i.test(fromMeta)) return warn(fromMeta, `The page declares ${fromMeta}; UTF-8 is recommended`);
      return pass(fromMeta, 'The page declares UTF-8');
    },
  },
  {
    id: 'meta_robots',
    category: 'technical',
    weight: 7,
    run: ({ head, headers }) => {
      const value = metaContent(head, 'robots');
      const directives = `${value ?? ''},${header(headers, 'x-robots-tag') ?? ''}`
        .toLowerCase()
        .split(/[,\s]+/)
        .filter(Boolean);
      const source = value === undefined ? 'The X-Robots-Tag header' : 'The robots meta tag';
      if (directives.includes('noindex') || directives.includes('none')) {
        return fail(
          value,
          `${source} says noindex: search engines will drop this page; remove it if it should be found`,
        );
      }
      if (directives.includes('nofollow')) {
        return warn(value, `${source} says nofollow: search engines will not follow this page's links`);
      }
      if (value === undefined)
        return pass(value, 'No robots meta tag: search engines index the page and follow its links');
      return pass(value, 'The robots meta tag lets search engines index the page');
    },
  },
  {
    id: 'link_canonical',
    category: 'technical',
    weight: 6,
    run: ({ head, url }) => {
      const value = head.links.find((l) => l.rel.includes('canonical'))?.href;
      if (value === undefined) {
        return warn(
          value,
          'No canonical URL: add <link rel="canonical" href="…"> so duplicates of the page count as one',
        );
      }
      let canonical: URL;
      try {
        canonical = new URL(value, url);
      } catch {
        return fail(value, `The canonical URL "${value}" is not a valid URL`);
      }
      if (!/^https?:$/.test(canonical.protocol)) return fail(value, `The canonical URL is not a web address: ${value}`);
      if (!isAbsoluteWebUrl(value))
        return warn(value, `The canonical URL is relative; write it in full: ${canonical.href}`);
      if (canonical.host !== url.host) {
        return warn(
          value,
          `The canonical URL points to another site (${canonical.host}); search engines will index that one`,
        );
      }
      if (canonical.href !== url.href) {
        return pass(value, `The canonical URL names ${canonical.href}: this page counts as a copy of it`);
      }
      return pass(value, 'The canonical URL names this page');
    },
  },
  {
    id: 'file_robots_txt',
    category: 'technical',
    weight: 5,
    run: ({ robots }) => {
      const { probe } = robots;
      switch (probe.kind) {
        case 'ok':
          return robots.blocksAll
            ? fail(probe.url, 'robots.txt disallows the whole site for all crawlers (Disallow: / for User-agent: *)')
            : pass(probe.url, 'robots.txt is in place');
        case 'missing':
          return warn(undefined, `No robots.txt (${probe.detail}): add one that names your sitemap`);
        case 'broken':
          return fail(undefined, `robots.txt ${probe.detail}`);
        case 'failed':
          return fail(undefined, `robots.txt could not be read (${probe.detail}): crawlers may stop crawling the site`);
      }
    },
  },
  {
    id: 'file_sitemap_xml',
    category: 'technical',
    weight: 5,
    run: ({ sitemap, robots }) => {
      const named = robots.sitemaps.length > 0;
      switch (sitemap.kind) {
        case 'ok':
          return pass(sitemap.url, named ? 'The sitemap named in robots.txt is in place' : 'sitemap.xml is in place');
        case 'missing':
          return named
            ? fail(undefined, `robots.txt names the sitemap ${sitemap.url}, which ${sitemap.detail}`)
            : warn(undefined, `No sitemap (/sitemap.xml ${sitemap.detail}): publish one and name it in robots.txt`);
        case 'broken':
          return fail(undefined, `The sitemap ${sitemap.url} ${sitemap.detail}`);
        case 'failed':
          return fail(undefined, `The sitemap ${sitemap.url} could not be read (${sitemap.detail})`);
      }
    },
  },

  // Social: how shared links look (Open Graph, X cards).
  {
    id: 'og_title',
    category: 'social',
    weight: 4,
    run: ({ head }) => {
      const value = metaContent(head, 'og:title');
      if (!value) return fail(value, 'No og:title: shared links show no title; add <meta property="og:title">');
      const n = [...value].length;
      if (n > 90) return warn(value, `og:title is ${n} characters; keep it under 90 so previews do not cut it off`);
      return pass(value, 'og:title is set');
    },
  },
  {
    id: 'og_description',
    category: 'social',
    weight: 3,
    run: ({ head }) => {
      const value = metaContent(head, 'og:description');
      if (!value)
        return fail(value, 'No og:description: shared links show no summary; add <meta property="og:description">');
      const n = [...value].length;
      if (n > 200) return warn(value, `og:description is ${n} characters; keep it under 200`);
      return pass(value, 'og:description is set');
    },
  },
  {
    id: 'og_image',
    category: 'social',
    weight: 5,
    run: ({ head }) => {
      const value = metaContent(head, 'og:image');
      if (!value) return fail(value, 'No og:image: shared links show no picture; add a 1200×630 image');
      if (!isAbsoluteWebUrl(value))
        return warn(value, 'og:image must be an absolute http(s) URL for previews to load it');
      return pass(value, 'og:image is set');
    },
  },
  {
    id: 'og_image_alt',
    category: 'social',
    weight: 1,
    run: presenceCheck('og:image:alt', 'og:image:alt', 'describe the shared image for screen readers'),
  },
  {
    id: 'og_url',
    category: 'social',
    weight: 2,
    run: ({ head }) => {
      const value = metaContent(head, 'og:url');
      if (!value) return warn(value, "No og:url: add the page's canonical URL so shares of its variants count as one");
      if (!isAbsoluteWebUrl(value)) return warn(value, 'og:url must be an absolute http(s) URL');
      return pass(value, 'og:url is set');
    },
  },
  {
    id: 'og_type',
    category: 'social',
    weight: 2,
    run: presenceCheck('og:type', 'og:type', 'previews assume "website"; set it (website, article...)'),
  },
  {
    id: 'og_site_name',
    category: 'social',
    weight: 1,
    run: presenceCheck('og:site_name', 'og:site_name', "add the site's name for previews"),
  },
  {
    id: 'og_locale',
    category: 'social',
    weight: 1,
    run: ({ head }) => {
      const value = metaContent(head, 'og:locale');
      if (!value) return warn(value, 'No og:locale: previews assume en_US; set the language, e.g. en_GB or fr_FR');
      if (!/^[a-z]{2,3}_[A-Z]{2}$/.test(value))
        return warn(value, `og:locale "${value}" is not in language_TERRITORY form, e.g. en_US`);
      return pass(value, 'og:locale is set');
    },
  },
  {
    id: 'twitter_card',
    category: 'social',
    weight: 4,
    run: ({ head }) => {
      const value = metaContent(head, 'twitter:card');
      if (!value)
        return fail(
          value,
          'No twitter:card: X shows no card; add <meta name="twitter:card" content="summary_large_image">',
        );
      if (!TWITTER_CARDS.has(value)) {
        return fail(
          value,
          `twitter:card "${value}" is not a card type X knows (summary, summary_large_image, app, player)`,
        );
      }
      return pass(value, `twitter:card is ${value}`);
    },
  },
  { id: 'twitter_title', category: 'social', weight: 2, run: twitterFallback('twitter:title', 'og:title', 'title') },
  {
    id: 'twitter_description',
    category: 'social',
    weight: 1,
    run: twitterFallback('twitter:description', 'og:description', 'summary'),
  },
  { id: 'twitter_image', category: 'social', weight: 2, run: twitterFallback('twitter:image', 'og:image', 'picture') },
  {
    id: 'twitter_site',
    category: 'social',
    weight: 1,
    run: ({ head }) => {
      const value = metaContent(head, 'twitter:site');
      if (!value) return warn(value, "No twitter:site: add the site's @handle so cards credit it");
      if (!value.startsWith('@')) return warn(value, `twitter:site should be an @handle, not "${value}"`);
      return pass(value, 'twitter:site is set');
    },
  },
  {
    id: 'twitter_creator',
    category: 'social',
    weight: 1,
    run: presenceCheck('twitter:creator', 'twitter:creator', "add the author's @handle"),
  },
  {
    id: 'twitter_image_alt',
    category: 'social',
    weight: 1,
    run: presenceCheck('twitter:image:alt', 'twitter:image:alt', 'describe the card image for screen readers'),
  },

  // Images.
  {
    id: 'asset_favicon',
    category: 'images',
    weight: 7,
    run: ({ favicon }) => {
      const { declared, declaredProbe, fallbackProbe } = favicon;
      if (declaredProbe?.kind === 'ok') return pass(declared, 'The declared icon answers with an image');
      const broken = declaredProbe && `The declared icon ${declared} ${detailOf(declaredProbe)}`;
      if (fallbackProbe?.kind === 'ok') {
        return broken
          ? warn(
              fallbackProbe.url,
              `${broken}; browsers fall back to /favicon.ico, which works: fix or remove the link`,
            )
          : pass(
              fallbackProbe.url,
              '/favicon.ico answers with an image (declaring it with <link rel="icon"> is optional)',
            );
      }
      const fallback = fallbackProbe && `/favicon.ico ${detailOf(fallbackProbe)}`;
      return fail(
        declared,
        `${[broken, fallback].filter(Boolean).join('; ')}: add an icon with <link rel="icon" href="/favicon.ico">`,
      );
    },
  },
];

export const CATEGORY_ORDER: readonly CategoryId[] = ['basic', 'technical', 'social', 'images'];
