import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { type CertificateFacts, readCertificate } from './certificate.js';

/**
 * The roots a chain must end in: Node's bundled Mozilla root store (the browsers' list, whatever
 * the container's OS carries) plus an optional PEM file of extra roots (a private CA, tests).
 */
export class TrustStore {
  private readonly bySubject = new Map<string, X509Certificate[]>();
  private readonly fingerprints = new Set<string>();

  /** The roots as PEM, for a client that checks certificates against the same store (HSTS). */
  constructor(readonly pems: readonly string[]) {
    for (const pem of pems) {
      const cert = new X509Certificate(pem);
      const list = this.bySubject.get(cert.subject) ?? [];
      list.push(cert);
      this.bySubject.set(cert.subject, list);
      this.fingerprints.add(cert.fingerprint256);
    }
  }

  static load(extraCaFile?: string): TrustStore {
    const extra = extraCaFile ? splitPem(readFileSync(extraCaFile, 'utf8')) : [];
    if (extraCaFile && extra.length === 0) throw new Error(`${extraCaFile} holds no PEM certificate`);
    return new TrustStore([...tls.rootCertificates, ...extra]);
  }

  contains(cert: X509Certificate): boolean {
    return this.fingerprints.has(cert.fingerprint256);
  }

  /** A trusted certificate that issued `cert` (name match and a valid signature). */
  issuerOf(cert: X509Certificate): X509Certificate | undefined {
    return this.bySubject.get(cert.issuer)?.find((candidate) => issued(candidate, cert));
  }
}

const PEM_BEGIN = '-----BEGIN CERTIFICATE-----';
const PEM_END = '-----END CERTIFICATE-----';

/**
 * The PEM certificates in a text, in order. One pass with indexOf: the text may be a downloaded
 * issuer body, and a lazy regex over many BEGIN lines without an END costs the square of its length.
 */
export function splitPem(text: string): string[] {
  const found: string[] = [];
  for (let begin = text.indexOf(PEM_BEGIN); begin >= 0; begin = text.indexOf(PEM_BEGIN, begin)) {
    const end = text.indexOf(PEM_END, begin + PEM_BEGIN.length);
    if (end < 0) break;
    found.push(text.slice(begin, end + PEM_END.length));
    begin = end + PEM_END.length;
  }
  return found;
}

/**
 * Whether `issuer` signed `cert`: the names chain and the signature verifies. Not checkIssued(),
 * which also wants a CA's key usage: an issuer that is no CA must still be found, to be reported.
 */
export function issued(issuer: X509Certificate, cert: X509Certificate): boolean {
  try {
    return cert.issuer === issuer.subject && cert.verify(issuer.publicKey);
  } catch {
    return false; // a key type this OpenSSL cannot verify with
  }
}

/** Its own issuer: the certificate's own key verifies its signature. */
export function isSelfSigned(cert: X509Certificate): boolean {
  return issued(cert, cert);
}

/** Where a certificate of the path came from. */
export type Origin = 'sent' | 'trust store' | 'downloaded';

export interface PathLink {
  facts: CertificateFacts;
  origin: Origin;
}

/** The certification path from the leaf, and what is wrong with it. */
export interface ChainVerdict {
  /** Leaf first; then intermediates and the root, as far as they could be found. */
  path: PathLink[];
  selfSigned: boolean;
  /** The server sent every certificate between its own and a root. */
  complete: boolean;
  /** The path ends in the trust store, every signature verifies, every issuer is a CA in date. */
  trusted: boolean;
  /** One sentence per problem, for chainIssueDescription. */
  problems: string[];
}

export interface ChainOptions {
  store: TrustStore;
  /** Downloads the issuer named by an authorityInfoAccess URL (undefined when that fails). */
  download: (url: string) => Promise<Buffer | undefined>;
  now: Date;
}

const MAX_PATH = 8;
/** Issuer downloads per scan: a missing intermediate, and one above it at most. */
const MAX_DOWNLOADS = 2;

const label = (facts: CertificateFacts) =>
  `"${facts.subject.CN ?? facts.subject.O ?? facts.x509.subject.replace(/\n/g, ', ')}"`;

/**
 * Builds the path as a browser would: issuers the server sent first, then the trust store, then
 * the issuer's download URL (authorityInfoAccess, as Chrome, Edge and Safari do when a server
 * leaves out an intermediate). `sent` is the server's chain, leaf first.
 */
export async function verifyChain(
  sent: readonly [CertificateFacts, ...CertificateFacts[]],
  options: ChainOptions,
): Promise<ChainVerdict> {
  const [leaf, ...others] = sent;
  const path: PathLink[] = [{ facts: leaf, origin: 'sent' }];
  const problems: string[] = [];
  const selfSigned = isSelfSigned(leaf.x509);
  let anchored = options.store.contains(leaf.x509);
  let endsAtRoot = selfSigned || anchored;
  let downloads = 0;
  if (selfSigned && !anchored) problems.push('the certificate is self-signed, so no browser trusts it');

  while (!endsAtRoot && path.length < MAX_PATH) {
    const top = path[path.length - 1]?.facts as CertificateFacts;
    const unused = others.filter((c) => !path.some((l) => l.facts === c));
    const next = await findIssuer(top, unused, options, downloads);
    if (!next) {
      problems.push(
        `the chain ends at ${label(top)}, whose issuer "${top.issuer.CN ?? top.x509.issuer}" the server did not send ` +
          'and is not a trusted root',
      );
      break;
    }
    if (next.origin === 'downloaded') {
      downloads++;
      problems.push(
        `the server does not send the intermediate certificate ${label(next.facts)}; browsers that do not ` +
          'download it fail: install the full chain',
      );
    }
    path.push(next);
    anchored = next.origin === 'trust store' || options.store.contains(next.facts.x509);
    endsAtRoot = anchored || isSelfSigned(next.facts.x509);
  }
  if (!endsAtRoot && path.length >= MAX_PATH) {
    problems.push(`the chain has ${MAX_PATH} certificates and still no root`);
  }
  const root = path[path.length - 1] as PathLink;
  if (endsAtRoot && !anchored && path.length > 1) {
    problems.push(`the chain ends at the root ${label(root.facts)}, which is not a trusted root`);
  }

  let sound = true;
  for (const [i, { facts }] of path.entries()) {
    // A root's (or trust anchor's) own signature is checked by no one; every other one is.
    if (facts.weakSignature && !(endsAtRoot && i === path.length - 1)) {
      sound = false;
      problems.push(`${label(facts)} is signed with ${facts.sigalg}, which browsers no longer accept`);
    }
    if (i === 0) continue;
    const child = path[i - 1]?.facts as CertificateFacts;
    if (!facts.x509.ca) {
      sound = false;
      problems.push(`${label(facts)} signs ${label(child)} but is not a CA certificate`);
    }
    if (facts.notAfter < options.now || facts.notBefore > options.now) {
      sound = false;
      problems.push(
        `the issuing certificate ${label(facts)} is valid only from ${iso(facts.notBefore)} to ${iso(facts.notAfter)}`,
      );
    }
  }
  const complete = endsAtRoot && path.every((l) => l.origin !== 'downloaded');
  return {
    path,
    selfSigned,
    complete,
    trusted: anchored && sound,
    problems,
  };
}

const iso = (date: Date) => date.toISOString().slice(0, 10);

async function findIssuer(
  cert: CertificateFacts,
  sent: readonly CertificateFacts[],
  options: ChainOptions,
  downloads: number,
): Promise<PathLink | undefined> {
  const fromServer = sent.find((candidate) => issued(candidate.x509, cert.x509));
  if (fromServer) return { facts: fromServer, origin: 'sent' };
  const fromStore = options.store.issuerOf(cert.x509);
  if (fromStore) return { facts: readCertificate(fromStore.raw), origin: 'trust store' };
  if (downloads >= MAX_DOWNLOADS) return undefined;
  const url = cert.caIssuers[0];
  const body = url ? await options.download(url) : undefined;
  const facts = body && parseDownloaded(body);
  return facts && issued(facts.x509, cert.x509) ? { facts, origin: 'downloaded' } : undefined;
}

/** A downloaded issuer: DER (what RFC 5280 asks for) or PEM; anything else is ignored. */
function parseDownloaded(body: Buffer): CertificateFacts | undefined {
  try {
    const pem = splitPem(body.toString('latin1'))[0];
    return readCertificate(pem ? new X509Certificate(pem).raw : body);
  } catch {
    return undefined;
  }
}
