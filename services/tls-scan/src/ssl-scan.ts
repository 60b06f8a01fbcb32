import type { TLSSocket } from 'node:tls';
import {
  type AddressPolicy,
  invalidArgument,
  type LookupHost,
  OutboundError,
  parseTargetHost,
  resolveTarget,
  type SafeHttp,
  targetFailure,
} from '@webutil/kit';
import type { ScanTimings, SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { lookupCaa } from './caa.js';
import { type CertificateFacts, nameMatches, presentCertificate, readSentChain } from './certificate.js';
import { type TrustStore, verifyChain } from './chain.js';
import {
  type DeepScan,
  deepScan,
  gradeFindings,
  presentProtocols,
  presentVulnerabilities,
  suiteNotes,
} from './deep-scan.js';
import { categories, type HstsStatus, type NamedKey, rate, trustMarker } from './grade.js';
import { connectTls, handshakeError, keyExchangeOf, MAIN_CONTEXT, negotiatedOf } from './handshake.js';
import { type HomePage, parseHsts, readHomePage } from './hsts.js';
import { queryRevocation, readOcspAnswer } from './ocsp.js';
import { ALPN_OFFER, probeSupport } from './probes.js';
import { DROWN_PORTS } from './vulnerabilities/drown.js';

export interface SslScanDeps {
  policy: AddressPolicy;
  /** For issuer downloads (authorityInfoAccess) when the server leaves out an intermediate. */
  http: SafeHttp;
  store: TrustStore;
  /** The port scanned when the request names none: 443 in production. */
  port: number;
  /** How the domain is resolved: the system resolver unless DNS servers are configured. */
  lookup?: LookupHost;
  /** DNS servers asked for CAA records; the system's when empty. */
  dnsServers: readonly string[];
  /** ALPN, OCSP stapling and CAA: on unless switched off (SSL_SCAN_EXTRA_PROBES). */
  extraProbes?: boolean;
  /** Other ports of the scanned address tried for SSLv2 with the same key (DROWN); DROWN_PORTS when absent. */
  drownPorts?: readonly number[];
  /** Budget of the main connection, TCP and TLS handshake together. */
  handshakeTimeoutMs: number;
  /** Budget of each probe, of the HSTS answer, of the CAA lookups and of each issuer download. */
  probeTimeoutMs: number;
}

const DAY_MS = 86_400_000;
const MAX_ISSUER_BYTES = 64 * 1024;

/**
 * One TLS connection to the checked address (SNI = the name) reads the negotiated protocol,
 * cipher, key exchange, ALPN selection, stapled OCSP response and the certificates the server
 * sent. Beside it, all at once: the protocol, cipher and ALPN probes, the HSTS header (through the
 * safe HTTP client) and the CAA records. Trust is judged here, not by OpenSSL's verdict, so an
 * untrusted certificate is still read in full.
 */
export async function sslScan(
  domain: string,
  deps: SslScanDeps,
  signal: AbortSignal,
  requestedPort?: number,
  fast = false,
): Promise<SslScanResponse> {
  const started = performance.now();
  const timings: ScanTimings = {
    totalMs: 0,
    resolveMs: 0,
    handshakeMs: 0,
    probesMs: 0,
    chainMs: 0,
    homePageMs: 0,
    caaMs: 0,
    cipherSuitesMs: 0,
    vulnerabilitiesMs: 0,
    revocationMs: 0,
  };
  /** `work`, its duration written to timings[part] when it settles. */
  const timed = <T>(part: keyof ScanTimings, work: Promise<T>): Promise<T> => {
    const from = performance.now();
    const record = () => {
      timings[part] = Math.round(performance.now() - from);
    };
    return work.finally(record);
  };
  const host = parseTargetHost(domain);
  if (
    requestedPort !== undefined &&
    !(Number.isInteger(requestedPort) && requestedPort >= 1 && requestedPort <= 65535)
  ) {
    throw invalidArgument('INVALID_PORT', 'port must be an integer from 1 to 65535');
  }
  const port = requestedPort ?? deps.port;
  const extras = deps.extraProbes !== false;
  // Every handshake of the scan goes to this one address: a later answer (DNS rebinding) cannot move it.
  const [address] = await timed('resolveMs', resolveTarget(host.name, deps.policy, deps.lookup)).catch(
    (err: unknown) => {
      throw targetFailure(err);
    },
  );
  const endpoint = { address, port, servername: host.isIp ? undefined : host.name };
  const hostName = host.isIp && host.name.includes(':') ? `[${host.name}]` : host.name;
  const authority = `${hostName}${port === 443 ? '' : `:${port}`}`;
  // HSTS and CAA need nothing from the main handshake: they run beside it, and stop if it fails.
  // The HSTS request starts once the main connection is up, so the main one is the first the server sees.
  const sideline = new AbortController();
  const stopSideline = () => sideline.abort();
  signal.addEventListener('abort', stopSideline, { once: true });
  let homePage: Promise<HomePage> = Promise.resolve({ answered: false, why: 'not asked' });
  const startHsts = () => {
    homePage = timed('homePageMs', readHomePage(endpoint, authority, deps.probeTimeoutMs, sideline.signal));
  };
  const caa =
    host.isIp || !extras
      ? undefined
      : timed('caaMs', lookupCaa(host.name, deps.dnsServers, deps.probeTimeoutMs, sideline.signal));
  let socket: TLSSocket;
  let ocspResponse = null as Buffer | null;
  try {
    const offer = {
      alpn: ALPN_OFFER,
      onOcspResponse: (response: Buffer | null) => {
        ocspResponse = response;
      },
    };
    socket = await timed(
      'handshakeMs',
      connectTls(endpoint, MAIN_CONTEXT, deps.handshakeTimeoutMs, signal, {
        onConnect: startHsts,
        ...(extras ? offer : {}),
      }),
    );
  } catch (err) {
    stopSideline();
    signal.removeEventListener('abort', stopSideline);
    if (signal.aborted) throw signal.reason;
    throw err instanceof OutboundError ? handshakeError(err) : err;
  }
  try {
    const main = negotiatedOf(socket);
    const mainAlpn = socket.alpnProtocol || undefined;
    const keyExchange = keyExchangeOf(socket);
    const sent = readSentChain(peerChain(socket));
    socket.destroy();
    const now = new Date();
    const chained = timed(
      'chainMs',
      verifyChain(sent, { store: deps.store, now, download: (url) => download(deps, url, signal) }),
    );
    // Revocation needs the issuer: it starts once the chain is built, beside the rest.
    const revocation = fast
      ? undefined
      : chained.then((built) =>
          timed(
            'revocationMs',
            queryRevocation(
              sent[0].x509,
              built.path[1]?.facts.x509,
              sent[0].ocspResponders,
              deps.http,
              deps.probeTimeoutMs,
              signal,
            ),
          ),
        );
    const [page, support, chain, caaPolicy, deep, revoked] = await Promise.all([
      homePage,
      timed('probesMs', probeSupport(endpoint, main, mainAlpn, deps.probeTimeoutMs, signal)),
      chained,
      caa,
      fast
        ? undefined
        : deepScan(endpoint, homePage, deps.probeTimeoutMs, signal, {
            certificate: sent[0].x509,
            otherPorts: deps.drownPorts ?? DROWN_PORTS,
          }),
      revocation,
    ]);
    if (deep) {
      timings.cipherSuitesMs = deep.cipherSuitesMs;
      timings.vulnerabilitiesMs = deep.vulnerabilitiesMs;
    }
    const findings = deep && gradeFindings(deep);
    const bits = [support.strongestBits, support.weakestBits, ...(findings?.bits ?? [])];
    if (signal.aborted) throw signal.reason;
    // A certificate its responder says is revoked is trusted by no browser that asks (SSL Labs: T).
    if (revoked?.status === 'revoked') {
      chain.trusted = false;
      chain.problems.push(`the OCSP responder says the certificate is ${revoked.detail ?? 'revoked'}`);
    }
    const leaf = chain.path[0]?.facts as CertificateFacts;
    const names = nameMatches(leaf, host.name);
    const isExpired = leaf.notAfter < now;
    const notYetValid = leaf.notBefore > now;
    // The spec: true only if the certificate passes every validation, the CN's included.
    const isValid =
      !chain.selfSigned &&
      chain.complete &&
      chain.trusted &&
      names.san &&
      names.commonName &&
      !isExpired &&
      !notYetValid;
    const keyStrengths = [leaf.keyStrength, main.ephemeralStrength].filter((b): b is number => b !== undefined);
    const hsts = page.answered ? parseHsts(page.headers['strict-transport-security']) : undefined;
    const certificateFine = chain.trusted && names.san && !isExpired && !notYetValid;
    const hstsStatus: HstsStatus = !page.answered
      ? 'not_read'
      : !hsts
        ? 'absent'
        : certificateFine
          ? 'honoured'
          : 'ignored';
    const gradeInput = {
      protocols: support.protocols,
      strongestBits: Math.max(...bits),
      weakestBits: Math.min(...bits),
      insecureSuite: support.insecure !== undefined || findings?.insecureSuite === true,
      keyExchangeBits: keyStrengths.length ? Math.min(...keyStrengths) : 0,
      keys: { certificate: certificateKey(leaf), exchange: exchangeKey(keyExchange, main.ephemeralStrength) },
      negotiated: main,
      trusted: chain.trusted,
      trustProblems: chain.problems,
      chainComplete: chain.complete,
      nameMatches: names.san,
      inDate: !isExpired && !notYetValid,
      hstsMaxAge: hsts?.maxAge,
      hstsStatus,
      findingCaps: findings?.caps,
    };
    const staple = readOcspAnswer(ocspResponse, leaf.x509, chain.path[1]?.facts.x509, now);
    const rating = rate(gradeInput);
    const marker = trustMarker(gradeInput);
    const areas = categories(gradeInput);
    return {
      domain: host.name,
      port,
      protocol: main.protocol,
      certificate: presentCertificate(leaf, true),
      chain: chain.path.slice(1).map((link) => presentCertificate(link.facts, false)),
      isValid,
      daysUntilExpiry: Math.floor((leaf.notAfter.getTime() - now.getTime()) / DAY_MS),
      isExpired,
      certValidations: {
        selfSigned: chain.selfSigned,
        chainComplete: chain.complete,
        trustedCert: chain.trusted,
        commonNameValid: names.commonName,
        sanValid: names.san,
        // The spec: present only when the chain has a problem (dates and names have their own fields).
        chainIssueDescription: chain.problems.length ? chain.problems.join('; ') : undefined,
      },
      tlsVersion: main.protocol,
      cipherSuite: main.cipher,
      securityGrade: rating.grade,
      score: rating.score,
      protocols: support.versions,
      gradeReasons: rating.reasons,
      hsts: hsts && { ...hsts, maxAge: String(hsts.maxAge) },
      hstsStatus,
      ocspStapling: staple !== undefined,
      certificateTransparency: deep && {
        embedded: leaf.embeddedScts,
        stapled: staple?.scts ?? 0,
        tlsExtension: deep.suites.findings.tlsScts,
      },
      revocation: revoked,
      keyExchange,
      caa: caaPolicy,
      ipAddress: address,
      alpn: support.alpn,
      ...deepFields(deep),
      fast,
      timings: { ...timings, totalMs: Math.round(performance.now() - started) },
      trustMarker: marker?.marker,
      gradeIgnoringTrust: marker?.gradeIgnoringTrust,
      scoreAreas: {
        certificate: certificateFine && chain.complete ? 100 : 0,
        protocolSupport: areas.protocol,
        keyExchange: areas.keyExchange,
        cipherStrength: areas.cipher,
      },
    };
  } finally {
    socket.destroy();
    stopSideline();
    signal.removeEventListener('abort', stopSideline);
  }
}

/** The full scan's fields; empty in fast mode. */
function deepFields(deep: DeepScan | undefined) {
  return {
    cipherSuites: deep ? presentProtocols(deep.suites.protocols) : [],
    namedGroups: deep?.suites.groups ?? [],
    signatureAlgorithms: deep?.suites.signatureAlgorithms ?? [],
    cipherNotes: deep ? suiteNotes(deep.suites.protocols) : [],
    vulnerabilities: deep ? presentVulnerabilities(deep.vulnerabilities) : [],
  };
}

const KEY_TYPE_LABEL: Record<string, string> = { rsa: 'RSA', 'rsa-pss': 'RSA-PSS', ec: 'EC', dsa: 'DSA' };

/** The certificate's key for a grade message, e.g. "1024-bit RSA" or "256-bit EC (prime256v1)". */
function certificateKey(leaf: CertificateFacts): NamedKey | undefined {
  if (leaf.keyStrength === undefined) return undefined;
  const key = leaf.x509.publicKey;
  const type = key.asymmetricKeyType ?? 'unknown';
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const label =
    type === 'ed25519' || type === 'ed448'
      ? type.replace('ed', 'Ed')
      : `${leaf.keyBits}-bit ${KEY_TYPE_LABEL[type] ?? type}${curve ? ` (${curve})` : ''}`;
  return { strength: leaf.keyStrength, label };
}

/** The ephemeral key for a grade message, e.g. "X25519 (ECDH)" or "1024-bit DH"; none for RSA key transport. */
function exchangeKey(
  info: { type: string; name?: string; size: number } | undefined,
  strength: number | undefined,
): NamedKey | undefined {
  if (!info || strength === undefined) return undefined;
  return { strength, label: info.name ? `${info.name} (${info.type})` : `${info.size}-bit ${info.type}` };
}

/** The DER certificates the server sent, leaf first, in issuing order. */
function peerChain(socket: TLSSocket): Buffer[] {
  const chain: Buffer[] = [];
  let cert = socket.getPeerCertificate(true);
  const seen = new Set<string>();
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(cert.raw);
    cert = cert.issuerCertificate;
  }
  return chain;
}

/** An issuer's certificate from its authorityInfoAccess URL, through the outbound policy. */
async function download(deps: SslScanDeps, url: string, signal: AbortSignal): Promise<Buffer | undefined> {
  try {
    const res = await deps.http.fetch(url, {
      maxRedirects: 3,
      timeoutMs: deps.probeTimeoutMs,
      maxBodyBytes: MAX_ISSUER_BYTES,
      headers: { accept: 'application/pkix-cert, */*' },
      signal,
    });
    if (res.status !== 200) {
      await res.dump();
      return undefined;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk);
    return res.truncated ? undefined : Buffer.concat(chunks);
  } catch {
    return undefined;
  }
}
