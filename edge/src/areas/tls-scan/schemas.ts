/** The tls-scan service's SSL scan: the spec's "SSL scan result". */
import { parseTargetHost } from '@webutil/kit';
import * as tlsscan from '@webutil/proto/webutil/tlsscan/v1/tlsscan.fields';
import { z } from 'zod';
import { parsedBy, timestamp } from '../../rest/common.js';
import { type FieldEdit, type RestSpec, restObject } from '../../rest/from-proto.js';

/** The host to scan: the kit's parseTargetHost (a bare host name or IP literal). */
const targetHost = parsedBy('domain', parseTargetHost, 'invalid_domain').meta({
  description: 'A bare host name (or IP address): no scheme, path or port.',
  example: 'example.com',
});

const PORT_RULE = 'port must be an integer from 1 to 65535';
/** The port to scan: digits only (no sign, exponent or spaces), 1 to 65535. */
const port = z
  .string()
  .regex(/^\d{1,5}$/, PORT_RULE)
  .transform(Number)
  .refine((n) => n >= 1 && n <= 65535, PORT_RULE)
  .optional()
  .meta({ description: 'The port to scan, 1 to 65535. Default 443; the answer’s `port` echoes it.', example: '443' });

export const sslScanInput = z.object({ domain: targetHost, port });

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
    port: { description: 'The port scanned: the `port` asked for, else 443.' },
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
    protocols: {
      value: restObject(tlsscan.ProtocolSupport, {
        id: 'ProtocolSupport',
        fields: {
          version: { value: z.enum(['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']) },
          supported: {
            nullable: true,
            description:
              'A handshake at this version completed (true) or the server refused it (false); null when the ' +
              'probe could not tell (no answer in time, no connection).',
          },
        },
      }),
      description: 'TLS 1.0, 1.1, 1.2 and 1.3, in that order, each probed with a handshake at that version only.',
    },
    gradeReasons: {
      value: restObject(tlsscan.GradeReason, {
        id: 'GradeReason',
        fields: {
          code: { description: 'Stable machine code; docs/grading.md lists every one.', example: 'no_hsts' },
          message: { description: 'What the scan found.' },
          effect: {
            description: 'What it does to score or securityGrade.',
            example: 'A+ needs HSTS with max-age ≥ 6 months (15552000 s)',
          },
        },
      }),
      description:
        'Every cap (grade capped at F, C or B), missing A+ requirement (HSTS), and score deduction, in that ' +
        'order; empty only for a perfect 100 with A+.',
    },
    hsts: {
      value: restObject(tlsscan.Hsts, {
        id: 'Hsts',
        fields: { maxAge: { value: z.number().int().min(0), description: 'Seconds.' } },
      }),
      nullable: true,
      description:
        'The Strict-Transport-Security header of https://<domain>[:port]/ (HEAD, no redirect followed, certificate ' +
        'checked as a browser does); null when there is none with a valid max-age.',
    },
    ocspStapling: {
      description:
        'The server stapled an OCSP response a client can use: successful, about this certificate, current, and ' +
        'signed by its issuer or a responder the issuer delegated to.',
    },
    keyExchange: {
      value: restObject(tlsscan.KeyExchange, {
        id: 'KeyExchange',
        fields: {
          type: { value: z.enum(['ECDH', 'DH']) },
          name: { nullable: true, description: 'The group, e.g. X25519 or prime256v1; null for finite-field DH.' },
          size: { description: 'Key size in bits (X25519: 253).' },
        },
      }),
      nullable: true,
      description: 'The ephemeral key of the negotiated exchange; null for RSA key transport (no forward secrecy).',
    },
    caa: {
      value: restObject(tlsscan.Caa, {
        id: 'Caa',
        fields: {
          domain: {
            nullable: true,
            description: 'The name the records are on: the domain or its closest parent; null when none has any.',
          },
          records: {
            value: restObject(tlsscan.CaaRecord, {
              id: 'CaaRecord',
              fields: {
                critical: { description: 'The issuer-critical flag.' },
                tag: { example: 'issue' },
                value: { example: 'letsencrypt.org' },
              },
            }),
            description: 'Empty when neither the domain nor a parent has CAA records: any CA may issue.',
          },
        },
      }),
      nullable: true,
      description:
        'The CAA records that apply to the domain (RFC 8659); null when they could not be determined (an IP ' +
        'address, a DNS failure or no answer in time).',
    },
    ipAddress: { description: 'The address every handshake of the scan went to.', example: '93.184.215.14' },
    alpn: {
      value: z.enum(['h2', 'http/1.1']),
      description: 'The application protocols the server selects when offered (ALPN); empty when it selects none.',
    },
    scoreAreas: {
      // Described on the object: a description on the field would wrap it and hide its message.
      value: restObject(tlsscan.ScoreAreas, {
        id: 'ScoreAreas',
        description:
          'The areas of the score before weighting and caps, 0 to 100 each, as SSL Labs draws them: certificate ' +
          '(100 or 0), protocol support (30 %), key exchange (30 %), cipher strength (40 %).',
        fields: {
          certificate: { value: z.number().int().min(0).max(100) },
          protocolSupport: { value: z.number().min(0).max(100) },
          keyExchange: { value: z.number().min(0).max(100) },
          cipherStrength: { value: z.number().min(0).max(100) },
        },
      }),
    },
  },
});
