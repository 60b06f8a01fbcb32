/** The API reference, from the edge's OpenAPI document, with a curl example per route. */
import { h, show } from './dom.js';
import { type Document, inputFields, type Operation, openApi, operations } from './openapi.js';

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
        inputFields(doc, op).length
          ? h(
              'ul',
              {},
              inputFields(doc, op).map((f) =>
                h(
                  'li',
                  {},
                  h('code', {}, f.name),
                  f.required ? ' (required)' : '',
                  f.schema.default !== undefined ? ` default ${JSON.stringify(f.schema.default)}` : '',
                  f.schema.description ? `: ${f.schema.description}` : '',
                ),
              ),
            )
          : null,
        h('p', {}, 'Responses: ', Object.keys(op.responses).join(', ')),
        h('pre', { class: 'curl', tabindex: 0, 'aria-label': `curl example for ${op.operationId}` }, curl(doc, op)),
      ),
    ),
  );
}
