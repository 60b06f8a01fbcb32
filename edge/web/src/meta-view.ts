/** The meta scan's result view: its score, checks by category, insights and the social card. */
import { h } from './dom.js';
import type { Row } from './grid.js';
import { gradeBadge, host, isRow, num, rowsOf, scoreBar, str } from './result-parts.js';

const STATUS_WORD: Record<string, string> = { pass: 'Pass', warning: 'Warning', fail: 'Fail' };
const CATEGORY_TITLE: Record<string, string> = {
  basic: 'Basic',
  technical: 'Technical',
  social: 'Social',
  images: 'Images',
};

const INSIGHT_TITLE: Record<string, string> = {
  indexability: 'Indexability',
  international: 'International',
  'structured-data': 'Structured data',
  'social-image': 'Social image',
};

function socialCard(categories: Row[], pageUrl: unknown): HTMLElement {
  const value = (id: string) =>
    categories
      .flatMap((c) => rowsOf(c.results))
      .find((r) => r.id === id)
      ?.value?.toString() ?? '';
  const title = value('og_title') || value('twitter_title') || value('meta_title');
  const description = value('og_description') || value('twitter_description') || value('meta_description');
  const image = value('og_image') || value('twitter_image');
  return h(
    'figure',
    { class: 'social-card' },
    h('figcaption', {}, 'How a share of this page looks'),
    h(
      'div',
      { class: 'social-preview' },
      h('div', { class: 'social-image' }, image ? `Image: ${image}` : 'No share image (og:image)'),
      h('p', { class: 'social-site' }, host(value('og_url') || pageUrl)),
      h('p', { class: 'social-title' }, title || 'No title'),
      h('p', { class: 'social-description' }, description || 'No description'),
    ),
  );
}

export function metaView(reply: Row): HTMLElement[] {
  const summary = isRow(reply.summary) ? reply.summary : {};
  const categories = rowsOf(reply.categories);
  const insights = rowsOf(reply.insights);
  const insightsSummary = isRow(reply.insightsSummary) ? reply.insightsSummary : {};
  return [
    h(
      'div',
      { class: 'summary-card' },
      gradeBadge(str(reply.grade), 'Meta'),
      h(
        'div',
        { class: 'summary-body' },
        scoreBar('Score', num(reply.finalScore)),
        h('p', {}, `${num(summary.passed)} passed, ${num(summary.warnings)} warnings, ${num(summary.critical)} failed`),
      ),
      socialCard(categories, reply.url),
    ),
    ...categories.map((category) =>
      checkGroup(CATEGORY_TITLE[str(category.id)] ?? str(category.id), rowsOf(category.results)),
    ),
    insights.length
      ? h(
          'h3',
          { class: 'insights-title' },
          `Insights: ${num(insightsSummary.passed)} passed, ${num(insightsSummary.warnings)} warnings, ` +
            `${num(insightsSummary.critical)} failed (not part of the score)`,
        )
      : null,
    ...insights.map((group) =>
      checkGroup(INSIGHT_TITLE[str(group.id)] ?? str(group.id), rowsOf(group.results), 'insight'),
    ),
  ].filter((el): el is HTMLElement => el !== null);
}

/** A group of checks, each with its pass, warning or fail. */
function checkGroup(title: string, results: Row[], kind = 'category'): HTMLElement {
  return h(
    'section',
    { class: `group group-${kind}` },
    h(kind === 'insight' ? 'h4' : 'h3', {}, title),
    h(
      'ul',
      { class: 'checklist' },
      results.map((check) =>
        h(
          'li',
          { class: `check-${str(check.status)}`, 'data-check': str(check.id) },
          h('span', { class: 'check-status' }, STATUS_WORD[str(check.status)] ?? str(check.status)),
          h(
            'div',
            {},
            h('code', {}, str(check.id)),
            h('p', {}, str(check.message)),
            check.value ? h('p', { class: 'muted check-value' }, String(check.value)) : null,
          ),
        ),
      ),
    ),
  );
}
