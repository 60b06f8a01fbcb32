/** The API reference, from the edge's OpenAPI document, with a curl example per route. */
import { h, show } from './dom.js';
import { type Document, inputFields, type Operation, openApi, operations } from './openapi.js';

function curl(doc: Document, op: Operation): string {
  const base = `${location.origin}${op.path.replace(/\{(\w+)\}/g, '<$1>')}`;
  const fields = inputFields(doc, op).filter((f) => f.required);
  const auth = '-H "Authorization: Bearer $WU_API_KEY"';
  if (op.method === 'GET') {
    const query = fields.map((f) => `${f.name}=${f.name === 'url' ? 'https://example.com' : '...'}`).join('&');
    return `curl ${auth} "${base}${query ? `?${query}` : ''}"`;
  }
  if (op.requestBody?.content['multipart/form-data'])
    return `curl ${auth} ${fields.map((f) => `-F "${f.name}=@file"`).join(' ')} "${base}"`;
  const body = Object.fromEntries(fields.map((f) => [f.name, f.name === 'url' ? 'https://example.com' : '...']));
  const method = op.method === 'POST' ? '' : `-X ${op.method} `;
  return `curl ${method}${auth} -H "Content-Type: application/json" -d '${JSON.stringify(body)}' "${base}"`;
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
