import type { TLSSocket } from 'node:tls';
import {
  type AddressPolicy,
  OutboundError,
  parseTargetHost,
  resolveTarget,
  type SafeHttp,
  targetFailure,
} from '@webutil/kit';
import type { SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { type CertificateFacts, nameMatches, presentCertificate, readSentChain } from './certificate.js';
import { type TrustStore, verifyChain } from './chain.js';
import { rate } from './grade.js';
import { connectTls, handshakeError, MAIN_CONTEXT, negotiatedOf } from './handshake.js';
import { hstsMaxAge, readHstsHeader } from './hsts.js';
import { probeSupport } from './probes.js';

export interface SslScanDeps {
  policy: AddressPolicy;
  /** For issuer downloads (authorityInfoAccess) when the server leaves out an intermediate. */
  http: SafeHttp;
  store: TrustStore;
  /** The port scanned: 443 in production. */
  port: number;
  /** Budget of the main connection, TCP and TLS handshake together. */
  handshakeTimeoutMs: number;
  /** Budget of each probe, of the HSTS answer and of each issuer download. */
  probeTimeoutMs: number;
}

const DAY_MS = 86_400_000;
const MAX_ISSUER_BYTES = 64 * 1024;

/**
 * One TLS connection to the checked address (SNI = the name) reads the negotiated protocol and
 * cipher, the certificates the server sent and, over the same connection, the HSTS header; the
 * protocol and cipher probes run beside it. Trust is judged here, not by OpenSSL's verdict, so
 * an untrusted certificate is still read in full.
 */
export async function sslScan(domain: string, deps: SslScanDeps, signal: AbortSignal): Promise<SslScanResponse> {
  const host = parseTargetHost(domain);
  // Every handshake of the scan goes to this one address: a later answer (DNS rebinding) cannot move it.
  const [address] = await resolveTarget(host.name, deps.policy).catch((err: unknown) => {
    throw targetFailure(err);
  });
  const endpoint = { address, port: deps.port, servername: host.isIp ? undefined : host.name };
  let socket: TLSSocket;
  try {
    socket = await connectTls(endpoint, MAIN_CONTEXT, deps.handshakeTimeoutMs, signal);
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw err instanceof OutboundError ? handshakeError(err) : err;
  }
  try {
    const main = negotiatedOf(socket);
    const sent = readSentChain(peerChain(socket));
    const authority = host.isIp && host.name.includes(':') ? `[${host.name}]` : host.name;
    const now = new Date();
    const [hsts, support, chain] = await Promise.all([
      readHstsHeader(socket, deps.port === 443 ? authority : `${authority}:${deps.port}`, deps.probeTimeoutMs),
      probeSupport(endpoint, main, deps.probeTimeoutMs, signal),
      verifyChain(sent, { store: deps.store, now, download: (url) => download(deps, url, signal) }),
    ]);
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
    const rating = rate({
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
      hstsMaxAge: hstsMaxAge(hsts),
    });
    return {
      domain: host.name,
      port: deps.port,
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
    };
  } finally {
    socket.destroy();
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
