/**
 * Fixture pages for the meta audit: a head with every tag the audit checks, set to a passing
 * value, which a test or benchmark changes one tag at a time (null removes a tag).
 */

/** Tag key -> value. Keys: title, charset, icon, canonical, and meta names or properties. */
export type HeadTags = Record<string, string | null>;

export function completeHead(origin: string, changes: HeadTags = {}): HeadTags {
  return {
    charset: 'utf-8',
    title: 'Fixture Page: a Complete Head for the Meta Audit',
    description:
      'A fixture page whose head carries every tag the meta audit checks, each one set to a value that passes.',
    keywords: 'fixture, meta, audit',
    author: 'WebUtil Tests',
    viewport: 'width=device-width, initial-scale=1',
    robots: 'index, follow',
    canonical: `${origin}/page`,
    icon: '/icons/icon.png',
    'og:title': 'A Complete Head for the Meta Audit',
    'og:description': 'Every tag the audit checks, each set to a passing value.',
    'og:image': 'https://fixture.example/share.png',
    'og:image:alt': 'The fixture logo',
    'og:url': `${origin}/page`,
    'og:type': 'website',
    'og:site_name': 'WebUtil Fixtures',
    'og:locale': 'en_US',
    'twitter:card': 'summary_large_image',
    'twitter:title': 'A Complete Head for the Meta Audit',
    'twitter:description': 'Every tag the audit checks, each set to a passing value.',
    'twitter:image': 'https://fixture.example/share.png',
    'twitter:site': '@webutil',
    'twitter:creator': '@fixtures',
    'twitter:image:alt': 'The fixture logo',
    ...changes,
  };
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A page with those tags in its head (Open Graph as property=, the rest as name=) and a small body. */
export function metaPage(tags: HeadTags, body = '<h1>Fixture</h1><p>Body text.</p>'): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(tags)) {
    if (value === null) continue;
    const v = escapeHtml(value);
    if (key === 'charset') lines.push(`<meta charset="${v}">`);
    else if (key === 'title') lines.push(`<title>${v}</title>`);
    else if (key === 'icon') lines.push(`<link rel="icon" href="${v}">`);
    else if (key === 'canonical') lines.push(`<link rel="canonical" href="${v}">`);
    else if (key.startsWith('og:')) lines.push(`<meta property="${key}" content="${v}">`);
    else lines.push(`<meta name="${key}" content="${v}">`);
  }
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n${lines.join('\n')}\n</head>\n<body>${body}</body>\n</html>\n`;
}
