/**
 * Parsers the export tests read the files back with, none of them the writer: the SARIF 2.1.0 JSON
 * schema (draft-04) vendored in test/vendor from the npm package @microsoft/jest-sarif
 * (lib/schemas/sarif-2.1.0-rtm.5.json), checked by ajv; saxes, a strict XML parser that throws on
 * anything not well-formed.
 */
import { readFileSync } from 'node:fs';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { SaxesParser } from 'saxes';

const schema = JSON.parse(readFileSync(new URL('./vendor/sarif-schema-2.1.0.json', import.meta.url), 'utf8'));
// Non-unicode patterns: the published schema's `language` pattern has a stray `]` only the u flag rejects.
const ajv = new AjvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats.default(ajv);

/** True when the log is valid SARIF 2.1.0 (the errors then in validateSarif.errors). */
export const validateSarif = ajv.compile(schema);

export interface XmlNode {
  name: string;
  attributes: Record<string, string>;
  text: string;
  children: XmlNode[];
}

/** The document's root element, read by saxes. */
export function parseXml(text: string): XmlNode {
  const parser = new SaxesParser();
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  parser.on('opentag', (tag) => {
    const node: XmlNode = {
      name: tag.name,
      attributes: tag.attributes as Record<string, string>,
      text: '',
      children: [],
    };
    stack.at(-1)?.children.push(node);
    root ??= node;
    stack.push(node);
  });
  parser.on('text', (t) => {
    const top = stack.at(-1);
    if (top) top.text += t;
  });
  parser.on('closetag', () => void stack.pop());
  parser.write(text).close();
  if (!root) throw new Error('no root element');
  return root;
}

/** Every element of the tree, document order. */
export const elementsOf = (node: XmlNode): XmlNode[] => [node, ...node.children.flatMap(elementsOf)];
