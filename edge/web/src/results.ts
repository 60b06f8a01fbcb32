/** Result views made for each tool, with the raw reply one click away. */
import { API, ApiError, call } from './api.js';
import { bookmarkHealthView, showBookmarkProgress } from './bookmark-health.js';
import { RENDER_FILE_MINUTES } from './catalog.js';
import { h, show } from './dom.js';
import { downCheckView } from './down-check-view.js';
import type { Row } from './grid.js';
import { brokenLinksView, linkExtractView } from './link-views.js';
import { metaView } from './meta-view.js';
import {
  day,
  daysLeft,
  facts,
  gradeBadge,
  host,
  isRow,
  nameField,
  num,
  raw,
  rowsOf,
  scoreBar,
  stamp,
  str,
} from './result-parts.js';
import { siteAuditView } from './site-audit-report.js';

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
          h('caption', {}, `${str(p.protocol)}${serverOrder(p.serverPreference)}`),
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
    case 'site-audit':
      return siteAuditView(reply, str(request.jobId));
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
        : operationId === 'site-audit'
          ? '/site-audit'
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
    const done = num(p.pagesCrawled ?? p.pagesScanned ?? p.pagesAudited);
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

/** How a protocol's suites are ordered, as the caption says it. */
function serverOrder(serverPreference: unknown): string {
  if (serverPreference === true) return ' (server order)';
  return serverPreference === false ? ' (client order)' : '';
}
