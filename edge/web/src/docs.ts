/**
 * The API reference, from the edge's OpenAPI document: a quick start per credential, the error
 * table, a search, and per route its cost and rate, inputs, success body with an example, its
 * failures and a curl example; then every schema of the document's components, linked from where
 * it is used.
 * Written here rather than bundled: Redoc and Scalar inject <style> elements, which the CSP refuses
 * (docs/decisions/0051-api-docs-renderer.md).
 */
import { ANONYMOUS } from './catalog.js';
import { h, show } from './dom.js';
import { type Document, inputFields, type Operation, openApi, operations, resolve, type Schema } from './openapi.js';

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
function successBody(doc: Document, op: Operation): HTMLElement[] {
  const [status, response] = Object.entries(op.responses).find(([code]) => code.startsWith('2')) ?? [];
  const schema = response?.content?.['application/json']?.schema;
  if (!status || !schema) return [];
  return [
    h('h3', {}, `Response ${status}`),
    schemaView(schema),
    h(
      'details',
      { class: 'example' },
      h('summary', {}, 'Example response'),
      h('pre', { tabindex: 0 }, JSON.stringify(exampleOf(doc, schema), null, 2)),
    ),
  ];
}

/** A made-up value of a schema: its example, default or first enum value, else one of its type. */
function exampleOf(doc: Document, schema: Schema, name = '', depth = 0): unknown {
  const s = resolve(doc, schema);
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.enum?.length) return s.enum[0];
  if (depth > 6) return null;
  const [variant] = s.anyOf ?? s.oneOf ?? [];
  if (variant) return exampleOf(doc, variant, name, depth + 1);
  if (s.allOf?.length)
    return Object.assign({}, ...s.allOf.map((part) => exampleOf(doc, part, name, depth + 1) as object));
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (type === 'object' || s.properties)
    return Object.fromEntries(
      Object.entries(s.properties ?? {}).map(([key, prop]) => [key, exampleOf(doc, prop, key, depth + 1)]),
    );
  if (type === 'array') return s.items ? [exampleOf(doc, s.items, name, depth + 1)] : [];
  if (type === 'integer' || type === 'number') return s.minimum ?? 0;
  if (type === 'boolean') return true;
  if (/url$/i.test(name)) return 'https://example.com/';
  if (/At$/.test(name) || s.format === 'date-time') return '2026-01-01T00:00:00.000Z';
  return name ? `<${name}>` : '<string>';
}

/** What a call costs, and what it counts against. */
function costLine(op: Operation): string {
  const credits = op['x-credits'] ?? 0;
  const cost = credits ? `${credits} credit${credits === 1 ? '' : 's'} a success` : 'Free';
  if (/\/crawl\/\{/.test(op.path)) return `${cost}; polls have their own bound (240 a minute per client).`;
  return `${cost}; counts toward your plan’s requests per minute (anonymous: ${ANONYMOUS.requestsPerMinute}).`;
}

/** The route's failures: status, meaning and codes, as the contract lists them. */
function failures(op: Operation): HTMLElement | null {
  const rows = Object.entries(op.responses).filter(([status]) => !status.startsWith('2'));
  if (!rows.length) return null;
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': `Failures of ${op.operationId}` },
    h(
      'table',
      { class: 'failures' },
      h('caption', {}, 'Failures'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'Meaning and codes'))),
      h(
        'tbody',
        {},
        rows.map(([status, response]) => h('tr', {}, h('td', {}, status), h('td', {}, response.description ?? ''))),
      ),
    ),
  );
}

const ERRORS: [number, string, string][] = [
  [400, 'invalid_request, invalid_url, …', 'The input is wrong; the message says which field and why.'],
  [401, 'unauthenticated, challenge_required, …', 'No valid credential, or a browser call needs the bot check.'],
  [402, 'insufficient_credits', 'Not enough credits: wait for the cycle to renew or add a top-up.'],
  [403, 'forbidden, csrf_failed, plan_required', 'The credential may not do this.'],
  [404, 'not_found', 'No such route, job or file (jobs and files expire).'],
  [413, 'payload_too_large', 'The body or upload is too large.'],
  [429, 'rate_limited', 'Too many requests: wait the seconds in Retry-After.'],
  [500, 'internal_error', 'Our failure; no credit is spent.'],
  [503, 'service_unavailable', 'A service is down or busy: try again shortly (Retry-After when known).'],
  [504, 'timeout', 'The operation took too long; no credit is spent.'],
];

function quickStart(): HTMLElement {
  const base = location.origin;
  return h(
    'section',
    { id: 'quick-start', class: 'quick-start' },
    h('h2', {}, 'Quick start'),
    h(
      'div',
      { class: 'starts' },
      h(
        'article',
        {},
        h('h3', {}, 'With an API key'),
        h('p', {}, 'Starter plan or higher: create a key on your account page. No bot check.'),
        h(
          'pre',
          { tabindex: 0, 'aria-label': 'curl with an API key' },
          `curl -H "Authorization: Bearer $WU_API_KEY" "${base}/v1/down-check?url=https://example.com"`,
        ),
      ),
      h(
        'article',
        {},
        h('h3', {}, 'With a session'),
        h(
          'p',
          {},
          'Sign in on this site; the pages call ',
          h('code', {}, '/api/v1'),
          ' with the session cookie and send X-CSRF-Token on calls that spend credits.',
        ),
        h(
          'pre',
          { tabindex: 0, 'aria-label': 'curl with a session' },
          `curl -b "wu_session=$WU_SESSION" "${base}/v1/quota"`,
        ),
      ),
      h(
        'article',
        {},
        h('h3', {}, 'Anonymous'),
        h(
          'p',
          {},
          `No credential: ${ANONYMOUS.creditsPerDay} credits a day per IP address. Browsers solve a short `,
          'challenge (POST /v1/challenge) before calls that spend credits; the free reads need nothing.',
        ),
        h('pre', { tabindex: 0, 'aria-label': 'curl without a credential' }, `curl "${base}/v1/quota"`),
      ),
    ),
    h('h2', { id: 'errors' }, 'Errors'),
    h(
      'p',
      {},
      'Every failure answers ',
      h('code', {}, '{"success":false,"error":{"code":"…","message":"…"}}'),
      ' and spends no credit. Every response carries X-Credits-Remaining.',
    ),
    h(
      'div',
      { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Error statuses' },
      h(
        'table',
        { id: 'error-table' },
        h('caption', {}, 'Statuses and codes'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Status', 'Codes', 'Meaning'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        h(
          'tbody',
          {},
          ERRORS.map(([status, codes, meaning]) =>
            h('tr', {}, h('td', {}, status), h('td', {}, h('code', {}, codes)), h('td', {}, meaning)),
          ),
        ),
      ),
    ),
  );
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
  const search = h('input', { id: 'docs-search', type: 'search', placeholder: 'screenshot, 429, jobId…' });
  const found = h('p', { class: 'muted', role: 'status' });
  search.addEventListener('input', () => {
    const needle = search.value.trim().toLowerCase();
    let shown = 0;
    for (const section of main.querySelectorAll<HTMLElement>('section.route, section.component')) {
      const match = !needle || (section.textContent ?? '').toLowerCase().includes(needle);
      section.hidden = !match;
      if (match) shown++;
    }
    found.textContent = needle ? `${shown} section${shown === 1 ? '' : 's'} match.` : '';
  });
  show(
    main,
    h('h1', {}, `${doc.info.title} ${doc.info.version}`),
    h('p', {}, 'The full contract: ', h('a', { href: '/v1/openapi.json' }, 'openapi.json'), '.'),
    quickStart(),
    h('h2', {}, 'Reference'),
    h('div', { class: 'field' }, h('label', { for: 'docs-search' }, 'Search the reference'), search),
    found,
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
        h('p', { class: 'cost-line' }, costLine(op)),
        inputFields(doc, op).length ? [h('h3', {}, 'Request'), fieldList(inputFields(doc, op))] : null,
        successBody(doc, op),
        h('p', {}, 'Responses: ', Object.keys(op.responses).join(', ')),
        failures(op),
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
