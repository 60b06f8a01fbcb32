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
  /** Credits a success spends. */
  'x-credits'?: number;
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
