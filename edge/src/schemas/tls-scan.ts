/** The tls-scan service's SSL scan: the spec's "SSL scan result". */
import { parseTargetHost } from '@webutil/kit';
import { z } from 'zod';
import { parsedBy, timestamp } from './common.js';

/** The host to scan: the kit's parseTargetHost (a bare host name or IP literal). */
const targetHost = parsedBy('domain', parseTargetHost, 'invalid_domain').meta({
  description: 'A bare host name (or IP address): no scheme, path or port.',
  example: 'example.com',
});

export const domainInput = z.object({ domain: targetHost });

const nameFields = z
  .record(z.string(), z.string())
  .meta({ description: 'Name fields such as CN, O, OU, C; a field that occurs twice is joined with ", ".' });
const certificateFields = {
  subject: nameFields,
  issuer: nameFields,
  valid_from: timestamp,
  valid_to: timestamp,
  fingerprint: z.string().meta({ description: 'SHA-1 of the certificate, colon-separated upper-case hex.' }),
  fingerprint256: z.string().meta({ description: 'SHA-256 of the certificate, colon-separated upper-case hex.' }),
  serialNumber: z.string().meta({ description: 'Upper-case hex.' }),
  altNames: z.array(z.string()).meta({ description: 'DNS names, then IP addresses, of the subjectAltName.' }),
};
const Certificate = z
  .strictObject({
    ...certificateFields,
    keySize: z.number().int().optional().meta({ description: 'RSA modulus or elliptic-curve size, in bits.' }),
    sigalg: z.string().optional().meta({
      description: 'OpenSSL’s name of the signature algorithm; RSASSA-PSS with its hash, e.g. "rsassaPss (sha256)".',
      example: 'sha256WithRSAEncryption',
    }),
  })
  .meta({ id: 'Certificate' });
const ChainCertificate = z.strictObject(certificateFields).meta({ id: 'ChainCertificate' });

export const SslScanResult = z
  .strictObject({
    domain: z.string(),
    port: z.number().int().meta({ description: 'The port scanned: 443.' }),
    protocol: z.string().meta({ example: 'TLSv1.3' }),
    certificate: Certificate,
    chain: z
      .array(ChainCertificate)
      .meta({ description: 'Intermediates, then the root: what the server sent, completed as browsers do.' }),
    isValid: z.boolean().meta({
      description:
        'Every validation passes: not self-signed, chain complete, trusted, commonNameValid and sanValid, in date.',
    }),
    daysUntilExpiry: z.number().int().meta({ description: 'Negative once expired.' }),
    isExpired: z.boolean(),
    certValidations: z
      .strictObject({
        selfSigned: z.boolean(),
        chainComplete: z.boolean(),
        trustedCert: z.boolean(),
        commonNameValid: z.boolean(),
        sanValid: z.boolean(),
        chainIssueDescription: z
          .string()
          .optional()
          .meta({
            description:
              'Present only when the chain has a problem (self-signed, an intermediate not sent, an untrusted ' +
              'root, a weak signature, an issuer that is no CA or out of date), naming each; an expired or ' +
              'misnamed certificate on a sound chain has none (isExpired, sanValid and commonNameValid say so).',
          }),
      })
      .meta({ id: 'CertValidations' }),
    tlsVersion: z.string().meta({ description: 'Same as protocol.' }),
    cipherSuite: z.string().meta({ example: 'TLS_AES_256_GCM_SHA384' }),
    securityGrade: z
      .enum(['A+', 'A', 'B', 'C', 'D', 'E', 'F'])
      .meta({ description: 'After the SSL Labs rating guide (docs/grading.md).' }),
    score: z.number().int().min(0).max(100),
  })
  .meta({ id: 'SslScanResult' });
