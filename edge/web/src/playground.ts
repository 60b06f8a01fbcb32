/** One page per operation: a form built from the contract's input schema, and a result view. */
import { ApiError, call, ensureClearance, refreshCredits } from './api.js';
import { isUnavailable, isUnavailableError, rememberAvailability } from './availability.js';
import { toolById } from './catalog.js';
import { h, show } from './dom.js';
import { type Document, inputFields, type Operation, openApi, operations, type Schema } from './openapi.js';
import { followJob, renderResult } from './results.js';

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

/** The form's request as a curl command an API-key caller can paste. */
function curlOf(op: Operation, json: Record<string, unknown>, multipart: boolean): string {
  const url = `${location.origin}${op.path}`;
  const parts = ['curl', '-H "Authorization: Bearer $WU_API_KEY"'];
  const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
  if (op.method === 'GET') {
    const query = new URLSearchParams(
      Object.entries(json).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ).toString();
    parts.push(quote(`${url}${query ? `?${query}` : ''}`));
  } else if (multipart) {
    for (const [k, v] of Object.entries(json)) parts.push(`-F ${quote(`${k}=${String(v)}`)}`);
    parts.push('-F "file=@bookmarks.xbel"', quote(url));
  } else {
    parts.push('-H "Content-Type: application/json"', `-d ${quote(JSON.stringify(json))}`, quote(url));
  }
  return parts.join(' ');
}

export async function playground(main: HTMLElement, operationId: string): Promise<void> {
  const tool = toolById(operationId);
  const doc: Document = await openApi();
  const op: Operation | undefined = operations(doc).find(
    (o) => o.operationId === operationId && o.path.startsWith('/v1/'),
  );
  if (!tool || !op) {
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
  const curlBox = h('div', { class: 'curl-box' });
  const copyStatus = h('span', { class: 'muted', role: 'status' });
  const copyCurl = h('button', { type: 'button', class: 'ghost' }, 'Copy as curl');
  const form = h(
    'form',
    { class: 'play' },
    fields.map((f) => control(f.name, f.schema, f.required)),
    h('p', { id: 'challenge-status', class: 'muted', role: 'status' }),
    h('div', { class: 'form-actions' }, button, copyCurl, copyStatus),
    curlBox,
  );
  copyCurl.addEventListener('click', async () => {
    let command: string;
    try {
      command = curlOf(op, collect(form, fields, multipart).json, multipart);
    } catch (err) {
      showError(curlBox, err);
      return;
    }
    show(curlBox, h('pre', { class: 'curl', tabindex: 0, 'aria-label': 'The request as curl' }, command));
    try {
      await navigator.clipboard.writeText(command);
      copyStatus.textContent = 'Copied.';
    } catch {
      copyStatus.textContent = 'Select the command below to copy it.';
    }
  });
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
      void refreshCredits();
      await renderResult(result, operationId, reply, json);
    } catch (err) {
      if (isUnavailableError(err)) rememberAvailability(operationId, false);
      void refreshCredits();
      showError(result, err);
    } finally {
      button.disabled = false;
    }
  });
  const cost = op['x-credits'] ?? 0;
  show(
    main,
    h('p', { class: 'crumbs' }, h('a', { href: '/' }, 'Tools'), ' / '),
    h('h1', {}, tool.title),
    notice,
    h('p', { class: 'lead' }, tool.pitch),
    h('p', { class: 'muted' }, `${cost} credit${cost === 1 ? '' : 's'} a call; a failed call costs nothing.`),
    form,
    result,
  );
  // A crawl's job id in the address: reload or share resumes its view.
  const job = new URLSearchParams(location.search).get('job');
  if (job && op.path.endsWith('/crawl')) void followJob(result, operationId, job);
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
