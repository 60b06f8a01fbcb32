/** The tls-scan service's SSL scan: the spec's "SSL scan result". */
import { parseTargetHost } from '@webutil/kit';
import * as tlsscan from '@webutil/proto/webutil/tlsscan/v1/tlsscan.fields';
import { z } from 'zod';
import { parsedBy, queryInteger, timestamp } from '../../rest/common.js';
import { type FieldEdit, type RestSpec, restObject } from '../../rest/from-proto.js';

/** The host to scan: the kit's parseTargetHost (a bare host name or IP literal). */
const targetHost = parsedBy('domain', parseTargetHost, 'invalid_domain').meta({
  description: 'A bare host name (or IP address): no scheme, path or port.',
  example: 'example.com',
});

/** The port to scan. */
const port = queryInteger('port', 1, 65535, {
  description: 'The port to scan, 1 to 65535. Default 443; the answer’s `port` echoes it.',
  example: 443,
});

/** A query parameter, so the flag is the text true or false. */
const fast = z
  .enum(['true', 'false'], { error: 'fast must be true or false' })
  .optional()
  .meta({
    default: 'false',
    description:
      'true: only the handshake, protocol probes, chain, HSTS and CAA, in tens of milliseconds; the suite ' +
      'enumeration, vulnerability checks, certificate transparency and revocation are left out (their fields are ' +
      'empty). Default false: the full scan, a few hundred milliseconds against a nearby server.',
  });

export const sslScanInput = z.object({ domain: targetHost, port, fast });

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
        'The Strict-Transport-Security header of https://<domain>[:port]/ as the server sends it (GET, no redirect ' +
        'followed, read over whatever TLS version the server speaks); null when there is none with a valid ' +
        'max-age. hstsStatus says whether browsers honour it.',
    },
    hstsStatus: {
      value: z.enum(['honoured', 'ignored', 'absent', 'not_read']),
      description:
        'honoured: browsers apply the header; ignored: it was read, but browsers ignore it over a certificate with ' +
        'errors (RFC 6797 8.1); absent: the answer had no header with a valid max-age; not_read: no answer came ' +
        'in time, so whether there is one is unknown.',
    },
    trustMarker: {
      value: z.enum(['T', 'M']),
      nullable: true,
      description:
        'SSL Labs’ marker beside an F for a certificate problem: T (not trusted, expired or not yet valid) or M ' +
        '(the certificate does not name the host); null when the certificate is fine.',
    },
    gradeIgnoringTrust: {
      value: z.enum(['A+', 'A', 'B', 'C', 'D', 'E', 'F']),
      nullable: true,
      description:
        'The grade the server would get if its certificate were fine (SSL Labs’ “if trust issues are ignored”); ' +
        'set only with trustMarker. securityGrade keeps its meaning.',
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
    cipherSuites: {
      value: restObject(tlsscan.ProtocolCiphers, {
        id: 'ProtocolCiphers',
        fields: {
          protocol: { value: z.enum(['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']) },
          supported: { nullable: true, description: 'null when the probe could not tell (no answer in time).' },
          serverPreference: {
            nullable: true,
            description:
              'true: the server picks by its own order, and suites are listed in it; false: by the client’s; null ' +
              'with fewer than two suites.',
          },
          suites: {
            value: restObject(tlsscan.CipherSuite, {
              id: 'CipherSuite',
              fields: {
                name: { example: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256' },
                code: { example: '0xC02F' },
                keyExchange: { example: 'ECDHE' },
                strength: { value: z.enum(['strong', 'weak', 'insecure']) },
              },
            }),
          },
        },
      }),
      description:
        'Every suite the server accepts per protocol, SSLv2 to TLS 1.3, found with raw ClientHellos as testssl.sh ' +
        'does; empty with fast=true.',
    },
    namedGroups: { description: 'Named groups the server accepts, e.g. x25519, secp256r1, ffdhe2048.' },
    signatureAlgorithms: { description: 'Signature algorithms the server accepts when offered one alone.' },
    cipherNotes: { description: 'Notes on the suite set: CBC only, no AEAD, no TLS 1.3.' },
    vulnerabilities: {
      value: restObject(tlsscan.Vulnerability, {
        id: 'Vulnerability',
        fields: {
          id: { example: 'heartbleed' },
          verdict: { value: z.enum(['vulnerable', 'not_vulnerable', 'unknown']) },
          gradeCap: {
            value: z.enum(['F', 'C', 'B']),
            nullable: true,
            description: 'The grade cap a vulnerable verdict imposes (SSL Labs’ guide); null when none.',
          },
        },
      }),
      description:
        'testssl.sh’s checks (-U): Heartbleed, CCS injection, Ticketbleed, ROBOT, secure and client-initiated ' +
        'renegotiation, CRIME, BREACH, POODLE, TLS_FALLBACK_SCSV, SWEET32, FREAK, DROWN, LOGJAM, BEAST, LUCKY13 and ' +
        'RC4, each with a verdict and why; empty with fast=true.',
    },
    timings: {
      // Described on the object: a description on the field would wrap it and hide its message.
      value: restObject(tlsscan.ScanTimings, {
        id: 'ScanTimings',
        description: 'How long each part of the scan took, in milliseconds; the parts run at once, so they overlap.',
      }),
    },
    fast: { description: 'The scan ran with fast=true.' },
    certificateTransparency: {
      value: restObject(tlsscan.CertificateTransparency, { id: 'CertificateTransparency' }),
      nullable: true,
      description: 'Signed certificate timestamps by where they came from; null with fast=true.',
    },
    revocation: {
      value: restObject(tlsscan.Revocation, {
        id: 'Revocation',
        fields: {
          status: { value: z.enum(['good', 'revoked', 'unknown', 'no_responder', 'error']) },
          responder: { nullable: true },
          detail: { nullable: true },
        },
      }),
      nullable: true,
      description:
        'The certificate’s status from the OCSP responder it names (through the same address policy and time bound ' +
        'as every fetch); null with fast=true.',
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
