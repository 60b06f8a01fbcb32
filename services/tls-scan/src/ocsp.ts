/**
 * A stapled OCSP response judged as a browser uses one (RFC 6960): a successful basic response
 * about this certificate, current, and signed by the certificate's issuer or by a responder the
 * issuer delegated to (id-kp-OCSPSigning). Anything else is a staple no client can rely on, so the
 * scan does not count it as stapling.
 */
import { constants, createHash, type KeyObject, verify, X509Certificate } from 'node:crypto';
import {
  BasicOCSPResponse,
  CertID,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
} from '@peculiar/asn1-ocsp';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate as AsnCertificate } from '@peculiar/asn1-x509';
import type { SafeHttp } from '@webutil/kit';
import type { Revocation } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { sctCount, signatureHash } from './certificate.js';
import { issued } from './chain.js';

/** Clock skew allowed between the responder and us, as browsers allow. */
const SKEW_MS = 5 * 60_000;

/** What a usable OCSP response says about the certificate. */
export interface OcspAnswer {
  status: 'good' | 'revoked' | 'unknown';
  revokedAt?: Date;
  /** Signed certificate timestamps in the response's single extension (RFC 6962 3.3). */
  scts: number;
}

const OCSP_SCT_OID = '1.3.6.1.4.1.11129.2.4.5';

export function usableStaple(
  der: Buffer | null,
  leaf: X509Certificate,
  issuer: X509Certificate | undefined,
  now: Date,
): boolean {
  return readOcspAnswer(der, leaf, issuer, now) !== undefined;
}

/** The answer of an OCSP response a client can rely on (see the top of this file); undefined otherwise. */
export function readOcspAnswer(
  der: Buffer | null,
  leaf: X509Certificate,
  issuer: X509Certificate | undefined,
  now: Date,
): OcspAnswer | undefined {
  if (!der?.length || !issuer) return undefined;
  try {
    const outer = AsnConvert.parse(der, OCSPResponse);
    const bytes = outer.responseBytes;
    if (outer.responseStatus !== OCSPResponseStatus.successful || bytes?.responseType !== id_pkix_ocsp_basic) {
      return undefined;
    }
    const basic = AsnConvert.parse(bytes.response.buffer, BasicOCSPResponse);
    const serial = leaf.serialNumber.toUpperCase().replace(/^0+/, '');
    const single = basic.tbsResponseData.responses.find(
      (r) => Buffer.from(r.certID.serialNumber).toString('hex').toUpperCase().replace(/^0+/, '') === serial,
    );
    if (!single) return undefined;
    const at = now.getTime();
    if (single.thisUpdate.getTime() > at + SKEW_MS) return undefined;
    if (single.nextUpdate && single.nextUpdate.getTime() < at - SKEW_MS) return undefined;
    const signed = basic.tbsResponseDataRaw ?? AsnConvert.serialize(basic.tbsResponseData);
    if (!signers(basic, issuer).some((key) => signatureVerifies(basic, Buffer.from(signed), key))) return undefined;
    const sctExtension = single.singleExtensions?.find((e) => e.extnID === OCSP_SCT_OID);
    const scts = sctCount(sctExtension?.extnValue.buffer);
    const { certStatus } = single;
    if (certStatus.revoked) return { status: 'revoked', revokedAt: certStatus.revoked.revocationTime, scts };
    return { status: certStatus.good === null || certStatus.good !== undefined ? 'good' : 'unknown', scts };
  } catch {
    return undefined; // not DER an OCSP reader accepts
  }
}

/** An OCSP request (RFC 6960 4.1) for `leaf`, its CertID hashed with SHA-1 as responders expect. */
export function ocspRequest(leaf: X509Certificate, issuer: X509Certificate): Buffer {
  const sha1 = (data: ArrayBuffer) => new OctetString(createHash('sha1').update(Buffer.from(data)).digest());
  const issuerAsn = AsnConvert.parse(issuer.raw, AsnCertificate);
  const leafAsn = AsnConvert.parse(leaf.raw, AsnCertificate);
  const certId = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: '1.3.14.3.2.26', parameters: null }),
    issuerNameHash: sha1(AsnConvert.serialize(issuerAsn.tbsCertificate.subject)),
    issuerKeyHash: sha1(issuerAsn.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey),
    serialNumber: leafAsn.tbsCertificate.serialNumber,
  });
  const request = new OCSPRequest({ tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert: certId })] }) });
  return Buffer.from(AsnConvert.serialize(request));
}

const MAX_OCSP_BYTES = 64 * 1024;

/**
 * The certificate's revocation state from the first OCSP responder it names: a POST through the
 * kit's safe HTTP client (the address policy of every fetch), within `timeoutMs`, at most 64 KB
 * read. The answer counts only when usable (signed by the issuer or its delegate, current).
 */
export async function queryRevocation(
  leaf: X509Certificate,
  issuer: X509Certificate | undefined,
  responders: readonly string[],
  http: SafeHttp,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Revocation> {
  const responder = responders.find((u) => /^https?:\/\//i.test(u));
  if (!responder) return { status: 'no_responder' };
  if (!issuer) return { status: 'error', responder, detail: 'the issuer certificate is not known' };
  try {
    const res = await http.fetch(responder, {
      method: 'POST',
      body: ocspRequest(leaf, issuer),
      headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
      maxRedirects: 0,
      timeoutMs,
      maxBodyBytes: MAX_OCSP_BYTES,
      signal,
    });
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk);
    if (res.status !== 200 || res.truncated) {
      return {
        status: 'error',
        responder,
        detail: `the responder answered HTTP ${res.status}${res.truncated ? ' over 64 KB' : ''}`,
      };
    }
    const answer = readOcspAnswer(Buffer.concat(chunks), leaf, issuer, new Date());
    if (!answer) return { status: 'error', responder, detail: 'the answer is no usable OCSP response' };
    if (answer.status === 'revoked') {
      return { status: 'revoked', responder, detail: `revoked ${answer.revokedAt?.toISOString() ?? ''}`.trim() };
    }
    return answer.status === 'unknown'
      ? { status: 'unknown', responder, detail: 'the responder does not know this certificate' }
      : { status: 'good', responder };
  } catch (err) {
    return { status: 'error', responder, detail: (err as Error).message };
  }
}

/** The issuer's key, and the keys of delegated responders the issuer certified for OCSP signing. */
function signers(basic: BasicOCSPResponse, issuer: X509Certificate): KeyObject[] {
  const delegated = (basic.certs ?? []).flatMap((asn) => {
    const cert = new X509Certificate(Buffer.from(AsnConvert.serialize(asn)));
    const forOcsp = cert.keyUsage?.includes(id_kp_OCSPSigning) === true;
    return forOcsp && issued(issuer, cert) ? [cert.publicKey] : [];
  });
  return [issuer.publicKey, ...delegated];
}

function signatureVerifies(basic: BasicOCSPResponse, data: Buffer, key: KeyObject): boolean {
  const { hash, pssSaltLength } = signatureHash(basic.signatureAlgorithm);
  if (hash === undefined) return false;
  const signature = Buffer.from(basic.signature);
  try {
    if (pssSaltLength !== undefined) {
      return verify(
        hash,
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: pssSaltLength },
        signature,
      );
    }
    return verify(hash, data, key, signature);
  } catch {
    return false; // a key this OpenSSL cannot verify with
  }
}
