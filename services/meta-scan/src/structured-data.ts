/**
 * JSON-LD read from the page (head and body): each block parsed (a syntax error reported with its line and
 * column), the @types found, and the properties the common types require (docs/grading.md,
 * "Structured data"; the table below is the only copy the checks apply).
 */
import type { JsonLdBlock } from './page-head.js';

/** What a type needs: every property of `all`, and at least one of each group in `oneOf`. */
interface Requirement {
  all: string[];
  oneOf?: string[][];
}

export const REQUIRED_PROPERTIES: Readonly<Record<string, Requirement>> = {
  Article: { all: ['headline', 'author', 'datePublished', 'image'] },
  NewsArticle: { all: ['headline', 'author', 'datePublished', 'image'] },
  BlogPosting: { all: ['headline', 'author', 'datePublished', 'image'] },
  Product: { all: ['name'], oneOf: [['offers', 'review', 'aggregateRating']] },
  Organization: { all: ['name', 'url'] },
  BreadcrumbList: { all: ['itemListElement'] },
  FAQPage: { all: ['mainEntity'] },
  WebSite: { all: ['name', 'url'] },
};

/** Nodes looked at, at most, across every block: a hostile page cannot make the walk long. */
const MAX_NODES = 500;

export interface StructuredData {
  blocks: number;
  /** One message per block that is not valid JSON (or was cut off), with where. */
  syntaxErrors: string[];
  /** Every @type found, in order, each once. */
  types: string[];
  /** One message per typed node missing what its type requires. */
  missing: string[];
}

export function readStructuredData(blocks: readonly JsonLdBlock[]): StructuredData {
  const result: StructuredData = { blocks: blocks.length, syntaxErrors: [], types: [], missing: [] };
  const nodes: Record<string, unknown>[] = [];
  blocks.forEach((block, i) => {
    const where = `block ${i + 1}`;
    if (block.truncated) {
      result.syntaxErrors.push(`${where} is longer than the audit reads; it was not parsed`);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(block.text);
    } catch (err) {
      result.syntaxErrors.push(`${where}: ${syntaxError(block.text, err as SyntaxError)}`);
      return;
    }
    collect(parsed, nodes);
  });
  for (const node of nodes) {
    for (const type of typesOf(node)) {
      if (!result.types.includes(type)) result.types.push(type);
      const required = REQUIRED_PROPERTIES[type];
      if (!required) continue;
      const lacking = required.all.filter((p) => isEmpty(node[p]));
      for (const group of required.oneOf ?? []) {
        if (group.every((p) => isEmpty(node[p]))) lacking.push(group.join(' or '));
      }
      lacking.push(...nestedProblems(type, node));
      if (lacking.length) result.missing.push(`${type} lacks ${lacking.join(', ')}`);
    }
  }
  return result;
}

/** The parser's message with its position (when V8 gives one) turned into a line and column. */
function syntaxError(text: string, err: SyntaxError): string {
  const message = err.message.replace(/^JSON\.parse: /, '');
  const at = /at position (\d+)/.exec(message);
  if (!at) return message;
  const offset = Number(at[1]);
  const before = text.slice(0, offset).split('\n');
  const line = before.length;
  const column = (before.at(-1)?.length ?? 0) + 1;
  // Newer V8 adds "(line L column C)" after the position: the position alone is what is read here.
  const what = message.replace(/ in JSON at position \d+.*$/, '');
  return `${what} at line ${line}, column ${column}`;
}

/** The nodes of a parsed block: the value itself, array items and @graph members. */
function collect(value: unknown, into: Record<string, unknown>[]): void {
  if (into.length >= MAX_NODES) return;
  if (Array.isArray(value)) {
    for (const item of value) collect(item, into);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const node = value as Record<string, unknown>;
  if ('@type' in node) into.push(node);
  if (Array.isArray(node['@graph'])) collect(node['@graph'], into);
}

function typesOf(node: Record<string, unknown>): string[] {
  const type = node['@type'];
  const list = Array.isArray(type) ? type : [type];
  // "https://schema.org/Article" and "schema:Article" name Article too.
  return list.filter((t): t is string => typeof t === 'string').map((t) => t.replace(/^.*[/:#]/, ''));
}

const isEmpty = (value: unknown) =>
  value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

/** The parts of a list type that must be filled in too: breadcrumb items and FAQ answers. */
function nestedProblems(type: string, node: Record<string, unknown>): string[] {
  const items = (value: unknown) => (Array.isArray(value) ? value : value === undefined ? [] : [value]);
  if (type === 'BreadcrumbList') {
    const bad = items(node.itemListElement).filter((item) => {
      const i = item as Record<string, unknown> | null;
      return !i || typeof i !== 'object' || isEmpty(i.position) || (isEmpty(i.name) && isEmpty(i.item));
    }).length;
    return bad ? [`position and name on ${bad} itemListElement entr${bad === 1 ? 'y' : 'ies'}`] : [];
  }
  if (type === 'FAQPage') {
    const bad = items(node.mainEntity).filter((q) => {
      const question = q as Record<string, unknown> | null;
      const answer = question?.acceptedAnswer as Record<string, unknown> | undefined;
      return !question || isEmpty(question.name) || !answer || isEmpty(answer.text);
    }).length;
    return bad ? [`name and acceptedAnswer.text on ${bad} question${bad === 1 ? '' : 's'}`] : [];
  }
  return [];
}
