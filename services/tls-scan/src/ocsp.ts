/**
 * A stapled OCSP response judged as a browser uses one (RFC 6960): a successful basic response
 * about this certificate, current, and signed by the certificate's issuer or by a responder the
 * issuer delegated to (id-kp-OCSPSigning). Anything else is a staple no client can rely on, so the
 * scan does not count it as stapling.
 */
import { constants, type KeyObject, verify, X509Certificate } from 'node:crypto';
import {
  BasicOCSPResponse,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
  OCSPResponse,
  OCSPResponseStatus,
} from '@peculiar/asn1-ocsp';
import { AsnConvert } from '@peculiar/asn1-schema';
import { signatureHash } from './certificate.js';
import { issued } from './chain.js';

/** Clock skew allowed between the responder and us, as browsers allow. */
const SKEW_MS = 5 * 60_000;

export function usableStaple(
  der: Buffer | null,
  leaf: X509Certificate,
  issuer: X509Certificate | undefined,
  now: Date,
): boolean {
  if (!der?.length || !issuer) return false;
  try {
    const outer = AsnConvert.parse(der, OCSPResponse);
    const bytes = outer.responseBytes;
    if (outer.responseStatus !== OCSPResponseStatus.successful || bytes?.responseType !== id_pkix_ocsp_basic) {
      return false;
    }
    const basic = AsnConvert.parse(bytes.response.buffer, BasicOCSPResponse);
    const serial = leaf.serialNumber.toUpperCase().replace(/^0+/, '');
    const single = basic.tbsResponseData.responses.find(
      (r) => Buffer.from(r.certID.serialNumber).toString('hex').toUpperCase().replace(/^0+/, '') === serial,
    );
    if (!single) return false;
    const at = now.getTime();
    if (single.thisUpdate.getTime() > at + SKEW_MS) return false;
    if (single.nextUpdate && single.nextUpdate.getTime() < at - SKEW_MS) return false;
    const signed = basic.tbsResponseDataRaw ?? AsnConvert.serialize(basic.tbsResponseData);
    return signers(basic, issuer).some((key) => signatureVerifies(basic, Buffer.from(signed), key));
  } catch {
    return false; // not DER an OCSP reader accepts
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
