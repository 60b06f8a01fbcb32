/**
 * Markdown pages for the link-checking tests (issue 37, item 5), beside the link pages of
 * fixture-link-pages.ts (whose /links/ok/<name> answers 200 and /links/gone/<name> 404):
 *
 *   /links/markdown     text/markdown: every kind of Markdown link to a working and a missing
 *                       target, in-page heading anchors, and links to headings of the next page
 *   /links/readme.md    a `.md` file served as text/plain, with headings
 *
 * Expected records are computed from the definitions below.
 */
import type { ExpectedLink } from './fixture-link-pages.js';
import type { FixtureSite } from './fixture-site.js';

/** One kind of Markdown link: how the page writes it, and the element its record carries. */
interface MarkdownKind {
  name: string;
  element: 'a' | 'img';
  markdown(url: string): string;
}

export const MARKDOWN_KINDS: MarkdownKind[] = [
  { name: 'md-inline', element: 'a', markdown: (url) => `[inline](${url} "title")` },
  { name: 'md-image', element: 'img', markdown: (url) => `![an image](${url})` },
  { name: 'md-autolink', element: 'a', markdown: (url) => `<${url}>` },
  { name: 'md-html', element: 'a', markdown: (url) => `<a href="${url}">raw HTML</a>` },
];
/** Reference links need their definition apart: [text][label] ... [label]: url. */
const REFERENCE = { name: 'md-reference', element: 'a' as const };

/** Headings of the pages, and the anchor GitHub gives each (what a `#fragment` link names). */
export const MARKDOWN_HEADINGS = [
  { text: 'Getting Started', slug: 'getting-started' },
  { text: 'Install `npm` & run!', slug: 'install-npm--run' },
];
/** In-page anchors of the Markdown page, and whether a heading has each. */
export const MARKDOWN_ANCHORS = [
  { fragment: 'getting-started', present: true },
  { fragment: 'install-npm--run', present: true },
  { fragment: 'not-a-heading', present: false },
];

export interface MarkdownPages {
  /** The text/markdown page and the `.md` served as text/plain. */
  page: string;
  readme: string;
  /** Records of the page's links (resources included), with checkResources on. */
  expected: ExpectedLink[];
  /** The link to the readme's headings: its fragments and whether each is a heading there. */
  readmeFragments: { fragment: string; found: boolean }[];
}

export function addMarkdownPages(site: FixtureSite): MarkdownPages {
  const page = '/links/markdown';
  const readme = '/links/readme.md';
  const expected: ExpectedLink[] = [];
  const lines = ['# Markdown links', ''];
  const references: string[] = [];
  for (const [severity, folder] of [
    ['ok', 'ok'],
    ['broken', 'gone'],
  ] as const) {
    for (const kind of MARKDOWN_KINDS) {
      const url = site.url(`/links/${folder}/${kind.name}`);
      lines.push(kind.markdown(url), '');
      expected.push({ url, element: kind.element, rel: null, severity });
    }
    const url = site.url(`/links/${folder}/${REFERENCE.name}`);
    lines.push(`A [reference][${folder}].`, '');
    references.push(`[${folder}]: ${url}`);
    expected.push({ url, element: REFERENCE.element, rel: null, severity });
  }
  for (const heading of MARKDOWN_HEADINGS) lines.push(`## ${heading.text}`, '');
  for (const anchor of MARKDOWN_ANCHORS) lines.push(`[to ${anchor.fragment}](#${anchor.fragment})`, '');
  // Links to the readme's headings, one there and one not: one record, two fragments.
  const readmeFragments = [
    { fragment: MARKDOWN_HEADINGS[0]?.slug as string, found: true },
    { fragment: 'no-such-heading', found: false },
  ];
  for (const { fragment } of readmeFragments) lines.push(`[readme](readme.md#${fragment})`, '');
  expected.push({ url: site.url(readme), element: 'a', rel: null, severity: 'ok' });
  lines.push('```', '[not a link](/links/gone/in-code)', '```', '', ...references, '');
  const markdown = lines.join('\n');
  site.route(page, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/markdown; charset=utf-8' }).end(markdown);
  });
  const readmeText = MARKDOWN_HEADINGS.map((h) => `# ${h.text}\n\nText.\n`).join('\n');
  site.route(readme, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(readmeText);
  });
  return { page, readme, expected, readmeFragments };
}
