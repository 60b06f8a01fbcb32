import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as renderFields from '@webutil/proto/webutil/render/v1/render.fields';
import { expect } from 'chai';

/**
 * The contract's request direction (decision 0313): a render request field's bounds are declared
 * once, in render.proto, and the REST contract (docs/openapi.json) states the same; the render
 * service's checks take them from the same generated table.
 */
type Bounds = { min?: number; max?: number; maxItems?: number; maxBytes?: number; maxChars?: number };
type FieldFacts = { type: string; message?: string; bounds?: Bounds };
type Messages = Record<string, unknown>;
type JsonSchema = {
  $ref?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
};

const REPO = path.resolve(import.meta.dirname, '../..');
/** Where a REST request field's name is not its proto field's JSON name. */
const REST_NAMES: Record<string, string> = { delayMs: 'delay', cacheTtlSeconds: 'cacheTtl' };
/** Each render route's request message; PageOptions' fields sit beside the request's own in REST. */
const ROUTES = { '/v1/screenshot': 'ScreenshotRequest', '/v1/url-to-pdf': 'UrlToPdfRequest' } as const;

const fieldsOf = (messages: Messages, name: string) =>
  (messages[name] as { fields: Record<string, FieldFacts> }).fields;

/** What the JSON Schema must say for each bound (a margin's mm are checked by the edge's own rule). */
function expected(bounds: Bounds, type: string): Partial<Record<keyof JsonSchema, number>> {
  if (type === 'string' && bounds.min !== undefined) return {};
  return {
    ...(bounds.min !== undefined ? { minimum: bounds.min } : {}),
    ...(bounds.max !== undefined ? { maximum: bounds.max } : {}),
    ...(bounds.maxItems !== undefined ? { maxItems: bounds.maxItems } : {}),
    ...(bounds.maxChars !== undefined || bounds.maxBytes !== undefined
      ? { maxLength: bounds.maxChars ?? bounds.maxBytes }
      : {}),
  };
}

/** Each place the document's render request schemas differ from the proto's bounds. */
function requestBoundsDrift(messages: Messages, document: { paths: Record<string, unknown>; components: unknown }) {
  const resolve = (schema: JsonSchema): JsonSchema =>
    schema.$ref
      ? resolve(
          (document.components as { schemas: Record<string, JsonSchema> }).schemas[
            schema.$ref.split('/').pop() as string
          ] as JsonSchema,
        )
      : schema;
  const drift: string[] = [];
  const compare = (where: string, message: string, rest: JsonSchema) => {
    for (const [name, facts] of Object.entries(fieldsOf(messages, message))) {
      const property = rest.properties?.[REST_NAMES[name] ?? name];
      if (facts.type === 'message' && facts.message && property && name !== 'page') {
        compare(`${where}.${name}`, facts.message.split('.').pop() as string, resolve(property));
      }
      if (!facts.bounds) continue;
      if (!property) {
        drift.push(`${where}.${name}: bounded in the proto, absent from the request schema`);
        continue;
      }
      const schema = resolve(property);
      for (const [key, value] of Object.entries(expected(facts.bounds, facts.type))) {
        const stated = key === 'maxLength' && schema.items ? schema.items.maxLength : schema[key as keyof JsonSchema];
        if (stated !== value)
          drift.push(`${where}.${name}: ${key} ${String(stated)} in the document, ${value} in the proto`);
      }
    }
  };
  for (const [route, message] of Object.entries(ROUTES)) {
    const post = (
      document.paths[route] as { post: { requestBody: { content: Record<string, { schema: JsonSchema }> } } }
    ).post;
    const body = resolve(post.requestBody.content['application/json']?.schema as JsonSchema);
    compare(route, message, body);
    compare(route, 'PageOptions', body);
  }
  return drift;
}

const committedDocument = () => JSON.parse(readFileSync(path.join(REPO, 'docs/openapi.json'), 'utf8'));

describe('the contract, request direction: render options bounds', () => {
  it('docs/openapi.json states every render request bound render.proto declares', () => {
    expect(requestBoundsDrift(renderFields, committedDocument())).to.deep.equal([]);
  });

  it('a bound edited in render.proto is drift until the document is regenerated', function () {
    this.timeout(60_000);
    const work = mkdtempSync(path.join(tmpdir(), 'request-bounds-'));
    try {
      for (const part of ['buf.yaml', 'webutil', 'third_party', 'write-fields.mjs']) {
        cpSync(path.join(REPO, 'proto', part), path.join(work, part), { recursive: true });
      }
      symlinkSync(path.join(REPO, 'node_modules'), path.join(work, 'node_modules'));
      // write-fields.mjs writes beside ts-proto's output, whose folders it expects.
      for (const service of readdirSync(path.join(work, 'webutil'))) {
        mkdirSync(path.join(work, 'gen/webutil', service, 'v1'), { recursive: true });
      }
      const proto = path.join(work, 'webutil/render/v1/render.proto');
      const source = readFileSync(proto, 'utf8');
      const edited = source.replace(
        'delay_ms = 4 [(webutil.rest.v1.bounds) = {min: 0, max: 10000}]',
        'delay_ms = 4 [(webutil.rest.v1.bounds) = {min: 0, max: 20000}]',
      );
      expect(edited, 'the edit applies to render.proto as written').to.not.equal(source);
      writeFileSync(proto, edited);
      const buf = path.join(REPO, 'node_modules/.bin/buf');
      execFileSync(buf, ['build', '--as-file-descriptor-set', '-o', 'gen/descriptors.binpb'], { cwd: work });
      execFileSync(process.execPath, ['write-fields.mjs'], { cwd: work });
      const generated = readFileSync(path.join(work, 'gen/webutil/render/v1/render.fields.ts'), 'utf8');
      const messages = evaluateFields(generated);
      expect(requestBoundsDrift(messages, committedDocument())).to.deep.equal([
        '/v1/screenshot.delayMs: maximum 10000 in the document, 20000 in the proto',
        '/v1/url-to-pdf.delayMs: maximum 10000 in the document, 20000 in the proto',
      ]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

/** The generated table's objects (plain `export const X = {...} as const;` literals, no imports). */
function evaluateFields(source: string): Messages {
  const body = source.replace(/^export const (\w+) =/gm, 'const $1 = out.$1 =').replace(/ as const;/g, ';');
  return new Function('out', `${body}\nreturn out;`)({}) as Messages;
}
