/**
 * The API reference, from the edge's OpenAPI document: per route its inputs, its success body and a
 * curl example; then every schema of the document's components, linked from where it is used.
 * Written here rather than bundled: Redoc and Scalar inject <style> elements, which the CSP refuses
 * (docs/decisions/0051-api-docs-renderer.md).
 */
import { h, show } from './dom.js';
import { type Document, inputFields, type Operation, openApi, operations, type Schema } from './openapi.js';

type Label = (Node | string)[];

/** A schema's type in words; a component it names is a link to that component's section. */
function typeLabel(schema: Schema): Label {
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop() ?? '';
    return [h('a', { href: `#schema-${name}` }, name)];
  }
  if (schema.enum) return [`one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.flatMap((v, i) => [...(i ? [' or '] : []), ...typeLabel(v)]);
  if (schema.type === 'array') return ['array of ', ...(schema.items ? typeLabel(schema.items) : ['any'])];
  if (schema.type === 'object' && !schema.properties) return ['object'];
  return [Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any')];
}

/** One line per field: name, required, type, default, description. */
function fieldList(fields: { name: string; schema: Schema; required: boolean }[]): HTMLElement {
  return h(
    'ul',
    { class: 'schema' },
    fields.map((f) =>
      h(
        'li',
        {},
        h('code', {}, f.name),
        f.required ? ' (required)' : '',
        ': ',
        h('span', { class: 'type' }, typeLabel(f.schema)),
        f.schema.default !== undefined ? `, default ${JSON.stringify(f.schema.default)}` : '',
        f.schema.description ? `. ${f.schema.description}` : '',
      ),
    ),
  );
}

/** An object schema's properties, or the type of any other schema. */
function schemaView(schema: Schema): HTMLElement {
  const props = Object.entries(schema.properties ?? {});
  if (!props.length) return h('p', {}, typeLabel(schema));
  return fieldList(props.map(([name, prop]) => ({ name, schema: prop, required: !!schema.required?.includes(name) })));
}

/** The success reply's body (2xx JSON), as the route answers it (the envelope or the top-level fields). */
function successBody(op: Operation): HTMLElement[] {
  const [status, response] = Object.entries(op.responses).find(([code]) => code.startsWith('2')) ?? [];
  const schema = response?.content?.['application/json']?.schema;
  if (!status || !schema) return [];
  return [h('h3', {}, `Response ${status}`), schemaView(schema)];
}

function curl(doc: Document, op: Operation): string {
  const base = `${location.origin}${op.path.replace(/\{(\w+)\}/g, '<$1>')}`;
  const fields = inputFields(doc, op).filter((f) => f.required);
  const example = (name: string) => (name === 'url' ? 'https://example.com' : '...');
  const schemes = new Set((op.security ?? []).flatMap((entry) => Object.keys(entry)));
  // An API key where the route takes one; else the browser session (and its CSRF token to change state).
  const parts = ['curl'];
  if (op.method === 'DELETE') parts.push('-X DELETE');
  if (schemes.has('apiKey')) parts.push('-H "Authorization: Bearer $WU_API_KEY"');
  else if (schemes.has('session')) {
    parts.push('-b "wu_session=$WU_SESSION"');
    if (op.method !== 'GET') parts.push('-H "X-CSRF-Token: $WU_CSRF_TOKEN"');
  }
  if (op.method === 'GET') {
    const query = fields.map((f) => `${f.name}=${example(f.name)}`).join('&');
    parts.push(`"${base}${query ? `?${query}` : ''}"`);
  } else if (op.requestBody?.content['multipart/form-data']) {
    parts.push(...fields.map((f) => `-F "${f.name}=${f.name === 'file' ? '@bookmarks.xbel' : '...'}"`), `"${base}"`);
  } else {
    const body = Object.fromEntries(fields.map((f) => [f.name, example(f.name)]));
    if (op.method === 'POST') parts.push('-H "Content-Type: application/json"', `-d '${JSON.stringify(body)}'`);
    parts.push(`"${base}"`);
  }
  return parts.join(' ');
}

export async function docs(main: HTMLElement): Promise<void> {
  const doc = await openApi();
  const ops = operations(doc).filter((op) => !op.path.startsWith('/api/v1/'));
  show(
    main,
    h('h1', {}, `${doc.info.title} ${doc.info.version}`),
    h('p', {}, 'The full contract: ', h('a', { href: '/v1/openapi.json' }, 'openapi.json'), '.'),
    h(
      'nav',
      { 'aria-label': 'Routes' },
      h(
        'ul',
        { class: 'toc' },
        ops.map((op) => h('li', {}, h('a', { href: `#${op.operationId}` }, `${op.method} ${op.path}`))),
      ),
    ),
    ops.map((op) =>
      h(
        'section',
        { id: op.operationId, class: 'route' },
        h('h2', {}, h('code', {}, `${op.method} ${op.path}`)),
        op.summary ? h('p', {}, op.summary) : null,
        op.description ? h('p', {}, op.description) : null,
        inputFields(doc, op).length ? [h('h3', {}, 'Request'), fieldList(inputFields(doc, op))] : null,
        successBody(op),
        h('p', {}, 'Responses: ', Object.keys(op.responses).join(', ')),
        h('pre', { class: 'curl', tabindex: 0, 'aria-label': `curl example for ${op.operationId}` }, curl(doc, op)),
      ),
    ),
    h('h2', {}, 'Schemas'),
    Object.entries(doc.components?.schemas ?? {}).map(([name, schema]) =>
      h(
        'section',
        { id: `schema-${name}`, class: 'component' },
        h('h3', {}, name),
        schema.description ? h('p', {}, schema.description) : null,
        schemaView(schema),
      ),
    ),
  );
}
