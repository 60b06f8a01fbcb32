// Writes src/generated/operations.ts from the contract: each operation's method, path, credits
// (x-credits) and options (query parameters and JSON body fields, with their types), so the client
// knows which calls spend credits (they carry an Idempotency-Key) and the CLI offers every option.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const document = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
const resolve = (schema) => (schema?.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema);

/** An option's kind, from its schema: what a command line's text is turned into. */
function kindOf(schema) {
  const s = resolve(schema) ?? {};
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return variants.every((v) => ['integer', 'number'].includes(resolve(v).type)) ? 'number' : 'text';
  if (s.type === 'object') {
    const names = Object.keys(s.properties ?? {});
    if (names.includes('width') && names.includes('height')) return 'size';
    if (!names.length && s.additionalProperties) return 'map';
    return 'json';
  }
  if (s.type === 'array') return kindOf(s.items) === 'number' ? 'numbers' : 'list';
  if (s.type === 'integer' || s.type === 'number') return 'number';
  if (s.type === 'boolean') return 'flag';
  return 'text';
}

function optionOf(name, schema, where, required) {
  const s = resolve(schema) ?? {};
  return {
    name,
    in: where,
    kind: kindOf(s),
    required: Boolean(required),
    ...(s.enum ? { choices: s.enum } : {}),
    ...(s.default !== undefined ? { default: s.default } : {}),
    description: (s.description ?? '').split(/(?<=\.)\s/)[0],
  };
}

const operations = {};
for (const [path, item] of Object.entries(document.paths)) {
  for (const [method, operation] of Object.entries(item)) {
    const options = [];
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in === 'query')
        options.push(optionOf(parameter.name, parameter.schema, 'query', parameter.required));
    }
    const body = resolve(operation.requestBody?.content?.['application/json']?.schema);
    for (const [name, schema] of Object.entries(body?.properties ?? {})) {
      options.push(optionOf(name, schema, 'body', body.required?.includes(name)));
    }
    operations[operation.operationId] = {
      method: method.toUpperCase(),
      path,
      credits: operation['x-credits'] ?? 0,
      summary: operation.summary ?? '',
      options,
    };
  }
}
mkdirSync(new URL('./src/generated/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('./src/generated/operations.ts', import.meta.url),
  `// Generated from docs/openapi.json by generate-operations.mjs; do not edit.\n` +
    `export interface OperationOption {\n  name: string;\n  in: 'query' | 'body';\n` +
    `  kind: 'text' | 'number' | 'flag' | 'list' | 'numbers' | 'size' | 'map' | 'json';\n` +
    `  required: boolean;\n  choices?: readonly (string | number)[];\n` +
    `  default?: unknown;\n  description: string;\n}\n` +
    `export interface Operation {\n  method: string;\n  path: string;\n  credits: number;\n  summary: string;\n` +
    `  options: readonly OperationOption[];\n}\n` +
    `export const OPERATIONS: Record<string, Operation> = ${JSON.stringify(operations, null, 2)};\n` +
    `export const CONTRACT_VERSION = ${JSON.stringify(document.info.version)};\n`,
);
