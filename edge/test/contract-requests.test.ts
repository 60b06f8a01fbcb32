import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as crawlFields from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import * as renderFields from '@webutil/proto/webutil/render/v1/render.fields';
import { expect } from 'chai';

/**
 * The contract's request direction (decision 0313): a request field's bounds are declared once, in
 * its .proto (render options, crawl's link options), and the REST contract (docs/openapi.json)
 * states the same; the services' checks take them from the same generated table.
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
  maxProperties?: number;
  items?: JsonSchema;
  additionalProperties?: JsonSchema;
  properties?: Record<string, JsonSchema>;
};

const REPO = path.resolve(import.meta.dirname, '../..');
/** Where a REST request field's name is not its proto field's JSON name. */
const REST_NAMES: Record<string, string> = { delayMs: 'delay', cacheTtlSeconds: 'cacheTtl' };
/** Each render route's request message; PageOptions' fields sit beside the request's own in REST. */
const ROUTES = { '/v1/screenshot': 'ScreenshotRequest', '/v1/url-to-pdf': 'UrlToPdfRequest' } as const;
/** Each crawl route and the link options (LinkOptions' fields) it takes, beside the request's own fields. */
const LINK_OPTION_ROUTES: Record<string, string[]> = {
  '/v1/broken-links': ['include', 'exclude', 'acceptStatus', 'headers', 'skipFragments'],
  '/v1/broken-links/crawl': ['include', 'exclude', 'acceptStatus', 'headers', 'skipFragments', 'maxPages', 'maxDepth'],
  '/v1/link-extract/crawl': ['include', 'exclude', 'headers', 'maxPages', 'maxDepth'],
};

const fieldsOf = (messages: Messages, name: string) =>
  (messages[name] as { fields: Record<string, FieldFacts> }).fields;

/** What the JSON Schema must say for each bound (a margin's mm are checked by the edge's own rule). */
function expected(bounds: Bounds, type: string): Partial<Record<keyof JsonSchema, number>> {
  if (type === 'string' && bounds.min !== undefined) return {};
  if (type === 'map') {
    return {
      ...(bounds.maxItems !== undefined ? { maxProperties: bounds.maxItems } : {}),
      ...(bounds.maxChars !== undefined ? { maxLength: bounds.maxChars } : {}),
    };
  }
  return {
    ...(bounds.min !== undefined ? { minimum: bounds.min } : {}),
    ...(bounds.max !== undefined ? { maximum: bounds.max } : {}),
    ...(bounds.maxItems !== undefined ? { maxItems: bounds.maxItems } : {}),
    ...(bounds.maxChars !== undefined || bounds.maxBytes !== undefined
      ? { maxLength: bounds.maxChars ?? bounds.maxBytes }
      : {}),
  };
}

/** A route's request body and a proto message whose fields sit in it (all, or only those named). */
type Placement = { route: string; message: string; only?: string[] };
const RENDER_PLACEMENTS: Placement[] = Object.entries(ROUTES).flatMap(([route, message]) => [
  { route, message },
  { route, message: 'PageOptions' },
]);
const CRAWL_PLACEMENTS: Placement[] = Object.entries(LINK_OPTION_ROUTES).map(([route, only]) => ({
  route,
  message: 'LinkOptions',
  only,
}));

/** Each place the document's request schemas differ from the proto's bounds. */
function requestBoundsDrift(
  messages: Messages,
  document: { paths: Record<string, unknown>; components: unknown },
  placements: Placement[] = RENDER_PLACEMENTS,
) {
  const resolve = (schema: JsonSchema): JsonSchema =>
    schema.$ref
      ? resolve(
          (document.components as { schemas: Record<string, JsonSchema> }).schemas[
            schema.$ref.split('/').pop() as string
          ] as JsonSchema,
        )
      : schema;
  const drift: string[] = [];
  const compare = (where: string, message: string, rest: JsonSchema, only?: string[]) => {
    for (const [name, facts] of Object.entries(fieldsOf(messages, message))) {
      if (only && !only.includes(name)) continue;
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
        const element = schema.items ?? schema.additionalProperties;
        const stated = key === 'maxLength' && element ? element.maxLength : schema[key as keyof JsonSchema];
        if (stated !== value)
          drift.push(`${where}.${name}: ${key} ${String(stated)} in the document, ${value} in the proto`);
      }
    }
  };
  for (const { route, message, only } of placements) {
    const post = (
      document.paths[route] as { post: { requestBody: { content: Record<string, { schema: JsonSchema }> } } }
    ).post;
    const body = resolve(post.requestBody.content['application/json']?.schema as JsonSchema);
    compare(route, message, body, only);
  }
  return drift;
}

const committedDocument = () => JSON.parse(readFileSync(path.join(REPO, 'docs/openapi.json'), 'utf8'));

describe('the contract, request direction: request bounds', () => {
  it('docs/openapi.json states every render request bound render.proto declares', () => {
    expect(requestBoundsDrift(renderFields, committedDocument())).to.deep.equal([]);
  });

  it('docs/openapi.json states every link option bound crawl.proto declares, on each crawl route', () => {
    expect(requestBoundsDrift(crawlFields, committedDocument(), CRAWL_PLACEMENTS)).to.deep.equal([]);
    // Each route's options are all there: a bounded option a route takes cannot go unchecked.
    const bounded = Object.entries(crawlFields.LinkOptions.fields).filter(([, f]) => 'bounds' in f);
    expect(bounded.map(([name]) => name)).to.have.members(LINK_OPTION_ROUTES['/v1/broken-links/crawl'] as string[]);
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
