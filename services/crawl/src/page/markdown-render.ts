import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';

/**
 * CommonMark with GitHub's habits: raw HTML kept (its links are links too), bare URLs linked, and
 * each heading given the id GitHub's anchor for it uses (`## Install` is `#install`, a repeat
 * `#install-1`), so `#fragment` links to the page can be verified.
 */
const markdown = new MarkdownIt({ html: true, linkify: true });
markdown.renderer.rules.heading_open = (tokens, idx, options, env, self) => {
  const slugger = (env as { slugger: GithubSlugger }).slugger;
  const inline = tokens[idx + 1];
  const text = (inline?.children ?? [])
    .filter((t) => t.type === 'text' || t.type === 'code_inline')
    .map((t) => t.content)
    .join('');
  tokens[idx]?.attrSet('id', slugger.slug(text));
  return self.renderToken(tokens, idx, options);
};

/** The HTML a Markdown document renders to, headings with GitHub's ids. */
export function renderMarkdown(text: string): string {
  return markdown.render(text, { slugger: new GithubSlugger() });
}
