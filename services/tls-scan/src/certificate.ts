import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import * as ecc from '@peculiar/asn1-ecc';
import * as rsa from '@peculiar/asn1-rsa';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  type AlgorithmIdentifier,
  Certificate as AsnCertificate,
  AuthorityInfoAccessSyntax,
  id_ad_caIssuers,
  id_ad_ocsp,
  id_ce_subjectAltName,
  id_pe_authorityInfoAccess,
  SubjectAlternativeName,
} from '@peculiar/asn1-x509';
import { invalidArgument } from '@webutil/kit';
import type { Certificate } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';

/** Hashes a signature algorithm names, by OID, as OpenSSL prints them; `weak`: broken for signatures. */
const HASHES: Record<string, { name: string; weak?: true }> = {
  [rsa.id_md2]: { name: 'md2', weak: true },
  [rsa.id_md5]: { name: 'md5', weak: true },
  [rsa.id_sha1]: { name: 'sha1', weak: true },
  [rsa.id_sha224]: { name: 'sha224' },
  [rsa.id_sha256]: { name: 'sha256' },
  [rsa.id_sha384]: { name: 'sha384' },
  [rsa.id_sha512]: { name: 'sha512' },
  [rsa.id_sha512_224]: { name: 'sha512-224' },
  [rsa.id_sha512_256]: { name: 'sha512-256' },
};

/**
 * Signature algorithms that fix their hash, by OID (the OIDs of @peculiar/asn1-rsa and -ecc),
 * named as OpenSSL prints them. RSASSA-PSS carries its hash in its parameters instead.
 */
const SIGNATURES: Record<string, { name: string; hash?: string }> = {
  [rsa.id_md2WithRSAEncryption]: { name: 'md2WithRSAEncryption', hash: rsa.id_md2 },
  [rsa.id_md5WithRSAEncryption]: { name: 'md5WithRSAEncryption', hash: rsa.id_md5 },
  [rsa.id_sha1WithRSAEncryption]: { name: 'sha1WithRSAEncryption', hash: rsa.id_sha1 },
  [rsa.id_sha224WithRSAEncryption]: { name: 'sha224WithRSAEncryption', hash: rsa.id_sha224 },
  [rsa.id_sha256WithRSAEncryption]: { name: 'sha256WithRSAEncryption', hash: rsa.id_sha256 },
  [rsa.id_sha384WithRSAEncryption]: { name: 'sha384WithRSAEncryption', hash: rsa.id_sha384 },
  [rsa.id_sha512WithRSAEncryption]: { name: 'sha512WithRSAEncryption', hash: rsa.id_sha512 },
  [ecc.id_ecdsaWithSHA1]: { name: 'ecdsa-with-SHA1', hash: rsa.id_sha1 },
  [ecc.id_ecdsaWithSHA224]: { name: 'ecdsa-with-SHA224', hash: rsa.id_sha224 },
  [ecc.id_ecdsaWithSHA256]: { name: 'ecdsa-with-SHA256', hash: rsa.id_sha256 },
  [ecc.id_ecdsaWithSHA384]: { name: 'ecdsa-with-SHA384', hash: rsa.id_sha384 },
  [ecc.id_ecdsaWithSHA512]: { name: 'ecdsa-with-SHA512', hash: rsa.id_sha512 },
  '1.2.840.10040.4.3': { name: 'dsaWithSHA1', hash: rsa.id_sha1 },
  '1.3.101.112': { name: 'ED25519' },
  '1.3.101.113': { name: 'ED448' },
};

/**
 * The hash a signature algorithm signs with, as node:crypto names it (null: the algorithm fixes
 * its own, as Ed25519 does; undefined: unknown), and RSASSA-PSS's salt length.
 */
export function signatureHash(id: AlgorithmIdentifier): { hash: string | null | undefined; pssSaltLength?: number } {
  if (id.algorithm === rsa.id_RSASSA_PSS) {
    const params = id.parameters ? AsnConvert.parse(id.parameters, rsa.RsaSaPssParams) : new rsa.RsaSaPssParams();
    return { hash: HASHES[params.hashAlgorithm.algorithm]?.name, pssSaltLength: params.saltLength };
  }
  const known = SIGNATURES[id.algorithm];
  if (!known) return { hash: undefined };
  return { hash: known.hash ? HASHES[known.hash]?.name : null };
}

/**
 * OpenSSL's name of a certificate's signature algorithm (its OID when unknown), and whether its
 * hash is broken for signatures (MD5, SHA-1), so that browsers no longer trust it. RSASSA-PSS is
 * named with the hash of its parameters (RFC 4055: SHA-1 when they name none), "rsassaPss (sha256)".
 */
export function signatureAlgorithm(id: AlgorithmIdentifier): { name: string; weak: boolean } {
  if (id.algorithm === rsa.id_RSASSA_PSS) {
    const params = id.parameters ? AsnConvert.parse(id.parameters, rsa.RsaSaPssParams) : new rsa.RsaSaPssParams();
    const hash = HASHES[params.hashAlgorithm.algorithm];
    return { name: `rsassaPss (${hash?.name ?? params.hashAlgorithm.algorithm})`, weak: hash?.weak === true };
  }
  const known = SIGNATURES[id.algorithm];
  return { name: known?.name ?? id.algorithm, weak: HASHES[known?.hash ?? '']?.weak === true };
}

/** What the scan reads from one certificate, beyond what node:crypto's X509Certificate says. */
export interface CertificateFacts {
  x509: X509Certificate;
  /** OpenSSL's name of the signature algorithm, or its OID when unknown. */
  sigalg: string;
  weakSignature: boolean;
  /** DNS and IP names of the subjectAltName extension. */
  dnsNames: string[];
  ipAddresses: string[];
  /** authorityInfoAccess caIssuers URLs: where the issuer's certificate can be downloaded. */
  caIssuers: string[];
  /** authorityInfoAccess OCSP responder URLs. */
  ocspResponders: string[];
  /** Signed certificate timestamps embedded in the certificate (RFC 6962 3.3). */
  embeddedScts: number;
  /** Key length in bits (RSA/DSA modulus, EC curve size). */
  keyBits: number | undefined;
  /** Strength in RSA-equivalent bits (NIST SP 800-57): what the key-exchange rating compares. */
  keyStrength: number | undefined;
  subject: Record<string, string>;
  issuer: Record<string, string>;
  notBefore: Date;
  notAfter: Date;
}

const SCT_LIST_OID = '1.3.6.1.4.1.11129.2.4.2';

function accessUrls(aia: AuthorityInfoAccessSyntax, method: string): string[] {
  return aia.flatMap((d) =>
    d.accessMethod === method && d.accessLocation.uniformResourceIdentifier
      ? [d.accessLocation.uniformResourceIdentifier]
      : [],
  );
}

/**
 * The entries of a SignedCertificateTimestampList (RFC 6962 3.3): a 16-bit total length, then
 * each SCT behind its 16-bit length. `der` is the extension's value, an OCTET STRING around the
 * list (certificate and OCSP extensions) unless `bare` (the TLS extension). 0 when unreadable.
 */
export function sctCount(der: ArrayBuffer | Uint8Array | undefined, bare = false): number {
  if (!der) return 0;
  let bytes = Buffer.from(der instanceof Uint8Array ? der : new Uint8Array(der));
  if (!bare) {
    if (bytes[0] !== 0x04 || bytes.length < 2) return 0;
    const first = bytes[1] as number;
    const lengthBytes = first & 0x80 ? first & 0x7f : 0;
    bytes = bytes.subarray(2 + lengthBytes);
  }
  if (bytes.length < 2) return 0;
  const end = Math.min(bytes.length, 2 + bytes.readUInt16BE(0));
  let count = 0;
  for (let at = 2; at + 2 <= end; count++) at += 2 + bytes.readUInt16BE(at);
  return count;
}

/** Parses a DER certificate once, with node:crypto and the ASN.1 schema of RFC 5280. */
export function readCertificate(der: Buffer): CertificateFacts {
  const x509 = new X509Certificate(der);
  const asn = AsnConvert.parse(der, AsnCertificate);
  const signature = signatureAlgorithm(asn.signatureAlgorithm);
  const extensions = asn.tbsCertificate.extensions ?? [];
  const extension = (id: string) => extensions.find((e) => e.extnID === id)?.extnValue.buffer;
  const sanDer = extension(id_ce_subjectAltName);
  const san = sanDer ? AsnConvert.parse(sanDer, SubjectAlternativeName) : [];
  const aiaDer = extension(id_pe_authorityInfoAccess);
  const aia = aiaDer ? AsnConvert.parse(aiaDer, AuthorityInfoAccessSyntax) : [];
  const legacy = x509.toLegacyObject();
  const { keyBits, keyStrength } = keyOf(x509);
  return {
    x509,
    sigalg: signature.name,
    weakSignature: signature.weak,
    dnsNames: san.flatMap((n) => (n.dNSName ? [n.dNSName] : [])),
    ipAddresses: san.flatMap((n) => (n.iPAddress ? [n.iPAddress] : [])),
    caIssuers: accessUrls(aia, id_ad_caIssuers),
    ocspResponders: accessUrls(aia, id_ad_ocsp),
    embeddedScts: sctCount(extension(SCT_LIST_OID)),
    keyBits,
    keyStrength,
    subject: nameFields(legacy.subject),
    issuer: nameFields(legacy.issuer),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
  };
}

/**
 * The certificates a server sent (DER, leaf first), read. A server that sent none (it negotiated a
 * suite without authentication) or one this reader cannot parse fails the scan as a handshake
 * would fail in a browser: 400 with the reason, not an internal error.
 */
export function readSentChain(sent: readonly Buffer[]): [CertificateFacts, ...CertificateFacts[]] {
  const [leaf, ...others] = sent;
  if (!leaf) {
    throw invalidArgument(
      'TLS_HANDSHAKE_FAILED',
      'the server sent no certificate: it negotiated a cipher suite without authentication, which browsers refuse',
    );
  }
  const read = (der: Buffer, i: number) => {
    try {
      return readCertificate(der);
    } catch (err) {
      const which = i === 0 ? "the server's certificate" : `certificate ${i + 1} of the chain the server sent`;
      throw invalidArgument(
        'TLS_HANDSHAKE_FAILED',
        `${which} is malformed (${err instanceof Error ? err.message : String(err)}); browsers refuse it`,
      );
    }
  };
  return [read(leaf, 0), ...others.map((der, i) => read(der, i + 1))];
}

/** Name fields (CN, O, OU, C...); a field that occurs more than once is joined with ", ". */
function nameFields(name: tls.Certificate | undefined): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(name ?? {}) as [string, string | string[]][]) {
    fields[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return fields;
}

/**
 * NIST SP 800-57 part 1: an elliptic-curve size and the RSA modulus of the same strength
 * (Curve25519's 253 bits give 128-bit security, as P-256 does).
 */
export function ecStrength(curveBits: number): number {
  if (curveBits >= 512) return 15_360;
  if (curveBits >= 384) return 7_680;
  if (curveBits >= 250) return 3_072;
  if (curveBits >= 224) return 2_048;
  if (curveBits >= 160) return 1_024;
  return 512;
}

const CURVE_BITS: Record<string, number> = { prime256v1: 256, secp384r1: 384, secp521r1: 521 };

function keyOf(x509: X509Certificate): { keyBits?: number; keyStrength?: number } {
  const key = x509.publicKey;
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
    case 'dsa':
      return { keyBits: details.modulusLength, keyStrength: details.modulusLength };
    case 'ec': {
      const curve = details.namedCurve ?? '';
      const bits = CURVE_BITS[curve] ?? Number(/\d+/.exec(curve)?.[0] ?? 0);
      return { keyBits: bits || undefined, keyStrength: bits ? ecStrength(bits) : undefined };
    }
    case 'ed25519':
      return { keyBits: 256, keyStrength: ecStrength(256) };
    case 'ed448':
      return { keyBits: 448, keyStrength: ecStrength(448) };
    default:
      return {};
  }
}

/** The spec's certificate object; chain entries leave out keySize and sigalg. */
export function presentCertificate(facts: CertificateFacts, withKey: boolean): Certificate {
  return {
    subject: facts.subject,
    issuer: facts.issuer,
    validFrom: facts.notBefore.toISOString(),
    validTo: facts.notAfter.toISOString(),
    fingerprint: facts.x509.fingerprint,
    fingerprint256: facts.x509.fingerprint256,
    serialNumber: facts.x509.serialNumber,
    altNames: [...facts.dnsNames, ...facts.ipAddresses],
    ...(withKey ? { keySize: facts.keyBits, sigalg: facts.sigalg } : {}),
  };
}

/**
 * Does the host match the certificate's names? Node's own matcher (RFC 6125 wildcards) on the
 * subjectAltName alone, and on the subject CN alone: browsers read only the first since 2017.
 */
export function nameMatches(facts: CertificateFacts, host: string): { san: boolean; commonName: boolean } {
  // Only well-formed DNS names go into the matcher's comma-separated input.
  const dns = facts.dnsNames.filter((n) => /^[a-z0-9*._-]+$/i.test(n)).map((n) => `DNS:${n}`);
  const ips = facts.ipAddresses.map((ip) => `IP Address:${ip}`);
  const san =
    dns.length + ips.length > 0 &&
    tls.checkServerIdentity(host, {
      subject: {},
      subjectaltname: [...dns, ...ips].join(', '),
    } as tls.PeerCertificate) === undefined;
  const cn = facts.subject.CN;
  const commonName =
    cn !== undefined &&
    (cn === host ||
      tls.checkServerIdentity(host, { subject: { CN: cn } } as unknown as tls.PeerCertificate) === undefined);
  return { san, commonName };
}
