import sanitizeHtml from 'sanitize-html';

/**
 * A caller's PDF header or footer template, made safe to print: only text-level markup and layout
 * elements, with class and style attributes, survive (sanitize-html); no script, link, image,
 * frame or form does. A style value that could fetch anything (url(), image-set(), @import) or
 * that hides such a thing behind a CSS escape is dropped. Chromium fills the elements with the
 * classes pageNumber, totalPages, title, url and date.
 */
export function templateHtml(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: [
      'div',
      'span',
      'p',
      'br',
      'b',
      'i',
      'u',
      'em',
      'strong',
      'small',
      'sub',
      'sup',
      'hr',
      'h1',
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
    ],
    allowedAttributes: { '*': ['class', 'style'] },
    allowedSchemes: [],
    allowedStyles: { '*': Object.fromEntries(STYLE_PROPERTIES.map((property) => [property, [SAFE_STYLE_VALUE]])) },
    disallowedTagsMode: 'discard',
  });
}

/** Style properties a template may set: type, colour, boxes and alignment. */
const STYLE_PROPERTIES = [
  'color',
  'background-color',
  'font',
  'font-family',
  'font-size',
  'font-style',
  'font-weight',
  'line-height',
  'letter-spacing',
  'text-align',
  'text-decoration',
  'text-transform',
  'vertical-align',
  'white-space',
  'width',
  'height',
  'margin',
  'margin-top',
  'margin-right',
  'margin-bottom',
  'margin-left',
  'padding',
  'padding-top',
  'padding-right',
  'padding-bottom',
  'padding-left',
  'border',
  'border-top',
  'border-bottom',
  'display',
  'box-sizing',
  'float',
  '-webkit-print-color-adjust',
  'print-color-adjust',
];

/** A value with no function that could load something and no escape: words, numbers, colours, lists. */
const SAFE_STYLE_VALUE = /^(?![\s\S]*(?:url|image|\\|@))[-\w\s.,#%'"()/+]*$/i;
