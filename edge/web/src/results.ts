/** Result views: pictures and tables rather than JSON, with the raw reply one click away. */
import { call } from './api.js';
import { h, show } from './dom.js';

type Row = Record<string, unknown>;
const isRow = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value as text, a link when it is a URL we serve. */
function cell(key: string, value: unknown): Node | string {
  if (typeof value === 'string' && /Url$/.test(key) && value.startsWith('http'))
    return h('a', { href: value }, key === 'downloadUrl' ? 'Download' : value);
  if (Array.isArray(value)) return value.every((v) => !isRow(v)) ? value.join(', ') : `${value.length} items`;
  if (isRow(value)) return facts(value);
  return value === null || value === undefined ? '—' : String(value);
}

function facts(row: Row): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    Object.entries(row)
      .filter(([, v]) => !Array.isArray(v) || v.every((x) => !isRow(x)))
      .flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, cell(k, v))]),
  );
}

/** Rows shown at most per table: a big crawl's thousands of links would stall the page. */
const MAX_ROWS = 500;

/** A table of rows, coloured by severity, filterable by it when rows have one. */
function table(caption: string, rows: Row[]): HTMLElement {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((c) => rows.some((r) => !isRow(r[c])));
  const body = h('tbody');
  const count = h('p', { class: 'muted rows-shown', 'aria-live': 'polite' });
  const fill = (filter: string) => {
    const matching = rows.filter((r) => !filter || r.severity === filter);
    count.textContent =
      matching.length > MAX_ROWS ? `Showing ${MAX_ROWS} of ${matching.length} rows (the raw JSON has all).` : '';
    show(
      body,
      matching.slice(0, MAX_ROWS).map((r) =>
        h(
          'tr',
          { class: typeof r.severity === 'string' ? `sev-${r.severity}` : undefined },
          columns.map((c) => h('td', {}, cell(c, r[c]))),
        ),
      ),
    );
  };
  fill('');
  const severities = [...new Set(rows.map((r) => r.severity).filter((s): s is string => typeof s === 'string'))];
  const id = `filter-${caption.replace(/\W/g, '')}`;
  const filter = severities.length
    ? h(
        'div',
        { class: 'field inline' },
        h('label', { for: id }, 'Show'),
        h(
          'select',
          { id, onchange: (e: Event) => fill((e.target as HTMLSelectElement).value) },
          h('option', { value: '' }, 'all'),
          severities.map((s) => h('option', { value: s }, s)),
        ),
      )
    : null;
  return h(
    'div',
    { class: 'table' },
    filter,
    count,
    h(
      'div',
      { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': caption },
      h(
        'table',
        {},
        h('caption', {}, caption),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            columns.map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        body,
      ),
    ),
  );
}

/** Rows that each hold a list (the meta audit's categories and their checks): one table per row. */
function grouped(key: string, rows: Row[]): HTMLElement[] {
  const first = rows[0] ?? {};
  const inner = Object.keys(first).find((k) => {
    const value = first[k];
    return Array.isArray(value) && value.some(isRow);
  });
  if (!inner) return [table(key, rows)];
  return rows.map((row) => {
    const name = String(row.id ?? row.name ?? key);
    return h(
      'section',
      { class: 'group' },
      h('h3', {}, name),
      facts(row),
      table(`${key}: ${name}`, row[inner] as Row[]),
    );
  });
}

/** A certificate's name field, e.g. its subject's CN. */
const nameField = (name: unknown, field: string) =>
  isRow(name) && typeof name[field] === 'string' ? name[field] : '—';

/** The SSL scan's certificates, server's first: one card each, who it names, who signed it, when valid. */
function chain(reply: Row): HTMLElement | null {
  const certificates = [reply.certificate, ...(Array.isArray(reply.chain) ? reply.chain : [])].filter(isRow);
  if (!certificates.length) return null;
  const day = (iso: unknown) => (typeof iso === 'string' ? new Date(iso).toLocaleDateString() : '—');
  return h(
    'section',
    { class: 'chain', 'aria-label': 'Certificate chain' },
    h('h3', {}, 'Certificate chain'),
    h(
      'ol',
      { class: 'cards' },
      certificates.map((cert, i) =>
        h(
          'li',
          { class: 'card cert' },
          h('h4', {}, i === 0 ? 'Server certificate' : i === certificates.length - 1 ? 'Root' : 'Intermediate'),
          h(
            'dl',
            { class: 'facts' },
            h('dt', {}, 'Subject'),
            h('dd', { class: 'subject' }, nameField(cert.subject, 'CN')),
            h('dt', {}, 'Issuer'),
            h('dd', { class: 'issuer' }, nameField(cert.issuer, 'CN')),
            h('dt', {}, 'Valid'),
            h('dd', { class: 'validity' }, `${day(cert.valid_from)} to ${day(cert.valid_to)}`),
          ),
        ),
      ),
    ),
  );
}

/** Any reply: its scalar facts as a card, its arrays of objects as tables, nested objects as cards. */
function generic(reply: Row): HTMLElement[] {
  const parts: HTMLElement[] = [];
  // The meta audit's grade, or the SSL scan's.
  const grade = reply.grade ?? reply.securityGrade;
  if (typeof grade === 'string') parts.push(h('p', { class: 'grade', 'aria-label': `Grade ${grade}` }, grade));
  const certificates = chain(reply);
  if (certificates) parts.push(certificates);
  parts.push(h('div', { class: 'card' }, facts(reply)));
  for (const [key, value] of Object.entries(reply)) {
    if (certificates && key === 'chain') continue;
    if (Array.isArray(value) && value.some(isRow)) parts.push(...grouped(key, value as Row[]));
    else if (isRow(value))
      for (const [inner, list] of Object.entries(value))
        if (Array.isArray(list) && list.some(isRow)) parts.push(table(`${key}.${inner}`, list as Row[]));
  }
  return parts;
}

const raw = (reply: unknown) =>
  h('details', {}, h('summary', {}, 'Raw JSON'), h('pre', {}, JSON.stringify(reply, null, 2)));

/** A crawl job: its progress shown live, polled until done or failed, then its result. */
async function followJob(container: Element, operationId: string, jobId: string): Promise<void> {
  const path = operationId === 'broken-links-crawl' ? '/broken-links/crawl' : '/link-extract/crawl';
  const progress = h('div', { class: 'card', role: 'status' });
  show(container, h('h2', {}, `Crawl ${jobId}`), progress);
  for (;;) {
    const job = await call<{ status: string; progress: Row; result?: Row; error?: { message: string } }>(
      'GET',
      `${path}/${encodeURIComponent(jobId)}`,
    );
    show(progress, h('p', { class: 'phase' }, `Phase: ${job.progress.phase}`), facts(job.progress));
    if (job.status === 'done' && job.result) {
      container.append(h('h2', {}, 'Result'), ...generic(job.result), raw(job.result));
      return;
    }
    if (job.status === 'failed') {
      container.append(h('p', { class: 'error', role: 'alert' }, job.error?.message ?? 'the crawl failed'));
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export async function renderResult(container: Element, operationId: string, reply: unknown): Promise<void> {
  if (!isRow(reply)) return show(container, raw(reply));
  if (typeof reply.jobId === 'string') return followJob(container, operationId, reply.jobId);
  const extra: HTMLElement[] = [];
  if (operationId === 'screenshot' && typeof reply.filename === 'string')
    extra.push(h('img', { src: `/api/uploads/${reply.filename}`, alt: 'Screenshot of the page', class: 'shot' }));
  if (operationId === 'url-to-pdf' && typeof reply.filename === 'string')
    extra.push(
      h('p', {}, h('a', { href: `/api/uploads/${reply.filename}` }, 'Open the PDF')),
      h('iframe', { src: `/api/uploads/${reply.filename}`, title: 'PDF preview', class: 'pdf' }),
    );
  show(container, h('h2', {}, 'Result'), extra, generic(reply), raw(reply));
}
