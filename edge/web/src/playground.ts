/** One page per operation: a form built from the contract's input schema, and a result view. */
import { ApiError, call, ensureClearance } from './api.js';
import { isUnavailable, isUnavailableError, rememberAvailability } from './availability.js';
import { h, show } from './dom.js';
import { type Document, inputFields, type Operation, openApi, operations, type Schema } from './openapi.js';
import { renderResult } from './results.js';

/** The operations a visitor can try, in the order the spec lists them. */
export const PLAYGROUND = [
  ['down-check', 'Down check'],
  ['meta-scan', 'Meta tag audit'],
  ['ssl-scan', 'SSL scan'],
  ['link-extract', 'Link extract'],
  ['link-extract-crawl', 'Link extract (site crawl)'],
  ['broken-links', 'Broken links'],
  ['broken-links-crawl', 'Broken links (site crawl)'],
  ['screenshot', 'Screenshot'],
  ['url-to-pdf', 'URL to PDF'],
  ['xbel-decrypt', 'XBEL decrypt'],
  ['xbel-to-html', 'XBEL to HTML'],
] as const;

export function playgroundIndex(main: HTMLElement): void {
  show(
    main,
    h('h1', {}, 'Playground'),
    h('p', {}, 'Try every operation in your browser. Anonymous visitors get a small daily allowance.'),
    h(
      'ul',
      { class: 'cards' },
      PLAYGROUND.map(([id, title]) =>
        h(
          'li',
          {},
          h('a', { href: `/play/${id}` }, title),
          isUnavailable(id) ? h('span', { class: 'badge', 'data-unavailable': id }, 'unavailable') : null,
        ),
      ),
    ),
  );
}

const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type[0] : schema.type);
/** Fields that hold a secret: typed unseen, never offered for autofill elsewhere. */
const SECRET_FIELDS = new Set(['password', 'key']);

function control(name: string, schema: Schema, required: boolean): HTMLElement {
  const id = `field-${name}`;
  const hint = schema.description ? h('small', { id: `${id}-hint` }, schema.description) : null;
  const common = { id, name, required, 'aria-describedby': hint ? `${id}-hint` : undefined };
  let input: HTMLElement;
  if (schema.format === 'binary' || schema.contentMediaType) input = h('input', { ...common, type: 'file' });
  else if (schema.enum)
    input = h(
      'select',
      common,
      schema.enum.map((v) => h('option', { value: String(v), selected: v === schema.default }, String(v))),
    );
  else if (typeOf(schema) === 'boolean')
    return h(
      'div',
      { class: 'check' },
      h('input', { ...common, type: 'checkbox', checked: schema.default === true }),
      h('label', { for: id }, name),
      hint,
    );
  else if (typeOf(schema) === 'integer' || typeOf(schema) === 'number')
    input = h('input', {
      ...common,
      type: 'number',
      min: schema.minimum,
      max: schema.maximum,
      step: typeOf(schema) === 'integer' ? 1 : 'any',
      value: schema.default as number | undefined,
    });
  else if (typeOf(schema) === 'object' || typeOf(schema) === 'array')
    input = h(
      'textarea',
      { ...common, rows: 3, placeholder: 'JSON' },
      schema.default ? JSON.stringify(schema.default) : '',
    );
  else if (SECRET_FIELDS.has(name)) input = h('input', { ...common, type: 'password', autocomplete: 'off' });
  // A URL field stays text: the API takes "example.com" (https is meant), which type=url refuses.
  else
    input = h('input', {
      ...common,
      type: 'text',
      inputmode: name === 'url' ? 'url' : undefined,
      value: schema.default as string | undefined,
    });
  return h('div', { class: 'field' }, h('label', { for: id }, name, required ? ' (required)' : ''), input, hint);
}

/** The form's values as the route takes them: typed JSON, a query string, or multipart. */
function collect(form: HTMLFormElement, fields: ReturnType<typeof inputFields>, multipart: boolean) {
  const json: Record<string, unknown> = {};
  const data = new FormData();
  for (const { name } of fields) {
    const el = form.elements.namedItem(name) as HTMLInputElement | null;
    if (!el) continue;
    if (el.type === 'file') {
      if (el.files?.[0]) data.append(name, el.files[0]);
      continue;
    }
    if (el.type === 'checkbox') json[name] = el.checked;
    else if (el.value === '') continue;
    else if (el.type === 'number') json[name] = Number(el.value);
    else if (el.tagName === 'TEXTAREA') json[name] = JSON.parse(el.value);
    else json[name] = el.value;
    if (multipart) data.append(name, String(json[name]));
  }
  return { json, data };
}

export async function playground(main: HTMLElement, operationId: string): Promise<void> {
  const title = PLAYGROUND.find(([id]) => id === operationId)?.[1];
  const doc: Document = await openApi();
  const op: Operation | undefined = operations(doc).find(
    (o) => o.operationId === operationId && o.path.startsWith('/v1/'),
  );
  if (!title || !op) {
    show(main, h('h1', {}, 'Not found'), h('p', {}, 'There is no such operation.'));
    return;
  }
  const fields = inputFields(doc, op);
  const multipart = !!op.requestBody?.content['multipart/form-data'];
  const notice = isUnavailable(operationId)
    ? h('p', { class: 'notice', role: 'status' }, 'Unavailable: this operation did not answer a moment ago; try again.')
    : null;
  const result = h('section', { class: 'result', 'aria-live': 'polite', 'aria-label': 'Result' });
  const button = h('button', { type: 'submit' }, 'Run');
  const form = h(
    'form',
    { class: 'play' },
    fields.map((f) => control(f.name, f.schema, f.required)),
    h('p', { id: 'challenge-status', class: 'muted', role: 'status' }),
    button,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    show(result, h('p', { class: 'muted' }, 'Working…'));
    try {
      const { json, data } = collect(form, fields, multipart);
      const path = op.path.replace(/^\/v1/, '');
      await ensureClearance();
      const reply =
        op.method === 'GET'
          ? await call<unknown>('GET', `${path}?${new URLSearchParams(json as Record<string, string>)}`)
          : await call<unknown>('POST', path, multipart ? data : json);
      rememberAvailability(operationId, true);
      notice?.remove();
      await renderResult(result, operationId, reply);
    } catch (err) {
      if (isUnavailableError(err)) rememberAvailability(operationId, false);
      showError(result, err);
    } finally {
      button.disabled = false;
    }
  });
  show(main, h('h1', {}, title), notice, op.summary ? h('p', {}, op.summary) : null, form, result);
}

/** A failure with the API's message and code; a missing or stopped service as a notice, not an error. */
export function showError(container: Element, err: unknown): void {
  const unavailable = err instanceof ApiError && (err.status === 501 || err.status === 503);
  show(
    container,
    h(
      'div',
      { class: unavailable ? 'notice' : 'error', role: unavailable ? 'status' : 'alert' },
      h('strong', {}, unavailable ? 'Unavailable: ' : 'Error: '),
      err instanceof ApiError ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err),
    ),
  );
}
