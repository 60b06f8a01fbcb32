/** The tls-scan service's SSL scan: the spec's "SSL scan result". */
import { parseTargetHost } from '@webutil/kit';
import * as tlsscan from '@webutil/proto/webutil/tlsscan/v1/tlsscan.fields';
import { z } from 'zod';
import { parsedBy, timestamp } from './common.js';
import { type FieldEdit, type RestSpec, restObject } from './from-proto.js';

/** The host to scan: the kit's parseTargetHost (a bare host name or IP literal). */
const targetHost = parsedBy('domain', parseTargetHost, 'invalid_domain').meta({
  description: 'A bare host name (or IP address): no scheme, path or port.',
  example: 'example.com',
});

export const domainInput = z.object({ domain: targetHost });

const nameFields: FieldEdit = {
  description: 'Name fields such as CN, O, OU, C; a field that occurs twice is joined with ", ".',
};
/** The certificate dates are snake_case in the spec: the presenter renames them. */
const certificateFields = {
  subject: nameFields,
  issuer: nameFields,
  validFrom: { as: 'valid_from', value: timestamp },
  validTo: { as: 'valid_to', value: timestamp },
  fingerprint: { description: 'SHA-1 of the certificate, colon-separated upper-case hex.' },
  fingerprint256: { description: 'SHA-256 of the certificate, colon-separated upper-case hex.' },
  serialNumber: { description: 'Upper-case hex.' },
  altNames: { description: 'DNS names, then IP addresses, of the subjectAltName.' },
  keySize: { description: 'RSA modulus or elliptic-curve size, in bits.' },
  sigalg: {
    description: 'OpenSSL’s name of the signature algorithm; RSASSA-PSS with its hash, e.g. "rsassaPss (sha256)".',
    example: 'sha256WithRSAEncryption',
  },
} as const satisfies RestSpec<typeof tlsscan.Certificate>['fields'];
const Certificate = restObject(tlsscan.Certificate, { id: 'Certificate', fields: certificateFields });
const ChainCertificate = restObject(tlsscan.Certificate, {
  id: 'ChainCertificate',
  fields: certificateFields,
  omit: { keySize: 'not set on chain certificates', sigalg: 'not set on chain certificates' },
});

export const SslScanResult = restObject(tlsscan.SslScanResponse, {
  id: 'SslScanResult',
  fields: {
    port: { description: 'The port scanned: 443.' },
    protocol: { example: 'TLSv1.3' },
    certificate: { value: Certificate },
    chain: {
      value: ChainCertificate,
      description: 'Intermediates, then the root: what the server sent, completed as browsers do.',
    },
    isValid: {
      description:
        'Every validation passes: not self-signed, chain complete, trusted, commonNameValid and sanValid, in date.',
    },
    daysUntilExpiry: { description: 'Negative once expired.' },
    certValidations: {
      value: restObject(tlsscan.CertValidations, {
        id: 'CertValidations',
        fields: {
          chainIssueDescription: {
            description:
              'Present only when the chain has a problem (self-signed, an intermediate not sent, an untrusted ' +
              'root, a weak signature, an issuer that is no CA or out of date), naming each; an expired or ' +
              'misnamed certificate on a sound chain has none (isExpired, sanValid and commonNameValid say so).',
          },
        },
      }),
    },
    tlsVersion: { description: 'Same as protocol.' },
    cipherSuite: { example: 'TLS_AES_256_GCM_SHA384' },
    securityGrade: {
      value: z.enum(['A+', 'A', 'B', 'C', 'D', 'E', 'F']),
      description: 'After the SSL Labs rating guide (docs/grading.md).',
    },
    score: { value: z.number().int().min(0).max(100) },
  },
});
