/** Result views made for each tool, with the raw reply one click away. */
import { API, ApiError, call } from './api.js';
import { bookmarkHealthView, showBookmarkProgress } from './bookmark-health.js';
import { RENDER_FILE_MINUTES } from './catalog.js';
import { h, show } from './dom.js';
import { type Column, grid, type Row } from './grid.js';

const isRow = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
const rowsOf = (v: unknown): Row[] => (Array.isArray(v) ? v.filter(isRow) : []);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A value as text, a link when it is a URL we serve. */
function cell(key: string, value: unknown): Node | string {
  if (typeof value === 'string' && /Url$/.test(key) && value.startsWith('http'))
    return h('a', { href: value }, key === 'downloadUrl' ? 'Download' : value);
  if (Array.isArray(value)) return value.every((v) => !isRow(v)) ? value.join(', ') : `${value.length} items`;
  if (isRow(value)) return facts(value);
  return value === null || value === undefined ? '—' : String(value);
}

function facts(row: Row, labels: Record<string, string> = {}): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    Object.entries(row)
      .filter(([, v]) => !Array.isArray(v) || v.every((x) => !isRow(x)))
      .flatMap(([k, v]) => [h('dt', {}, labels[k] ?? k), h('dd', {}, cell(k, v))]),
  );
}

/** A letter grade in its colour. */
export const gradeBadge = (grade: string, what: string) =>
  h('p', { class: `grade grade-${grade.replace('+', 'plus')}`, 'aria-label': `${what} grade ${grade}` }, grade);

/** A 0-100 score as a bar. */
export function scoreBar(label: string, score: number): HTMLElement {
  const id = `meter-${label.replace(/\W/g, '')}`;
  return h(
    'div',
    { class: 'score' },
    h('label', { for: id }, `${label}: ${score} / 100`),
    h('meter', { id, min: 0, max: 100, low: 50, high: 80, optimum: 100, value: score }),
  );
}

/** Counts as a small bar chart: each count a bar relative to the largest. */
export function countChart(label: string, counts: [string, number, string][]): HTMLElement {
  const max = Math.max(1, ...counts.map(([, n]) => n));
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', {}, label),
    h(
      'ul',
      {},
      counts.map(([name, n, tone]) =>
        h(
          'li',
          {},
          h('span', { class: 'chart-label' }, name),
          h('meter', { class: `bar-${tone}`, min: 0, max, value: n, 'aria-label': `${name}: ${n}` }),
          h('span', { class: 'chart-value' }, n.toLocaleString('en')),
        ),
      ),
    ),
  );
}

const raw = (reply: unknown) =>
  h('details', { class: 'raw' }, h('summary', {}, 'Raw JSON'), h('pre', {}, JSON.stringify(reply, null, 2)));

const day = (iso: unknown) => (typeof iso === 'string' ? new Date(iso).toLocaleDateString('en-GB') : '—');
const daysLeft = (iso: unknown) =>
  typeof iso === 'string' ? Math.floor((Date.parse(iso) - Date.now()) / 86_400_000) : Number.NaN;
const nameField = (name: unknown, field: string) =>
  isRow(name) && typeof name[field] === 'string' ? name[field] : '—';

// ---- SSL ----

/** Why the grade is not an A+, in words, from the scan's own findings. */
function gradeCaps(reply: Row): string[] {
  const v = isRow(reply.certValidations) ? reply.certValidations : {};
  const caps: string[] = [];
  if (reply.isExpired === true) caps.push('The certificate has expired.');
  if (v.trustedCert === false) caps.push('The certificate is not trusted by common browsers.');
  if (v.selfSigned === true) caps.push('The certificate is self-signed.');
  if (v.chainComplete === false) caps.push('The certificate chain is incomplete.');
  if (typeof v.chainIssueDescription === 'string') caps.push(v.chainIssueDescription);
  if (v.commonNameValid === false || v.sanValid === false) caps.push('The certificate does not name this domain.');
  const days = num(reply.daysUntilExpiry);
  if (reply.isExpired !== true && days < 30) caps.push(`The certificate expires in ${days} days.`);
  const protocol = str(reply.protocol);
  if (protocol && !/1\.3/.test(protocol)) caps.push(`The server negotiated ${protocol}, not TLS 1.3.`);
  return caps;
}

/** The scan's own reasons when it gives them (newer tls-scan), else today's reading of its findings. */
function gradeLimits(reply: Row): HTMLElement[] {
  if (!Array.isArray(reply.gradeReasons)) return gradeCaps(reply).map((c) => h('li', {}, c));
  return rowsOf(reply.gradeReasons).map((r) =>
    h(
      'li',
      { 'data-code': str(r.code) },
      str(r.message),
      str(r.effect) ? h('span', { class: 'muted' }, ` (${str(r.effect)})`) : null,
    ),
  );
}

/** The extra findings of a newer tls-scan, each only when the reply has it. */
function sslExtras(reply: Row): [string, string][] {
  const rows: [string, string][] = [];
  if ('hsts' in reply) {
    const hsts = isRow(reply.hsts) ? reply.hsts : null;
    rows.push([
      'HSTS',
      hsts
        ? [
            `max-age ${num(hsts.maxAge)} s`,
            hsts.includeSubDomains ? 'includeSubDomains' : '',
            hsts.preload ? 'preload' : '',
          ]
            .filter(Boolean)
            .join('; ')
        : 'none',
    ]);
  }
  if (typeof reply.ocspStapling === 'boolean') rows.push(['OCSP stapling', reply.ocspStapling ? 'yes' : 'no']);
  if ('keyExchange' in reply) {
    const k = isRow(reply.keyExchange) ? reply.keyExchange : null;
    rows.push([
      'Key exchange',
      k
        ? [str(k.type), str(k.name), k.size ? `${num(k.size)} bits` : ''].filter(Boolean).join(' ')
        : 'RSA key transport (no forward secrecy)',
    ]);
  }
  if ('caa' in reply) {
    const caa = isRow(reply.caa) ? reply.caa : null;
    const records = caa ? rowsOf(caa.records) : [];
    rows.push([
      'CAA',
      !caa
        ? 'could not be determined'
        : records.length
          ? records.map((r) => `${str(r.tag)} ${str(r.value)}`).join(', ') +
            (caa.domain ? ` (on ${str(caa.domain)})` : '')
          : 'none (any CA may issue)',
    ]);
  }
  if (typeof reply.ipAddress === 'string' && reply.ipAddress) rows.push(['Address', reply.ipAddress]);
  if (Array.isArray(reply.alpn)) rows.push(['ALPN', reply.alpn.length ? reply.alpn.join(', ') : 'none']);
  if (typeof reply.hstsStatus === 'string') rows.push(['HSTS status', reply.hstsStatus.replace('_', ' ')]);
  if (typeof reply.trustMarker === 'string') {
    rows.push(['If trust issues are ignored', `${reply.trustMarker} · ${str(reply.gradeIgnoringTrust)}`]);
  }
  if (Array.isArray(reply.namedGroups) && reply.namedGroups.length)
    rows.push(['Named groups', reply.namedGroups.join(', ')]);
  if (Array.isArray(reply.signatureAlgorithms) && reply.signatureAlgorithms.length) {
    rows.push(['Signature algorithms', reply.signatureAlgorithms.join(', ')]);
  }
  if (isRow(reply.certificateTransparency)) {
    const ct = reply.certificateTransparency;
    rows.push([
      'Certificate transparency',
      `${num(ct.embedded)} embedded, ${num(ct.stapled)} stapled, ${num(ct.tlsExtension)} in TLS`,
    ]);
  }
  if (isRow(reply.revocation)) {
    const r = reply.revocation;
    rows.push(['Revocation (OCSP)', [str(r.status).replace('_', ' '), str(r.detail)].filter(Boolean).join(': ')]);
  }
  if (isRow(reply.timings)) rows.push(['Scan time', `${num(reply.timings.totalMs)} ms${reply.fast ? ' (fast)' : ''}`]);
  return rows;
}

/** SSL Labs' four bars beside the grade, when the scan gives its areas. */
function scoreAreaBars(reply: Row): HTMLElement[] {
  if (!isRow(reply.scoreAreas)) return [];
  const areas = reply.scoreAreas;
  return (
    [
      ['Certificate', areas.certificate],
      ['Protocol support', areas.protocolSupport],
      ['Key exchange', areas.keyExchange],
      ['Cipher strength', areas.cipherStrength],
    ] as const
  ).map(([label, value]) => scoreBar(label, Math.round(num(value))));
}

/** Each TLS version the server was offered, and whether it accepted it. */
function protocolTable(protocols: Row[]): HTMLElement {
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Protocol versions' },
    h(
      'table',
      { class: 'protocol protocols' },
      h('caption', {}, 'Protocol versions'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Version'), h('th', { scope: 'col' }, 'Supported'))),
      h(
        'tbody',
        {},
        protocols.map((p) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, str(p.version)),
            h('td', {}, p.supported === true ? 'yes' : p.supported === false ? 'no' : 'could not tell'),
          ),
        ),
      ),
    ),
  );
}

/** testssl.sh-style vulnerability table: each check's verdict, why, and the grade cap it imposes. */
function vulnerabilityTable(rows: Row[]): HTMLElement {
  const label: Record<string, string> = {
    vulnerable: 'vulnerable',
    not_vulnerable: 'not vulnerable',
    unknown: 'unknown',
  };
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Vulnerabilities' },
    h(
      'table',
      { class: 'protocol vulnerabilities' },
      h('caption', {}, 'Vulnerabilities'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Check'),
          h('th', { scope: 'col' }, 'Verdict'),
          h('th', { scope: 'col' }, 'Why'),
          h('th', { scope: 'col' }, 'Grade cap'),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((v) =>
          h(
            'tr',
            { 'data-id': str(v.id), class: v.verdict === 'vulnerable' ? 'bad-text' : '' },
            h('th', { scope: 'row' }, str(v.name)),
            h('td', { class: 'verdict' }, label[str(v.verdict)] ?? str(v.verdict)),
            h('td', {}, str(v.why)),
            h('td', {}, str(v.gradeCap) || '—'),
          ),
        ),
      ),
    ),
  );
}

/** Every suite the server accepts, per protocol, in its order when it has one. */
function cipherList(protocols: Row[], notes: string[]): HTMLElement {
  const accepted = protocols.filter((p) => p.supported === true);
  return h(
    'section',
    { class: 'ciphers', 'aria-label': 'Cipher suites' },
    h('h3', {}, 'Cipher suites'),
    notes.length
      ? h(
          'ul',
          { class: 'notes' },
          notes.map((n) => h('li', {}, n)),
        )
      : null,
    ...accepted.map((p) =>
      h(
        'div',
        { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': `${str(p.protocol)} suites` },
        h(
          'table',
          { class: 'protocol cipher-suites', 'data-protocol': str(p.protocol) },
          h(
            'caption',
            {},
            `${str(p.protocol)}${p.serverPreference === true ? ' (server order)' : p.serverPreference === false ? ' (client order)' : ''}`,
          ),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Suite'),
              h('th', { scope: 'col' }, 'Forward secrecy'),
              h('th', { scope: 'col' }, 'AEAD'),
              h('th', { scope: 'col' }, 'Bits'),
              h('th', { scope: 'col' }, 'Strength'),
            ),
          ),
          h(
            'tbody',
            {},
            rowsOf(p.suites).map((c) =>
              h(
                'tr',
                { class: c.strength === 'strong' ? '' : 'bad-text' },
                h('th', { scope: 'row' }, str(c.name)),
                h('td', {}, c.forwardSecrecy ? 'yes' : 'no'),
                h('td', {}, c.aead ? 'yes' : 'no'),
                h('td', {}, String(num(c.bits))),
                h('td', {}, str(c.strength)),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

function sslView(reply: Row): HTMLElement[] {
  const grade = str(reply.securityGrade);
  const caps = gradeLimits(reply);
  const certificates = [reply.certificate, ...rowsOf(reply.chain)].filter(isRow);
  const v = isRow(reply.certValidations) ? reply.certValidations : {};
  const yes = (b: unknown) => (b === true ? 'yes' : b === false ? 'no' : '—');
  return [
    h(
      'div',
      { class: 'summary-card' },
      gradeBadge(grade, 'Security'),
      h(
        'div',
        { class: 'summary-body' },
        h('h3', {}, str(reply.domain)),
        scoreBar('Score', num(reply.score)),
        ...scoreAreaBars(reply),
        h(
          'p',
          { class: reply.isValid ? 'ok-text' : 'bad-text' },
          reply.isValid ? 'The certificate is valid.' : 'The certificate fails validation.',
        ),
      ),
    ),
    h(
      'section',
      { class: 'caps', 'aria-label': 'What limits the grade' },
      h('h3', {}, caps.length ? 'What limits the grade' : 'Nothing limits the grade'),
      caps.length ? h('ul', {}, caps) : null,
    ),
    h(
      'div',
      { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Protocol and certificate checks' },
      h(
        'table',
        { class: 'protocol' },
        h('caption', {}, 'Protocol and certificate checks'),
        h(
          'tbody',
          {},
          [
            ['Protocol', str(reply.protocol)],
            ['Cipher suite', str(reply.cipherSuite)],
            ['Port', String(reply.port ?? '')],
            ['Trusted', yes(v.trustedCert)],
            ['Chain complete', yes(v.chainComplete)],
            ['Name matches', yes(v.sanValid ?? v.commonNameValid)],
            ['Self-signed', yes(v.selfSigned)],
            ['Days until expiry', String(reply.daysUntilExpiry ?? '—')],
            ...sslExtras(reply),
          ].map(([k, value]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, value))),
        ),
      ),
    ),
    Array.isArray(reply.protocols) && reply.protocols.length ? protocolTable(rowsOf(reply.protocols)) : null,
    Array.isArray(reply.vulnerabilities) && reply.vulnerabilities.length
      ? vulnerabilityTable(rowsOf(reply.vulnerabilities))
      : null,
    Array.isArray(reply.cipherSuites) && reply.cipherSuites.length
      ? cipherList(rowsOf(reply.cipherSuites), Array.isArray(reply.cipherNotes) ? reply.cipherNotes.map(String) : [])
      : null,
    h(
      'section',
      { class: 'chain', 'aria-label': 'Certificate chain' },
      h('h3', {}, 'Certificate chain'),
      h(
        'ol',
        { class: 'cert-cards' },
        certificates.map((cert, i) => {
          const left = daysLeft(cert.valid_to);
          return h(
            'li',
            { class: `card cert${left < 30 ? ' expiring' : ''}` },
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
              h('dt', {}, 'Expires'),
              h('dd', { class: 'expiry' }, Number.isNaN(left) ? '—' : left < 0 ? 'expired' : `in ${left} days`),
            ),
          );
        }),
      ),
    ),
  ].filter((el): el is HTMLElement => el !== null);
}

// ---- Links ----

const linkCell = (row: Row) => {
  const url = str(row.url);
  return /^https?:/.test(url) ? h('a', { href: url, rel: 'nofollow noopener', target: '_blank' }, url) : url;
};
const statusCell = (row: Row) =>
  row.statusCode === null || row.statusCode === undefined
    ? str(row.statusText) || '—'
    : `${row.statusCode} ${str(row.statusText)}`.trim();
const sourcesCell = (row: Row) => {
  const sources = Array.isArray(row.sources) ? (row.sources as string[]) : [];
  if (!sources.length) return '—';
  const count = num(row.sourceCount) || sources.length;
  return h(
    'details',
    {},
    h('summary', {}, `${count} page${count === 1 ? '' : 's'}`),
    h(
      'ul',
      { class: 'sources' },
      sources.map((s) => h('li', {}, s)),
    ),
  );
};

const BROKEN_COLUMNS: Column[] = [
  { key: 'url', label: 'Link', render: linkCell },
  { key: 'statusCode', label: 'Status', render: statusCell, numeric: true },
  { key: 'severity', label: 'Severity' },
  { key: 'type', label: 'Type' },
  { key: 'reason', label: 'Reason' },
  { key: 'responseTimeMs', label: 'Time (ms)', numeric: true },
];
const SOURCES: Column = { key: 'sourceCount', label: 'Found on', render: sourcesCell, numeric: true };
/** The element a URL was found on (a, img, script…): links name it always, extracted links with resources. */
const ELEMENT: Column = { key: 'element', label: 'Element' };
/** The columns, with Element after Type when the rows name their elements. */
const withElement = (columns: Column[], rows: Row[]): Column[] =>
  rows.some((row) => typeof row.element === 'string')
    ? columns.flatMap((column) => (column.key === 'type' ? [column, ELEMENT] : [column]))
    : columns;
const EXTRACT_COLUMNS: Column[] = [
  { key: 'url', label: 'Link', render: linkCell },
  { key: 'text', label: 'Text' },
  { key: 'type', label: 'Type' },
  { key: 'rel', label: 'Rel' },
];

const host = (url: unknown) => {
  try {
    return new URL(str(url)).hostname || 'result';
  } catch {
    return 'result';
  }
};
const stamp = () => new Date().toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');

function brokenLinksView(reply: Row, crawl: boolean): HTMLElement[] {
  const summary = isRow(reply.summary) ? reply.summary : {};
  const links = rowsOf(reply.links);
  const figures: [string, unknown][] = crawl
    ? [
        ['Pages crawled', reply.pagesCrawled],
        ['Pages found', reply.pagesDiscovered],
        ['Unique links', reply.totalUniqueLinks],
      ]
    : [
        ['Links found', reply.totalLinks],
        ['Links checked', reply.checkedLinks],
      ];
  if (typeof summary.resources === 'number') figures.push(['Resources checked', summary.resources]);
  return [
    h(
      'div',
      { class: 'summary-card' },
      gradeBadge(str(reply.grade), 'Link health'),
      h(
        'div',
        { class: 'summary-body' },
        scoreBar('Health score', num(reply.healthScore)),
        h(
          'dl',
          { class: 'figures' },
          figures.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, String(v ?? '—')))),
        ),
        reply.truncated || reply.truncatedPages || reply.truncatedLinks
          ? h('p', { class: 'muted' }, 'The scan reached its cap: not every link was checked.')
          : null,
      ),
      countChart('Links by result', [
        ['OK', num(summary.ok), 'ok'],
        ['Warnings', num(summary.warnings), 'warning'],
        ['Broken', num(summary.broken), 'broken'],
        ['Info', num(summary.info), 'info'],
      ]),
    ),
    grid(
      'Links',
      links,
      withElement(crawl ? [...BROKEN_COLUMNS, SOURCES] : BROKEN_COLUMNS, links),
      `links-${host(reply.url)}.csv`,
    ),
  ];
}

function linkExtractView(reply: Row, crawl: boolean): HTMLElement[] {
  const counts = isRow(reply.counts) ? reply.counts : {};
  return [
    h(
      'div',
      { class: 'summary-card' },
      countChart(`${num(reply.totalLinks).toLocaleString('en')} links`, [
        ['Internal', num(counts.internal), 'info'],
        ['External', num(counts.external), 'ok'],
        ['Mail', num(counts.mailto), 'warning'],
        ['Phone', num(counts.tel), 'warning'],
      ]),
      reply.truncated ? h('p', { class: 'muted' }, 'The page had more links than the cap.') : null,
    ),
    grid(
      'Links',
      rowsOf(reply.links),
      withElement(crawl ? [...EXTRACT_COLUMNS, SOURCES] : EXTRACT_COLUMNS, rowsOf(reply.links)),
      `links-${host(reply.url)}.csv`,
    ),
  ];
}

// ---- Meta ----

const STATUS_WORD: Record<string, string> = { pass: 'Pass', warning: 'Warning', fail: 'Fail' };
const CATEGORY_TITLE: Record<string, string> = {
  basic: 'Basic',
  technical: 'Technical',
  social: 'Social',
  images: 'Images',
};

const INSIGHT_TITLE: Record<string, string> = {
  indexability: 'Indexability',
  international: 'International',
  'structured-data': 'Structured data',
  'social-image': 'Social image',
};

function socialCard(categories: Row[], pageUrl: unknown): HTMLElement {
  const value = (id: string) =>
    categories
      .flatMap((c) => rowsOf(c.results))
      .find((r) => r.id === id)
      ?.value?.toString() ?? '';
  const title = value('og_title') || value('twitter_title') || value('meta_title');
  const description = value('og_description') || value('twitter_description') || value('meta_description');
  const image = value('og_image') || value('twitter_image');
  return h(
    'figure',
    { class: 'social-card' },
    h('figcaption', {}, 'How a share of this page looks'),
    h(
      'div',
      { class: 'social-preview' },
      h('div', { class: 'social-image' }, image ? `Image: ${image}` : 'No share image (og:image)'),
      h('p', { class: 'social-site' }, host(value('og_url') || pageUrl)),
      h('p', { class: 'social-title' }, title || 'No title'),
      h('p', { class: 'social-description' }, description || 'No description'),
    ),
  );
}

function metaView(reply: Row): HTMLElement[] {
  const summary = isRow(reply.summary) ? reply.summary : {};
  const categories = rowsOf(reply.categories);
  const insights = rowsOf(reply.insights);
  const insightsSummary = isRow(reply.insightsSummary) ? reply.insightsSummary : {};
  return [
    h(
      'div',
      { class: 'summary-card' },
      gradeBadge(str(reply.grade), 'Meta'),
      h(
        'div',
        { class: 'summary-body' },
        scoreBar('Score', num(reply.finalScore)),
        h('p', {}, `${num(summary.passed)} passed, ${num(summary.warnings)} warnings, ${num(summary.critical)} failed`),
      ),
      socialCard(categories, reply.url),
    ),
    ...categories.map((category) =>
      checkGroup(CATEGORY_TITLE[str(category.id)] ?? str(category.id), rowsOf(category.results)),
    ),
    insights.length
      ? h(
          'h3',
          { class: 'insights-title' },
          `Insights: ${num(insightsSummary.passed)} passed, ${num(insightsSummary.warnings)} warnings, ` +
            `${num(insightsSummary.critical)} failed (not part of the score)`,
        )
      : null,
    ...insights.map((group) =>
      checkGroup(INSIGHT_TITLE[str(group.id)] ?? str(group.id), rowsOf(group.results), 'insight'),
    ),
  ].filter((el): el is HTMLElement => el !== null);
}

/** A group of checks, each with its pass, warning or fail. */
function checkGroup(title: string, results: Row[], kind = 'category'): HTMLElement {
  return h(
    'section',
    { class: `group group-${kind}` },
    h(kind === 'insight' ? 'h4' : 'h3', {}, title),
    h(
      'ul',
      { class: 'checklist' },
      results.map((check) =>
        h(
          'li',
          { class: `check-${str(check.status)}`, 'data-check': str(check.id) },
          h('span', { class: 'check-status' }, STATUS_WORD[str(check.status)] ?? str(check.status)),
          h(
            'div',
            {},
            h('code', {}, str(check.id)),
            h('p', {}, str(check.message)),
            check.value ? h('p', { class: 'muted check-value' }, String(check.value)) : null,
          ),
        ),
      ),
    ),
  );
}

// ---- Down check ----

/** Why the site is down, from what the check could and could not do (the spec's meaning of each null). */
function downReason(reply: Row): string {
  if (reply.ipAddress === null) return 'The host name did not resolve (DNS failure).';
  if (reply.responseTimeMs === null) return 'The host could not be reached.';
  const ms = num(reply.responseTimeMs);
  // A quick failure is a refusal or reset; a slow one most likely a time-out.
  return ms < 1000
    ? `The connection was refused or reset after ${ms} ms: nothing answers HTTP at that address and port.`
    : `No HTTP answer within ${ms} ms: the connection timed out, or was refused or reset.`;
}

const TIMING_LABELS: [string, string][] = [
  ['dnsMs', 'DNS lookup'],
  ['connectMs', 'TCP connect'],
  ['tlsMs', 'TLS handshake'],
  ['firstByteMs', 'First byte'],
  ['totalMs', 'Total'],
];

/** Where the time went: each phase a bar relative to the total; a phase that did not happen shows "—". */
function timingTable(timings: Row): HTMLElement {
  const max = Math.max(1, ...TIMING_LABELS.map(([key]) => num(timings[key])));
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Timings' },
    h(
      'table',
      { class: 'timings' },
      h('caption', {}, 'Timings'),
      h(
        'tbody',
        {},
        TIMING_LABELS.map(([key, label]) => {
          const ms = timings[key];
          return h(
            'tr',
            { 'data-timing': key },
            h('th', { scope: 'row' }, label),
            h('td', {}, typeof ms === 'number' ? `${ms} ms` : '—'),
            h(
              'td',
              {},
              typeof ms === 'number'
                ? h('meter', { min: 0, max, value: ms, 'aria-label': `${label}: ${ms} ms` })
                : null,
            ),
          );
        }),
      ),
    ),
  );
}

const VERDICT_WORD: Record<string, string> = { up: 'UP', down: 'DOWN', degraded: 'DEGRADED' };

function downCheckView(reply: Row): HTMLElement[] {
  const status = num(reply.httpsStatus);
  // The API's verdict and reason when it gives them; before it did, any HTTP answer meant up.
  const verdict = str(reply.verdict) || (typeof reply.httpsStatus === 'number' ? 'up' : 'down');
  const reason = str(reply.reason);
  const sentence =
    verdict === 'up'
      ? `${str(reply.url)} answered HTTP ${status}${status >= 400 ? ' (an error page, but the server is up)' : ''}.`
      : verdict === 'degraded'
        ? `${str(reply.url)} is up, with a problem: ${reason || `HTTP ${status}`}.`
        : `${str(reply.url)} is down. ${reason ? `${reason[0]?.toUpperCase()}${reason.slice(1)}.` : downReason(reply)}`;
  const redirects = rowsOf(reply.redirects);
  const checks: [string, string][] = [];
  if (typeof reply.statusMatches === 'boolean')
    checks.push(['Expected status', reply.statusMatches ? 'matched' : 'not matched']);
  if (typeof reply.keywordFound === 'boolean') checks.push(['Keyword', reply.keywordFound ? 'found' : 'not found']);
  return [
    h(
      'div',
      { class: `banner banner-${verdict}`, role: 'status' },
      h('p', { class: 'banner-word' }, VERDICT_WORD[verdict] ?? verdict.toUpperCase()),
      h('p', { class: 'banner-reason' }, sentence),
    ),
    h(
      'dl',
      { class: 'figures' },
      [
        ['Status', typeof reply.httpsStatus === 'number' ? String(status) : 'none'],
        ['Response time', reply.responseTimeMs === null ? '—' : `${reply.responseTimeMs} ms`],
        ['Address', str(reply.ipAddress) || '—'],
        ['Tested from', str(reply.testedFrom)],
        ...checks,
      ].map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
    ),
    isRow(reply.timings) ? timingTable(reply.timings) : null,
    redirects.length
      ? h(
          'section',
          { class: 'redirects', 'aria-label': 'Redirects' },
          h('h3', {}, `Redirects (${redirects.length})`),
          h(
            'ol',
            {},
            redirects.map((r) => h('li', {}, `${num(r.status)} `, h('code', {}, str(r.url)))),
          ),
        )
      : null,
  ].filter((el): el is HTMLElement => el !== null);
}

// ---- Files ----

const size = (bytes: number) =>
  bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;

function fileView(reply: Row, operationId: string, request: Record<string, unknown>): HTMLElement[] {
  const href = `/api/uploads/${encodeURIComponent(str(reply.filename))}`;
  const extension = str(reply.fileExtension) || (operationId === 'url-to-pdf' ? 'pdf' : 'png');
  const name = `${host(request.url)}-${stamp()}.${extension}`;
  const until = new Date(Date.now() + RENDER_FILE_MINUTES * 60_000).toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
  });
  const preview =
    operationId === 'screenshot'
      ? h(
          'a',
          { class: 'thumb', href, target: '_blank', rel: 'noopener', title: 'Open full size' },
          h('img', { src: href, alt: `Screenshot of ${str(request.url)}`, class: 'shot' }),
        )
      : h('iframe', { src: href, title: 'PDF preview', class: 'pdf' });
  return [
    h(
      'div',
      { class: 'file-result' },
      preview,
      h(
        'div',
        { class: 'file-facts' },
        h('a', { class: 'button download', href, download: name }, `Download ${name}`),
        operationId === 'screenshot' ? h('p', {}, h('a', { href, target: '_blank' }, 'Open full size')) : null,
        h('p', { class: 'expiry' }, `Kept ${RENDER_FILE_MINUTES} minutes: download it before ${until}.`),
        h(
          'dl',
          { class: 'figures' },
          [
            ['Size', size(num(reply.sizeBytes))],
            ['Format', extension.toUpperCase()],
            ['Rendered in', `${num(reply.durationMs)} ms`],
            ...(reply.clipped ? [['Clipped', 'yes: the page was taller than the cap']] : []),
          ].map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
        ),
      ),
    ),
  ];
}

/** Any other reply: its facts as a card. */
const generic = (reply: Row): HTMLElement[] => [h('div', { class: 'card' }, facts(reply))];

function viewOf(operationId: string, reply: Row, request: Record<string, unknown>): HTMLElement[] {
  switch (operationId) {
    case 'ssl-scan':
      return sslView(reply);
    case 'broken-links':
      return brokenLinksView(reply, false);
    case 'broken-links-crawl':
      return brokenLinksView(reply, true);
    case 'link-extract':
      return linkExtractView(reply, false);
    case 'link-extract-crawl':
      return linkExtractView(reply, true);
    case 'meta-scan':
      return metaView(reply);
    case 'down-check':
      return downCheckView(reply);
    case 'bookmarks-check':
      return bookmarkHealthView(reply, str(request.jobId));
    case 'screenshot':
    case 'url-to-pdf':
      return typeof reply.filename === 'string' ? fileView(reply, operationId, request) : generic(reply);
    default:
      return generic(reply);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Polls start at 1 s and back off to 10 s; a 429 or 503 waits its Retry-After. */
const FIRST_POLL_MS = 1_000;
const LAST_POLL_MS = 10_000;

/** A crawl job: its progress as a bar, polled with back-off until done or failed, then its result. */
/** A finished broken-link crawl's result as files (free while the job is kept; decision 0217). */
const EXPORTS = [
  ['csv', 'CSV'],
  ['md', 'Markdown'],
  ['junit', 'JUnit XML'],
  ['sarif', 'SARIF'],
] as const;

function downloads(path: string, jobId: string): HTMLElement {
  const links = EXPORTS.map(([format, label]) =>
    h('a', { href: `${API}${path}/${encodeURIComponent(jobId)}?format=${format}`, download: true }, label),
  );
  return h(
    'p',
    { class: 'downloads' },
    'Download: ',
    links.flatMap((link, i) => (i ? [' · ', link] : [link])),
  );
}

export async function followJob(container: Element, operationId: string, jobId: string): Promise<void> {
  const path =
    operationId === 'broken-links-crawl'
      ? '/broken-links/crawl'
      : operationId === 'bookmarks-check'
        ? '/bookmarks/check'
        : '/link-extract/crawl';
  const url = new URL(location.href);
  if (url.searchParams.get('job') !== jobId) {
    url.searchParams.set('job', jobId);
    history.replaceState(null, '', url);
  }
  const progress = h('div', { class: 'card progress', role: 'status' });
  show(
    container,
    h('h2', {}, 'Crawl'),
    h('p', { class: 'muted' }, 'Job ', h('code', {}, jobId), ': this page’s address resumes it.'),
    progress,
  );
  let wait = FIRST_POLL_MS;
  for (;;) {
    let job: { status: string; progress: Row; result?: Row; error?: { message: string } };
    try {
      job = await call('GET', `${path}/${encodeURIComponent(jobId)}`);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 429 || err.status === 503 || err.status === 504)) {
        const seconds = err.retryAfterSeconds ?? wait / 1000;
        show(progress, h('p', { class: 'phase' }, `Busy; checking again in ${Math.ceil(seconds)} s…`));
        await sleep(seconds * 1000);
        wait = Math.min(LAST_POLL_MS, wait * 2);
        continue;
      }
      const gone = err instanceof ApiError && err.status === 404;
      show(
        progress,
        h(
          'p',
          { class: 'error', role: 'alert' },
          gone
            ? 'This crawl is unknown or has expired (jobs are kept 30 minutes).'
            : err instanceof Error
              ? err.message
              : String(err),
        ),
      );
      return;
    }
    const p = job.progress;
    if (operationId === 'bookmarks-check') showBookmarkProgress(progress, job.status, p);
    else showCrawlProgress(progress, job.status, p);
    if (job.status === 'done' && job.result) {
      container.append(h('h2', {}, 'Result'), ...viewOf(operationId, job.result, { jobId }));
      if (operationId === 'broken-links-crawl') container.append(downloads(path, jobId));
      container.append(raw(job.result));
      return;
    }
    if (job.status === 'failed') {
      container.append(h('p', { class: 'error', role: 'alert' }, job.error?.message ?? 'the crawl failed'));
      return;
    }
    await sleep(wait);
    wait = Math.min(LAST_POLL_MS, Math.round(wait * 1.5));
  }
}

function showCrawlProgress(progress: Element, status: string, p: Row): void {
  {
    const done = num(p.pagesCrawled ?? p.pagesScanned);
    const cap = Math.max(1, num(p.pagesCap) || num(p.pagesDiscovered));
    show(
      progress,
      h('p', { class: 'phase' }, `Phase: ${str(p.phase)}`),
      h('label', { for: 'crawl-bar' }, `${done} of ${num(p.pagesDiscovered)} pages found (cap ${num(p.pagesCap)})`),
      h('progress', { id: 'crawl-bar', max: cap, value: status === 'done' ? cap : Math.min(done, cap) }),
      h(
        'p',
        { class: 'muted' },
        [
          `${num(p.linksFound).toLocaleString('en')} links found`,
          p.linksTotal !== undefined ? `${num(p.linksChecked)} of ${num(p.linksTotal)} checked` : '',
          str(p.message),
        ]
          .filter(Boolean)
          .join(' · '),
      ),
    );
  }
}

export async function renderResult(
  container: Element,
  operationId: string,
  reply: unknown,
  request: Record<string, unknown> = {},
): Promise<void> {
  if (!isRow(reply)) return show(container, raw(reply));
  if (typeof reply.jobId === 'string') return followJob(container, operationId, reply.jobId);
  show(container, h('h2', {}, 'Result'), viewOf(operationId, reply, request), raw(reply));
}
