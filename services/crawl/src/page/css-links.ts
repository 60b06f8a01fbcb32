/// <reference path="../css-tree-parts.d.ts" />
import type { SafeResponse } from '@webutil/kit';
import { header } from '@webutil/kit/http-header';
// The tokenizer and its helpers alone: css-tree's main entry loads its whole grammar.
import { tokenize, tokenTypes } from 'css-tree/tokenizer';
import { string as cssString, url as cssUrl } from 'css-tree/utils';

/**
 * Characters of one piece of CSS (a stylesheet, a `<style>` block, a style attribute) read at
 * most; the rest is not read. Hostile CSS costs time linear in what is read.
 */
export const MAX_CSS_CHARS = 512 * 1024;
/** URLs taken from one piece of CSS at most. */
export const MAX_CSS_URLS = 500;

/** A URL in CSS, and what names it: `@import`, or the property it is a value of (`background`, `src`). */
export interface CssUrl {
  url: string;
  rel: string;
}

/** CSS without any of these holds no URL: most style attributes are skipped at the cost of a search. */
const MAY_HOLD_URLS = /url\(|@import|image-set\(/i;

/**
 * The URLs a browser would load from a piece of CSS: `url()` values (quoted or not), `image-set()`
 * strings and `@import` targets; `@namespace` names no resource. Read with css-tree's tokenizer
 * (CSS Syntax Level 3: escapes, comments and strings as browsers read them); the property is
 * tracked from the tokens, which costs a tenth of building the whole tree (docs/decisions/0341).
 */
export function cssUrls(css: string): CssUrl[] {
  const text = css.length > MAX_CSS_CHARS ? css.slice(0, MAX_CSS_CHARS) : css;
  if (!MAY_HOLD_URLS.test(text)) return [];
  const urls: CssUrl[] = [];
  let atRule: string | undefined; // the at-rule whose prelude is being read
  let ident: string | undefined; // the token before was this identifier
  let property: string | undefined; // the declaration being read
  const open: string[] = []; // functions and brackets open, innermost last ('' for a bracket)
  const take = (url: string) => {
    if (atRule === 'namespace' || urls.length >= MAX_CSS_URLS || !url.trim()) return;
    const rel = atRule === 'import' ? '@import' : (property ?? (atRule ? `@${atRule}` : 'url'));
    urls.push({ url: url.trim(), rel });
  };
  tokenize(text, (type, start, end) => {
    if (type === tokenTypes.WhiteSpace || type === tokenTypes.Comment) return;
    const before = ident;
    ident = undefined;
    switch (type) {
      case tokenTypes.Ident:
        ident = text.slice(start, end);
        break;
      case tokenTypes.Colon:
        if (before !== undefined && open.length === 0) property = before.toLowerCase();
        break;
      case tokenTypes.AtKeyword:
        atRule = text.slice(start + 1, end).toLowerCase();
        property = undefined;
        break;
      case tokenTypes.Semicolon:
      case tokenTypes.LeftCurlyBracket:
      case tokenTypes.RightCurlyBracket:
        atRule = undefined;
        property = undefined;
        open.length = 0;
        break;
      case tokenTypes.Function:
        open.push(text.slice(start, end - 1).toLowerCase());
        break;
      case tokenTypes.LeftParenthesis:
      case tokenTypes.LeftSquareBracket:
        open.push('');
        break;
      case tokenTypes.RightParenthesis:
      case tokenTypes.RightSquareBracket:
        open.pop();
        break;
      case tokenTypes.Url:
        take(cssUrl.decode(text.slice(start, end)));
        break;
      case tokenTypes.String: {
        const inside = open.at(-1);
        if (inside === 'url' || inside?.endsWith('image-set') || (atRule === 'import' && open.length === 0))
          take(cssString.decode(text.slice(start, end)));
        break;
      }
    }
  });
  return urls;
}

/** The text of a stylesheet's body, up to MAX_CSS_CHARS (the rest is left unread). */
export async function readCss(res: SafeResponse): Promise<string> {
  const label = /charset=["']?([\w-]+)/i.exec(header(res.headers, 'content-type') ?? '')?.[1];
  let decoder = new TextDecoder('utf-8');
  try {
    if (label) decoder = new TextDecoder(label);
  } catch {
    // an unknown label: read as UTF-8, as browsers fall back
  }
  let css = '';
  for await (const chunk of res.body) {
    css += decoder.decode(chunk, { stream: true });
    if (css.length >= MAX_CSS_CHARS) return css.slice(0, MAX_CSS_CHARS);
  }
  return css + decoder.decode();
}
