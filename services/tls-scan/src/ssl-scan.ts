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
import type { SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { lookupCaa } from './caa.js';
import { type CertificateFacts, nameMatches, presentCertificate, readSentChain } from './certificate.js';
import { type TrustStore, verifyChain } from './chain.js';
import { categories, rate } from './grade.js';
import { connectTls, handshakeError, keyExchangeOf, MAIN_CONTEXT, negotiatedOf } from './handshake.js';
import { fetchHsts, parseHsts } from './hsts.js';
import { usableStaple } from './ocsp.js';
import { ALPN_OFFER, probeSupport } from './probes.js';

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
): Promise<SslScanResponse> {
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
  const [address] = await resolveTarget(host.name, deps.policy, deps.lookup).catch((err: unknown) => {
    throw targetFailure(err);
  });
  const endpoint = { address, port, servername: host.isIp ? undefined : host.name };
  const authority = host.isIp && host.name.includes(':') ? `[${host.name}]` : host.name;
  const origin = `https://${authority}${port === 443 ? '' : `:${port}`}/`;
  // HSTS and CAA need nothing from the main handshake: they run beside it, and stop if it fails.
  // The HSTS request starts once the main connection is up, so the main one is the first the server sees.
  const sideline = new AbortController();
  const stopSideline = () => sideline.abort();
  signal.addEventListener('abort', stopSideline, { once: true });
  let hstsHeader: Promise<string | undefined> = Promise.resolve(undefined);
  const startHsts = () => {
    hstsHeader = fetchHsts(deps.http, origin, deps.probeTimeoutMs, sideline.signal);
  };
  const caa =
    host.isIp || !extras ? undefined : lookupCaa(host.name, deps.dnsServers, deps.probeTimeoutMs, sideline.signal);
  let socket: TLSSocket;
  let ocspResponse = null as Buffer | null;
  try {
    const offer = {
      alpn: ALPN_OFFER,
      onOcspResponse: (response: Buffer | null) => {
        ocspResponse = response;
      },
    };
    socket = await connectTls(endpoint, MAIN_CONTEXT, deps.handshakeTimeoutMs, signal, {
      onConnect: startHsts,
      ...(extras ? offer : {}),
    });
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
    const [hsts, support, chain, caaPolicy] = await Promise.all([
      hstsHeader.then(parseHsts),
      probeSupport(endpoint, main, mainAlpn, deps.probeTimeoutMs, signal),
      verifyChain(sent, { store: deps.store, now, download: (url) => download(deps, url, signal) }),
      caa,
    ]);
    if (signal.aborted) throw signal.reason;
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
    const gradeInput = {
      protocols: support.protocols,
      strongestBits: support.strongestBits,
      weakestBits: support.weakestBits,
      insecureSuite: support.insecure !== undefined,
      keyExchangeBits: keyStrengths.length ? Math.min(...keyStrengths) : 0,
      negotiated: main,
      trusted: chain.trusted,
      chainComplete: chain.complete,
      nameMatches: names.san,
      inDate: !isExpired && !notYetValid,
      hstsMaxAge: hsts?.maxAge,
    };
    const rating = rate(gradeInput);
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
      ocspStapling: usableStaple(ocspResponse, leaf.x509, chain.path[1]?.facts.x509, now),
      keyExchange,
      caa: caaPolicy,
      ipAddress: address,
      alpn: support.alpn,
      scoreAreas: {
        certificate: chain.trusted && chain.complete && names.san && !isExpired && !notYetValid ? 100 : 0,
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
