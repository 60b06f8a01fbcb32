/**
 * The vulnerability checks of testssl.sh's -U, each `vulnerable`, `not_vulnerable` or `unknown`
 * with why. Most follow from the suite enumeration (RC4, SWEET32, FREAK, LOGJAM, BEAST, LUCKY13,
 * POODLE, DROWN, secure renegotiation); the others are one bounded probe each: a raw hello with
 * compression (CRIME), with the fallback signal (TLS_FALLBACK_SCSV), with the heartbeat extension
 * then a heartbeat asking for more than it sends (Heartbleed), an early ChangeCipherSpec (CCS
 * injection), a ticket beside a one-byte session ID (Ticketbleed), and a renegotiation over Node's
 * TLS (client-initiated renegotiation). Each can cap the grade as the SSL Labs guide says.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import tls from 'node:tls';
import { MAX_LISTENERS, type ProtocolSuites, type SuiteScan } from './cipher-suites.js';
import type { Endpoint } from './handshake.js';
import type { HomePage } from './hsts.js';
import {
  clientHello,
  EXTENSION,
  exchangeHello,
  RawConnection,
  RECORD,
  record,
  VERSION_CODE,
  type WireVersion,
} from './raw-hello.js';

export type Verdict = 'vulnerable' | 'not_vulnerable' | 'unknown';
export type CapGrade = 'F' | 'C' | 'B';

export interface VulnerabilityResult {
  /** Stable id, e.g. heartbleed. */
  id: string;
  name: string;
  cve: string[];
  verdict: Verdict;
  why: string;
  /** The grade cap this finding imposes when vulnerable (SSL Labs' guide); none for warnings. */
  cap?: CapGrade;
}

interface Check {
  id: string;
  name: string;
  cve: string[];
  cap?: CapGrade;
}

const CHECKS = {
  heartbleed: { id: 'heartbleed', name: 'Heartbleed', cve: ['CVE-2014-0160'], cap: 'F' },
  ccs: { id: 'ccs_injection', name: 'CCS injection', cve: ['CVE-2014-0224'], cap: 'F' },
  ticketbleed: { id: 'ticketbleed', name: 'Ticketbleed', cve: ['CVE-2016-9244'], cap: 'F' },
  robot: { id: 'robot', name: 'ROBOT', cve: ['CVE-2017-13099'], cap: 'F' },
  secureRenegotiation: {
    id: 'secure_renegotiation',
    name: 'Secure renegotiation (RFC 5746)',
    cve: ['CVE-2009-3555'],
    cap: 'C',
  },
  clientRenegotiation: { id: 'client_renegotiation', name: 'Client-initiated renegotiation', cve: [] },
  crime: { id: 'crime', name: 'CRIME (TLS compression)', cve: ['CVE-2012-4929'], cap: 'C' },
  breach: { id: 'breach', name: 'BREACH (HTTP compression)', cve: ['CVE-2013-3587'] },
  poodle: { id: 'poodle_ssl', name: 'POODLE (SSLv3)', cve: ['CVE-2014-3566'], cap: 'C' },
  fallback: { id: 'fallback_scsv', name: 'TLS_FALLBACK_SCSV (downgrade prevention)', cve: [] },
  sweet32: { id: 'sweet32', name: 'SWEET32 (64-bit block ciphers)', cve: ['CVE-2016-2183', 'CVE-2016-6329'], cap: 'C' },
  freak: { id: 'freak', name: 'FREAK (RSA export)', cve: ['CVE-2015-0204'], cap: 'F' },
  drown: { id: 'drown', name: 'DROWN (SSLv2)', cve: ['CVE-2016-0800', 'CVE-2016-0703'], cap: 'F' },
  logjam: { id: 'logjam', name: 'LOGJAM (DH export, weak DH)', cve: ['CVE-2015-4000'], cap: 'F' },
  beast: { id: 'beast', name: 'BEAST (CBC in TLS 1.0)', cve: ['CVE-2011-3389'] },
  lucky13: { id: 'lucky13', name: 'LUCKY13 (CBC timing)', cve: ['CVE-2013-0169'] },
  rc4: { id: 'rc4', name: 'RC4', cve: ['CVE-2013-2566', 'CVE-2015-2808'], cap: 'C' },
} as const satisfies Record<string, Check>;

const verdict = (check: Check, v: Verdict, why: string): VulnerabilityResult => ({
  id: check.id,
  name: check.name,
  cve: [...check.cve],
  verdict: v,
  why,
  ...(v === 'vulnerable' && check.cap ? { cap: check.cap } : {}),
});

/** Alert descriptions read in verdicts. */
const ALERT = {
  unexpectedMessage: 10,
  badRecordMac: 20,
  decryptionFailed: 21,
  handshakeFailure: 40,
  inappropriateFallback: 86,
};

interface Context {
  endpoint: Endpoint;
  timeoutMs: number;
  signal: AbortSignal;
  suites: SuiteScan;
  page: HomePage;
}

const supported = (suites: SuiteScan, protocol: string) => suites.protocols.find((p) => p.protocol === protocol);
const accepted = (p: ProtocolSuites | undefined) => (p?.supported ? p.suites : []);
const list = (names: string[]) =>
  names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');
/** Newest protocol at TLS 1.2 or below the server accepts, with its suites: what the TLS 1.2-era probes speak. */
function legacyProtocol(suites: SuiteScan): { version: WireVersion; codes: number[] } | undefined {
  const p = suites.protocols
    .filter((x) => x.supported && x.protocol !== 'SSLv2' && x.protocol !== 'TLSv1.3' && x.suites.length)
    .at(-1);
  return p && { version: p.protocol as WireVersion, codes: p.suites.map((s) => s.code) };
}

/** The verdict of a probe that needs TLS 1.2 or older when the server speaks none: TLS 1.3 alone is not affected. */
function withoutLegacy(ctx: Context, check: Check, why: string): VulnerabilityResult {
  return verdict(check, supported(ctx.suites, 'TLSv1.3')?.supported ? 'not_vulnerable' : 'unknown', why);
}

/** Verdicts read off the enumeration: no connection of their own. */
export function derivedChecks(suites: SuiteScan, page: HomePage): VulnerabilityResult[] {
  const tls = suites.protocols.filter((p) => p.protocol !== 'SSLv2');
  const all = tls.flatMap(accepted);
  const names = (pick: (s: ProtocolSuites['suites'][number]) => boolean) => [
    ...new Set(all.filter(pick).map((s) => s.name)),
  ];
  const unknownEnumeration = tls.some((p) => p.supported === undefined);
  const fromSuites = (check: Check, found: string[], what: string) =>
    found.length
      ? verdict(check, 'vulnerable', `${what} accepted: ${list(found)}`)
      : verdict(
          check,
          unknownEnumeration ? 'unknown' : 'not_vulnerable',
          unknownEnumeration ? 'a protocol probe got no answer in time' : `no ${what} accepted`,
        );
  const results: VulnerabilityResult[] = [];
  const sslv2 = supported(suites, 'SSLv2');
  const sslv3 = supported(suites, 'SSLv3');

  results.push(
    fromSuites(
      CHECKS.rc4,
      names((s) => s.rc4),
      'RC4 suite',
    ),
  );
  const block64 = names((s) => s.block64);
  results.push(
    sslv2?.supported && !block64.length
      ? verdict(CHECKS.sweet32, 'vulnerable', 'SSLv2 is accepted, and its ciphers are 64-bit block ciphers')
      : fromSuites(CHECKS.sweet32, block64, '64-bit block cipher suite (3DES, DES, IDEA, RC2)'),
  );
  results.push(
    fromSuites(
      CHECKS.freak,
      names((s) => s.export && /^TLS_RSA_EXPORT/.test(s.name)),
      'RSA export suite',
    ),
  );
  const dheExport = names((s) => s.export && /^TLS_DHE?_/.test(s.name));
  const dhBits = suites.findings.dhBits;
  if (dheExport.length)
    results.push(verdict(CHECKS.logjam, 'vulnerable', `DH export suites accepted: ${list(dheExport)}`));
  else if (dhBits !== undefined && dhBits < 1024) {
    results.push(verdict(CHECKS.logjam, 'vulnerable', `the DHE suites use a ${dhBits}-bit DH group, under 1024 bits`));
  } else {
    const group = dhBits === undefined ? 'no DHE suite' : `the DH group is ${dhBits}-bit`;
    results.push(fromSuites(CHECKS.logjam, [], `DH export suite (${group})`));
  }

  if (sslv2?.supported === undefined)
    results.push(verdict(CHECKS.drown, 'unknown', 'the SSLv2 probe got no answer in time'));
  else if (sslv2.supported) {
    results.push(verdict(CHECKS.drown, 'vulnerable', `SSLv2 is accepted (${sslv2.suites.length} cipher kinds)`));
  } else {
    results.push(
      verdict(CHECKS.drown, 'not_vulnerable', 'SSLv2 is refused here (other servers sharing this key are not checked)'),
    );
  }

  if (sslv3?.supported === undefined)
    results.push(verdict(CHECKS.poodle, 'unknown', 'the SSLv3 probe got no answer in time'));
  else {
    const cbc = sslv3.suites.filter((s) => s.cbc).map((s) => s.name);
    results.push(
      cbc.length
        ? verdict(CHECKS.poodle, 'vulnerable', `SSLv3 with CBC suites is accepted: ${list(cbc)}`)
        : verdict(
            CHECKS.poodle,
            'not_vulnerable',
            sslv3.supported ? 'SSLv3 is accepted, without CBC suites' : 'SSLv3 is refused',
          ),
    );
  }

  const beastCbc = [...accepted(sslv3), ...accepted(supported(suites, 'TLSv1'))]
    .filter((s) => s.cbc)
    .map((s) => s.name);
  const newer = tls.filter(
    (p) => p.supported && (p.protocol === 'TLSv1.1' || p.protocol === 'TLSv1.2' || p.protocol === 'TLSv1.3'),
  );
  results.push(
    beastCbc.length
      ? verdict(
          CHECKS.beast,
          'vulnerable',
          `CBC suites with TLS 1.0 or SSLv3: ${list([...new Set(beastCbc)])}` +
            (newer.length ? '; newer protocols are accepted too (likely mitigated in browsers)' : ''),
        )
      : fromSuites(CHECKS.beast, [], 'CBC suite with TLS 1.0 or SSLv3'),
  );
  const cbc = names((s) => s.cbc);
  results.push(
    cbc.length
      ? verdict(
          CHECKS.lucky13,
          'vulnerable',
          `potentially: CBC suites are accepted (${list(cbc)}); patched libraries resist the timing attack`,
        )
      : fromSuites(CHECKS.lucky13, [], 'CBC suite'),
  );

  const legacy = tls.filter((p) => p.supported && p.protocol !== 'TLSv1.3');
  if (!legacy.length && supported(suites, 'TLSv1.3')?.supported) {
    results.push(
      verdict(CHECKS.secureRenegotiation, 'not_vulnerable', 'only TLS 1.3 is accepted: it has no renegotiation'),
    );
  } else if (suites.findings.secureRenegotiation === undefined) {
    results.push(verdict(CHECKS.secureRenegotiation, 'unknown', 'no TLS 1.2-or-older handshake answered'));
  } else {
    results.push(
      suites.findings.secureRenegotiation
        ? verdict(CHECKS.secureRenegotiation, 'not_vulnerable', 'the server answers with renegotiation_info (RFC 5746)')
        : verdict(
            CHECKS.secureRenegotiation,
            'vulnerable',
            'the server does not support secure renegotiation (no renegotiation_info)',
          ),
    );
  }

  if (!page.answered) results.push(verdict(CHECKS.breach, 'unknown', `the home page could not be read: ${page.why}`));
  else {
    const encoding = page.headers['content-encoding'];
    results.push(
      encoding && /gzip|deflate|br|compress|zstd/i.test(encoding)
        ? verdict(
            CHECKS.breach,
            'vulnerable',
            `potentially: the home page is sent with HTTP compression (${encoding}); ` +
              'it matters if the page reflects input beside secrets',
          )
        : verdict(CHECKS.breach, 'not_vulnerable', 'the home page is sent without HTTP compression'),
    );
  }
  return results;
}

/** CRIME: a hello that offers DEFLATE; a server that picks it compresses TLS records. */
async function crime(ctx: Context): Promise<VulnerabilityResult> {
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy)
    return verdict(
      CHECKS.crime,
      supported(ctx.suites, 'TLSv1.3')?.supported ? 'not_vulnerable' : 'unknown',
      supported(ctx.suites, 'TLSv1.3')?.supported
        ? 'only TLS 1.3 is accepted: it has no compression'
        : 'no handshake answered',
    );
  const flight = await exchangeHello(
    ctx.endpoint,
    clientHello({
      version: legacy.version,
      suites: legacy.codes,
      compression: true,
      servername: ctx.endpoint.servername,
    }),
    ctx.timeoutMs,
    ctx.signal,
  );
  if (!flight.hello) return verdict(CHECKS.crime, 'unknown', 'the hello offering compression got no ServerHello');
  return flight.hello.compression !== 0
    ? verdict(
        CHECKS.crime,
        'vulnerable',
        `the server picks TLS compression (method ${flight.hello.compression}) when offered`,
      )
    : verdict(CHECKS.crime, 'not_vulnerable', 'the server refuses TLS compression');
}

/** TLS_FALLBACK_SCSV: a hello below the newest version, marked as a fallback, must get inappropriate_fallback. */
async function fallback(ctx: Context): Promise<VulnerabilityResult> {
  const versions = ctx.suites.protocols.filter((p) => p.supported && p.protocol !== 'SSLv2' && p.suites.length);
  if (versions.length < 2) {
    return verdict(
      CHECKS.fallback,
      versions.length ? 'not_vulnerable' : 'unknown',
      versions.length ? 'only one protocol is accepted: there is nothing to downgrade to' : 'no handshake answered',
    );
  }
  const lower = versions.at(-2) as ProtocolSuites;
  const flight = await exchangeHello(
    ctx.endpoint,
    clientHello({
      version: lower.protocol as WireVersion,
      suites: lower.suites.map((s) => s.code),
      fallback: true,
      servername: ctx.endpoint.servername,
    }),
    ctx.timeoutMs,
    ctx.signal,
  );
  if (flight.alert?.description === ALERT.inappropriateFallback) {
    return verdict(
      CHECKS.fallback,
      'not_vulnerable',
      `a ${lower.protocol} fallback hello is refused (inappropriate_fallback)`,
    );
  }
  if (flight.hello) {
    return verdict(
      CHECKS.fallback,
      'vulnerable',
      `a ${lower.protocol} hello marked as a fallback is accepted: no downgrade prevention`,
    );
  }
  return verdict(
    CHECKS.fallback,
    'unknown',
    `the fallback hello got ${flight.alert ? `alert ${flight.alert.description}` : flight.end}`,
  );
}

/** Heartbleed: a heartbeat request claiming 16 KB of payload and carrying none, sent before the handshake ends. */
async function heartbleed(ctx: Context): Promise<VulnerabilityResult> {
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy)
    return withoutLegacy(
      ctx,
      CHECKS.heartbleed,
      'no TLS 1.2-or-older handshake to probe (TLS 1.3 alone is not affected)',
    );
  const conn = await RawConnection.open(ctx.endpoint, ctx.timeoutMs, ctx.signal);
  if (!conn) return verdict(CHECKS.heartbleed, 'unknown', 'no connection');
  try {
    conn.send(
      clientHello({
        version: legacy.version,
        suites: legacy.codes,
        heartbeat: true,
        servername: ctx.endpoint.servername,
      }),
    );
    const flight = await conn.readFlight();
    if (!flight.hello)
      return verdict(CHECKS.heartbleed, 'unknown', 'the hello with the heartbeat extension got no ServerHello');
    if (!flight.hello.extensions.has(EXTENSION.heartbeat))
      return verdict(CHECKS.heartbleed, 'not_vulnerable', 'the server does not offer the heartbeat extension');
    conn.send(record(RECORD.heartbeat, VERSION_CODE[legacy.version], Buffer.from([1, 0x40, 0x00])));
    for (;;) {
      const rec = await conn.next();
      if (typeof rec === 'string')
        return verdict(
          CHECKS.heartbleed,
          'not_vulnerable',
          `the heartbeat got no answer (${rec === 'timeout' ? 'none in time' : 'connection closed'})`,
        );
      if (rec.type === RECORD.heartbeat) {
        return rec.body.length > 3
          ? verdict(
              CHECKS.heartbleed,
              'vulnerable',
              `a heartbeat carrying no payload came back with ${rec.body.length - 3} bytes of the server's memory`,
            )
          : verdict(CHECKS.heartbleed, 'not_vulnerable', 'the heartbeat came back without extra bytes');
      }
      if (rec.type === RECORD.alert)
        return verdict(
          CHECKS.heartbleed,
          'not_vulnerable',
          'the server answered the malformed heartbeat with an alert',
        );
    }
  } finally {
    conn.close();
  }
}

/** CCS injection: a ChangeCipherSpec before the key exchange; a patched server refuses it at once. */
async function ccsInjection(ctx: Context): Promise<VulnerabilityResult> {
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy)
    return withoutLegacy(ctx, CHECKS.ccs, 'no TLS 1.2-or-older handshake to probe (TLS 1.3 alone is not affected)');
  const conn = await RawConnection.open(ctx.endpoint, ctx.timeoutMs, ctx.signal);
  if (!conn) return verdict(CHECKS.ccs, 'unknown', 'no connection');
  try {
    const version = VERSION_CODE[legacy.version];
    conn.send(clientHello({ version: legacy.version, suites: legacy.codes, servername: ctx.endpoint.servername }));
    const flight = await conn.readFlight();
    if (!flight.hello || flight.end !== 'done')
      return verdict(CHECKS.ccs, 'unknown', 'the handshake did not reach ServerHelloDone');
    // An early CCS, then a record a server that took it would try to decrypt with a key of zero secrets.
    conn.send(record(RECORD.changeCipherSpec, version, Buffer.from([1])));
    conn.send(record(RECORD.alert, version, randomBytes(32)));
    const rec = await conn.next();
    if (typeof rec === 'string') {
      return rec === 'timeout'
        ? verdict(CHECKS.ccs, 'unknown', 'the early ChangeCipherSpec got no answer in time')
        : verdict(CHECKS.ccs, 'not_vulnerable', 'the server closed the connection on the early ChangeCipherSpec');
    }
    const alert = rec.type === RECORD.alert && rec.body.length === 2 ? rec.body[1] : undefined;
    if (alert === ALERT.unexpectedMessage || alert === ALERT.handshakeFailure) {
      return verdict(CHECKS.ccs, 'not_vulnerable', 'the early ChangeCipherSpec is refused (unexpected_message)');
    }
    if (alert === ALERT.badRecordMac || alert === ALERT.decryptionFailed || rec.type === RECORD.alert) {
      return verdict(
        CHECKS.ccs,
        'vulnerable',
        'the server took the early ChangeCipherSpec and tried to decrypt the next record',
      );
    }
    return verdict(CHECKS.ccs, 'unknown', `the early ChangeCipherSpec got a record of type ${rec.type}`);
  } finally {
    conn.close();
  }
}

/**
 * Ticketbleed (F5): a ticket sent with a one-byte session ID; an affected server echoes 32 bytes,
 * the 31 after ours from its memory. A server that resumes echoes our one byte; one that does not
 * resume sends a fresh ID, so two tries with different bytes tell an echo from chance.
 */
async function ticketbleed(ctx: Context): Promise<VulnerabilityResult> {
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy) return withoutLegacy(ctx, CHECKS.ticketbleed, 'no TLS 1.2-or-older handshake to probe');
  const ticket = await sessionTicket(ctx, legacy.version);
  if (!ticket) return verdict(CHECKS.ticketbleed, 'not_vulnerable', 'the server issues no session ticket');
  let echoed = 0;
  for (const first of [0x5a, 0xa5]) {
    const flight = await exchangeHello(
      ctx.endpoint,
      clientHello({
        version: legacy.version,
        suites: legacy.codes,
        sessionTicket: ticket,
        sessionId: Buffer.from([first]),
        servername: ctx.endpoint.servername,
      }),
      ctx.timeoutMs,
      ctx.signal,
    );
    if (!flight.hello) return verdict(CHECKS.ticketbleed, 'unknown', 'the resumption hello got no ServerHello');
    const id = flight.hello.sessionId;
    if (id.length === 32 && id[0] === first) echoed++;
  }
  return echoed === 2
    ? verdict(
        CHECKS.ticketbleed,
        'vulnerable',
        "a one-byte session ID came back as 32 bytes: 31 bytes of the server's memory",
      )
    : verdict(CHECKS.ticketbleed, 'not_vulnerable', 'the session ID sent with a ticket is not padded with memory');
}

/** A handshake over Node's TLS to the checked address at exactly `version`, certificate not checked. */
function connectAt(ctx: Context, version: WireVersion): tls.TLSSocket {
  return tls.connect({
    host: ctx.endpoint.address,
    port: ctx.endpoint.port,
    servername: ctx.endpoint.servername,
    rejectUnauthorized: false,
    minVersion: version as tls.SecureVersion,
    maxVersion: version as tls.SecureVersion,
    ciphers: 'DEFAULT:@SECLEVEL=0',
  });
}

/** A session ticket from one full handshake over Node's TLS (at the version the raw probes speak). */
function sessionTicket(ctx: Context, version: WireVersion): Promise<Buffer | undefined> {
  if (version === 'SSLv3') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = connectAt(ctx, version);
    const finish = (ticket: Buffer | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ticket);
    };
    const timer = setTimeout(() => finish(undefined), ctx.timeoutMs);
    socket.once('secureConnect', () => finish(socket.getTLSTicket()));
    socket.once('error', () => finish(undefined));
  });
}

/** Renegotiations asked in a row before a server counts as not limiting them. */
const RENEGOTIATIONS = 5;

/**
 * Client-initiated renegotiation over Node's TLS (TLS 1.2 and older): a server that accepts it
 * lets one client make it do a handshake's work again and again (a denial of service; testssl.sh's
 * "potential DoS threat"). No grade cap: SSL Labs caps only insecure renegotiation, which the
 * secure-renegotiation check reports.
 */
function clientRenegotiation(ctx: Context): Promise<VulnerabilityResult> {
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy || legacy.version === 'SSLv3') {
    const only13 = supported(ctx.suites, 'TLSv1.3')?.supported;
    return Promise.resolve(
      verdict(
        CHECKS.clientRenegotiation,
        only13 ? 'not_vulnerable' : 'unknown',
        only13 ? 'only TLS 1.3 is accepted: it has no renegotiation' : 'no TLS 1.0 to 1.2 handshake to renegotiate',
      ),
    );
  }
  return new Promise((resolve) => {
    const socket = connectAt(ctx, legacy.version);
    const finish = (result: VulnerabilityResult) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => finish(verdict(CHECKS.clientRenegotiation, 'unknown', 'the renegotiation got no answer in time')),
      ctx.timeoutMs,
    );
    socket.on('error', () =>
      finish(
        verdict(CHECKS.clientRenegotiation, 'not_vulnerable', 'the server refuses a renegotiation the client starts'),
      ),
    );
    // Whatever the server sends (a web server's 400 to no request) is read and dropped: an unread
    // socket never reports its close.
    socket.resume();
    let renegotiated = 0;
    socket.once('close', () =>
      finish(
        renegotiated
          ? verdict(
              CHECKS.clientRenegotiation,
              'not_vulnerable',
              `mitigated: the server accepts ${renegotiated} renegotiations started by the client, ` +
                'then closes the connection',
            )
          : verdict(
              CHECKS.clientRenegotiation,
              'not_vulnerable',
              'the server closed the connection on the renegotiation',
            ),
      ),
    );
    // Several in a row, as testssl.sh does: a server that limits them (Node's 3 in 10 minutes) is mitigated.
    const again = () => {
      const started = socket.renegotiate({ rejectUnauthorized: false }, (err) => {
        if (err) {
          return finish(
            renegotiated
              ? verdict(
                  CHECKS.clientRenegotiation,
                  'not_vulnerable',
                  `mitigated: the server accepts ${renegotiated} renegotiations started by the client, then refuses`,
                )
              : verdict(
                  CHECKS.clientRenegotiation,
                  'not_vulnerable',
                  'the server refuses a renegotiation the client starts',
                ),
          );
        }
        renegotiated++;
        if (renegotiated < RENEGOTIATIONS) return again();
        finish(
          verdict(
            CHECKS.clientRenegotiation,
            'vulnerable',
            `the server accepts ${RENEGOTIATIONS} renegotiations in a row started by the client: ` +
              'a denial-of-service lever',
          ),
        );
      });
      if (!started) finish(verdict(CHECKS.clientRenegotiation, 'unknown', 'the renegotiation could not be started'));
    };
    socket.once('secureConnect', again);
  });
}

/**
 * ROBOT needs RSA key transport: without an RSA suite there is no oracle to ask. With one, the
 * Bleichenbacher oracle test (five malformed premaster secrets compared) is not made by this scan.
 */
function robot(ctx: Context): VulnerabilityResult {
  const rsa = ctx.suites.protocols.flatMap(accepted).filter((s) => s.keyExchange === 'RSA');
  return rsa.length
    ? verdict(
        CHECKS.robot,
        'unknown',
        `RSA key transport is accepted (${list([...new Set(rsa.map((s) => s.name))])}); the oracle probe is not made`,
      )
    : verdict(CHECKS.robot, 'not_vulnerable', 'no RSA key transport suite is accepted');
}

/** Every check, in testssl.sh's order; the probes run at once, each within the probe timeout. */
export async function checkVulnerabilities(ctx: Context): Promise<VulnerabilityResult[]> {
  const scoped = AbortSignal.any([ctx.signal]);
  setMaxListeners(MAX_LISTENERS, scoped);
  ctx = { ...ctx, signal: scoped };
  const derived = new Map(derivedChecks(ctx.suites, ctx.page).map((r) => [r.id, r]));
  const [hb, ccs, tb, crimeResult, fallbackResult, reneg] = await Promise.all([
    heartbleed(ctx),
    ccsInjection(ctx),
    ticketbleed(ctx),
    crime(ctx),
    fallback(ctx),
    clientRenegotiation(ctx),
  ]);
  const get = (check: Check) => derived.get(check.id) as VulnerabilityResult;
  return [
    hb,
    ccs,
    tb,
    robot(ctx),
    get(CHECKS.secureRenegotiation),
    reneg,
    crimeResult,
    get(CHECKS.breach),
    get(CHECKS.poodle),
    fallbackResult,
    get(CHECKS.sweet32),
    get(CHECKS.freak),
    get(CHECKS.drown),
    get(CHECKS.logjam),
    get(CHECKS.beast),
    get(CHECKS.lucky13),
    get(CHECKS.rc4),
  ];
}
