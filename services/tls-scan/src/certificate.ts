import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  Certificate as AsnCertificate,
  AuthorityInfoAccessSyntax,
  id_ad_caIssuers,
  id_ce_subjectAltName,
  id_pe_authorityInfoAccess,
  SubjectAlternativeName,
} from '@peculiar/asn1-x509';
import type { Certificate } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';

/**
 * Signature algorithms by OID, named as OpenSSL prints them. `weak`: the hash is broken for
 * signatures (MD5, SHA-1), so a certificate signed with it is not trusted by browsers.
 */
const SIGNATURE_ALGORITHMS: Record<string, { name: string; weak?: true }> = {
  '1.2.840.113549.1.1.4': { name: 'md5WithRSAEncryption', weak: true },
  '1.2.840.113549.1.1.5': { name: 'sha1WithRSAEncryption', weak: true },
  '1.2.840.113549.1.1.10': { name: 'rsassaPss' },
  '1.2.840.113549.1.1.11': { name: 'sha256WithRSAEncryption' },
  '1.2.840.113549.1.1.12': { name: 'sha384WithRSAEncryption' },
  '1.2.840.113549.1.1.13': { name: 'sha512WithRSAEncryption' },
  '1.2.840.113549.1.1.14': { name: 'sha224WithRSAEncryption' },
  '1.2.840.10045.4.1': { name: 'ecdsa-with-SHA1', weak: true },
  '1.2.840.10045.4.3.1': { name: 'ecdsa-with-SHA224' },
  '1.2.840.10045.4.3.2': { name: 'ecdsa-with-SHA256' },
  '1.2.840.10045.4.3.3': { name: 'ecdsa-with-SHA384' },
  '1.2.840.10045.4.3.4': { name: 'ecdsa-with-SHA512' },
  '1.2.840.10040.4.3': { name: 'dsaWithSHA1', weak: true },
  '1.3.101.112': { name: 'ED25519' },
  '1.3.101.113': { name: 'ED448' },
};

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
  /** Key length in bits (RSA/DSA modulus, EC curve size). */
  keyBits: number | undefined;
  /** Strength in RSA-equivalent bits (NIST SP 800-57): what the key-exchange rating compares. */
  keyStrength: number | undefined;
  subject: Record<string, string>;
  issuer: Record<string, string>;
  notBefore: Date;
  notAfter: Date;
}

/** Parses a DER certificate once, with node:crypto and the ASN.1 schema of RFC 5280. */
export function readCertificate(der: Buffer): CertificateFacts {
  const x509 = new X509Certificate(der);
  const asn = AsnConvert.parse(der, AsnCertificate);
  const oid = asn.signatureAlgorithm.algorithm;
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
    sigalg: SIGNATURE_ALGORITHMS[oid]?.name ?? oid,
    weakSignature: SIGNATURE_ALGORITHMS[oid]?.weak === true,
    dnsNames: san.flatMap((n) => (n.dNSName ? [n.dNSName] : [])),
    ipAddresses: san.flatMap((n) => (n.iPAddress ? [n.iPAddress] : [])),
    caIssuers: aia.flatMap((d) =>
      d.accessMethod === id_ad_caIssuers && d.accessLocation.uniformResourceIdentifier
        ? [d.accessLocation.uniformResourceIdentifier]
        : [],
    ),
    keyBits,
    keyStrength,
    subject: nameFields(legacy.subject),
    issuer: nameFields(legacy.issuer),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
  };
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
