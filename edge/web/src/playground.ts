/** One page per operation: a form built from the contract's input schema, and a result view. */
import { ApiError, call, ensureClearance, refreshCredits } from './api.js';
import { isUnavailable, isUnavailableError, rememberAvailability } from './availability.js';
import { toolById } from './catalog.js';
import { h, show } from './dom.js';
import {
  type Document,
  inputFields,
  type Operation,
  openApi,
  operations,
  priceOf,
  resolve,
  type Schema,
  sizedPriceOf,
} from './openapi.js';
import { followJob, renderResult } from './results.js';

const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type[0] : schema.type);
/** Fields that hold a secret: typed unseen, never offered for autofill elsewhere. */
const SECRET_FIELDS = new Set(['password', 'key']);

/**
 * One input of a form: a top-level field, or a property of an object field (`viewport.width`). A nested
 * object becomes one input per property, a list of strings a textarea of one per line.
 */
interface Leaf {
  path: string[];
  schema: Schema;
  required: boolean;
}
const leafName = (leaf: Leaf) => leaf.path.join('.');
const isStringList = (schema: Schema) => typeOf(schema) === 'array' && typeOf(schema.items ?? {}) === 'string';

function leavesOf(doc: Document, fields: ReturnType<typeof inputFields>): Leaf[] {
  return fields.flatMap(({ name, schema, required }) =>
    typeOf(schema) === 'object' && schema.properties
      ? Object.entries(schema.properties).map(([key, sub]) => ({
          path: [name, key],
          schema: resolve(doc, sub),
          required: false,
        }))
      : [{ path: [name], schema, required }],
  );
}

/**
 * The everyday fields of the forms with many options (renders, link checks and crawls); their other
 * options wait in an "Advanced" section. Other forms are short and show every field.
 */
const BASIC_FIELDS: Record<string, readonly string[]> = {
  screenshot: ['url', 'format', 'device', 'colorScheme'],
  'url-to-pdf': ['url', 'deviceType', 'pageFormat', 'orientation', 'theme'],
  'broken-links': ['url', 'checkResources', 'checkFragments'],
  // A webhook URL is for integrations (here and on the bookmark check), and the link options for the cases that
  // need them; the page itself polls.
  'broken-links-crawl': ['url', 'checkResources', 'checkFragments'],
  'link-extract-crawl': ['url', 'includeResources'],
  'site-audit': ['url', 'maxPages', 'checkResources', 'checkFragments'],
  'bookmarks-check': ['file', 'key', 'salt'],
};

function control(leaf: Leaf, optionalChoice: boolean): HTMLElement {
  const { schema, required } = leaf;
  const name = leafName(leaf);
  const id = `field-${leaf.path.join('-')}`;
  const hint = schema.description ? h('small', { id: `${id}-hint` }, schema.description) : null;
  const common = { id, name, required, 'aria-describedby': hint ? `${id}-hint` : undefined };
  // An unset option is sent as nothing: the API's own default applies.
  const unset = (what: string) => h('option', { value: '', selected: true }, what);
  let input: HTMLElement;
  if (schema.format === 'binary' || schema.contentMediaType) input = h('input', { ...common, type: 'file' });
  else if (schema.enum)
    input = h(
      'select',
      common,
      optionalChoice || schema.default === undefined
        ? unset(schema.default === undefined ? 'default' : `default (${String(schema.default)})`)
        : null,
      schema.enum.map((v) =>
        h('option', { value: String(v), selected: !optionalChoice && v === schema.default }, String(v)),
      ),
    );
  else if (typeOf(schema) === 'boolean' && schema.default === undefined)
    input = h(
      'select',
      common,
      unset('default'),
      h('option', { value: 'true' }, 'yes'),
      h('option', { value: 'false' }, 'no'),
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
  else if (isStringList(schema))
    input = h('textarea', { ...common, rows: 3, placeholder: 'One per line', 'data-list': true });
  else if (typeOf(schema) === 'object' || typeOf(schema) === 'array')
    input = h(
      'textarea',
      { ...common, rows: 3, placeholder: 'JSON' },
      schema.default ? JSON.stringify(schema.default) : '',
    );
  else if (/Template$|^css$/.test(name)) input = h('textarea', { ...common, rows: 3, maxlength: schema.maxLength });
  else if (SECRET_FIELDS.has(name)) input = h('input', { ...common, type: 'password', autocomplete: 'off' });
  // A URL field stays text: the API takes "example.com" (https is meant), which type=url refuses.
  else
    input = h('input', {
      ...common,
      type: 'text',
      inputmode: name === 'url' ? 'url' : undefined,
      maxlength: schema.maxLength,
      pattern: schema.pattern,
      placeholder: typeof schema.example === 'string' ? schema.example : undefined,
      value: schema.default as string | undefined,
    });
  return h('div', { class: 'field' }, h('label', { for: id }, name, required ? ' (required)' : ''), input, hint);
}

/** The controls of some leaves, an object's properties grouped under its name. */
function controls(leaves: Leaf[], optionalChoice: boolean): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (const leaf of leaves) {
    if (leaf.path.length === 1) {
      out.push(control(leaf, optionalChoice));
      continue;
    }
    const [parent] = leaf.path;
    let group = out.find((el) => el.dataset.group === parent);
    if (!group) {
      group = h('fieldset', { class: 'subfields', 'data-group': parent }, h('legend', {}, parent));
      out.push(group);
    }
    group.append(control(leaf, true));
  }
  return out;
}

/** The form's values as the route takes them: typed JSON, a query string, or multipart. Unset: absent. */
function collect(form: HTMLFormElement, leaves: Leaf[], multipart: boolean) {
  const json: Record<string, unknown> = {};
  const data = new FormData();
  for (const leaf of leaves) {
    const name = leafName(leaf);
    const el = form.elements.namedItem(name) as HTMLInputElement | null;
    if (!el || el.disabled) continue;
    if (el.type === 'file') {
      if (el.files?.[0]) data.append(name, el.files[0]);
      continue;
    }
    let value: unknown;
    if (el.type === 'checkbox') value = el.checked;
    else if (el.value.trim() === '') continue;
    else if (el.type === 'number') value = Number(el.value);
    else if (el.tagName === 'SELECT' && typeOf(leaf.schema) === 'boolean') value = el.value === 'true';
    else if (el.dataset.list !== undefined)
      value = el.value
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean);
    else if (el.tagName === 'TEXTAREA' && !/Template$|^css$/.test(name)) value = JSON.parse(el.value);
    else value = el.value;
    const [first, second] = leaf.path as [string, string | undefined];
    if (second === undefined) json[first] = value;
    else json[first] = { ...(json[first] as Record<string, unknown> | undefined), [second]: value };
    if (multipart && second === undefined) data.append(first, String(value));
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
  const leaves = leavesOf(doc, inputFields(doc, op));
  const basic = BASIC_FIELDS[operationId];
  const isBasic = (leaf: Leaf) => !basic || basic.includes(leaf.path[0] ?? '');
  const advanced = leaves.filter((leaf) => !isBasic(leaf));
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
    controls(leaves.filter(isBasic), false),
    advanced.length
      ? h(
          'details',
          { class: 'advanced' },
          h('summary', {}, 'Advanced'),
          h('div', { class: 'advanced-fields' }, controls(advanced, true)),
        )
      : null,
    h('p', { id: 'challenge-status', class: 'muted', role: 'status' }),
    h('div', { class: 'form-actions' }, button, copyCurl, copyStatus),
    curlBox,
  );
  // quality applies to jpeg and webp only: off while the format is png.
  const format = form.elements.namedItem('format');
  const quality = form.elements.namedItem('quality');
  if (format instanceof HTMLSelectElement && quality instanceof HTMLInputElement) {
    const sync = () => {
      quality.disabled = !/^(jpeg|webp)$/.test(format.value);
    };
    format.addEventListener('change', sync);
    sync();
  }
  copyCurl.addEventListener('click', async () => {
    let command: string;
    try {
      command = curlOf(op, collect(form, leaves, multipart).json, multipart);
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
      const { json, data } = collect(form, leaves, multipart);
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
  show(
    main,
    h('p', { class: 'crumbs' }, h('a', { href: '/' }, 'Tools'), ' / '),
    h('h1', {}, tool.title),
    notice,
    h('p', { class: 'lead' }, tool.pitch),
    h('p', { class: 'muted' }, sizedPriceOf(op) ?? `${priceOf(op)} a call; a failed call costs nothing.`),
    form,
    result,
  );
  // A crawl's job id in the address: reload or share resumes its view.
  const job = new URLSearchParams(location.search).get('job');
  if (job && (op.path.endsWith('/crawl') || op.path.endsWith('/bookmarks/check')))
    void followJob(result, operationId, job);
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
