/** The edge's OpenAPI document, fetched once: the playground's forms and the docs come from it. */
import { API } from './api.js';

export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
  contentMediaType?: string;
  example?: unknown;
  allOf?: Schema[];
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
  pattern?: string;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema; description?: string }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema: Schema }> }>;
  security?: Record<string, string[]>[];
  /** Credits a success spends; with a price by size, its first block's. */
  'x-credits'?: number;
  /** A price by size: each further block of `size` units begun costs `credits` more. */
  'x-credits-per-block'?: { size: number; unit: string; credits: number; maxUnits: number };
}

const count = (n: number, word: string) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;

/** An operation's price in a few words, from the contract: "2 credits", or "2 credits per 1,000 bookmarks". */
export function priceOf(op: Pick<Operation, 'x-credits' | 'x-credits-per-block'>): string {
  const credits = count(op['x-credits'] ?? 0, 'credit');
  const block = op['x-credits-per-block'];
  return block ? `${credits} per ${block.size.toLocaleString('en')} ${block.unit}` : credits;
}

/** A price by size in a sentence, from the contract; undefined for a fixed price. */
export function sizedPriceOf(op: Pick<Operation, 'x-credits' | 'x-credits-per-block'>): string | undefined {
  const block = op['x-credits-per-block'];
  if (!block) return undefined;
  const first = op['x-credits'] ?? 0;
  const n = (value: number) => value.toLocaleString('en');
  const most = first + (Math.ceil(block.maxUnits / block.size) - 1) * block.credits;
  return (
    `${count(first, 'credit')} for the first ${n(block.size)} ${block.unit}, ${n(block.credits)} more for each ` +
    `further ${n(block.size)} begun (${n(most)} for ${n(block.maxUnits)}). Without credits for the whole file the ` +
    'check is refused before it starts, and nothing is spent.'
  );
}

export interface Document {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>>;
  components?: { schemas?: Record<string, Schema> };
}

let loaded: Promise<Document> | undefined;
export const openApi = (): Promise<Document> => {
  loaded ??= fetch(`${API}/openapi.json`).then((res) => res.json() as Promise<Document>);
  return loaded;
};

export function operations(doc: Document): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
  );
}

/** Follows a local $ref. */
export function resolve(doc: Document, schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split('/').pop() ?? '';
  return resolve(doc, doc.components?.schemas?.[name] ?? {});
}

/** The input fields of an operation: query parameters, or the JSON/multipart body's properties. */
export function inputFields(doc: Document, op: Operation): { name: string; schema: Schema; required: boolean }[] {
  const query = (op.parameters ?? [])
    .filter((p) => p.in === 'query')
    .map((p) => ({
      name: p.name,
      schema: { ...resolve(doc, p.schema), description: p.description },
      required: !!p.required,
    }));
  const content = op.requestBody?.content;
  const body = content?.['application/json'] ?? content?.['multipart/form-data'];
  if (!body) return query;
  const schema = resolve(doc, body.schema);
  return Object.entries(schema.properties ?? {}).map(([name, field]) => ({
    name,
    schema: resolve(doc, field),
    required: schema.required?.includes(name) ?? false,
  }));
}
