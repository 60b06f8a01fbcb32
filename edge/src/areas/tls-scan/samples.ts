/**
 * The sandbox's fixed replies for the SSL scan, typed as the service's ts-proto replies: the
 * compiler checks them against the protos, and the area's presenters turn them into the answers
 * (docs/decisions/0207-sandbox-keys.md). The sandbox's clients (edge/src/sandbox/clients.ts) serve
 * them.
 */
import type { Certificate, SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';

const certificate: Certificate = {
  subject: { CN: 'example.com' },
  issuer: { C: 'US', O: 'Sandbox CA', CN: 'Sandbox Sample CA' },
  validFrom: '2026-01-01T00:00:00.000Z',
  validTo: '2026-12-31T23:59:59.000Z',
  fingerprint: '3A:1F:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:01',
  fingerprint256: '5C:2E:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:02',
  serialNumber: '0A1B2C3D',
  altNames: ['example.com', 'www.example.com'],
  keySize: 256,
  sigalg: 'ecdsa-with-SHA256',
};

export const sslScan: SslScanResponse = {
  domain: 'example.com',
  port: 443,
  protocol: 'https',
  certificate,
  chain: [certificate, { ...certificate, subject: certificate.issuer, altNames: [], serialNumber: '01' }],
  isValid: true,
  daysUntilExpiry: 120,
  isExpired: false,
  certValidations: {
    selfSigned: false,
    chainComplete: true,
    trustedCert: true,
    commonNameValid: true,
    sanValid: true,
    chainIssueDescription: undefined,
  },
  tlsVersion: 'TLSv1.3',
  cipherSuite: 'TLS_AES_256_GCM_SHA384',
  securityGrade: 'A',
  score: 92,
  protocols: [
    { version: 'TLSv1', supported: false },
    { version: 'TLSv1.1', supported: false },
    { version: 'TLSv1.2', supported: true },
    { version: 'TLSv1.3', supported: true },
  ],
  gradeReasons: [{ code: 'NO_HSTS_PRELOAD', message: 'HSTS is not preloaded.', effect: 'none' }],
  hsts: { maxAge: '31536000', includeSubDomains: true, preload: false },
  ocspStapling: true,
  keyExchange: { type: 'ECDH', name: 'X25519', size: 253 },
  caa: { domain: 'example.com', records: [{ critical: false, tag: 'issue', value: 'sandbox-ca.example' }] },
  ipAddress: '93.184.215.14',
  alpn: ['h2', 'http/1.1'],
  scoreAreas: { certificate: 100, protocolSupport: 95, keyExchange: 90, cipherStrength: 90 },
  hstsStatus: 'honoured',
  cipherSuites: [
    {
      protocol: 'TLSv1.3',
      supported: true,
      serverPreference: true,
      suites: [
        {
          name: 'TLS_AES_256_GCM_SHA384',
          code: '0x1302',
          keyExchange: 'any',
          forwardSecrecy: true,
          aead: true,
          bits: 256,
          strength: 'strong',
        },
      ],
    },
  ],
  namedGroups: ['x25519', 'secp256r1'],
  signatureAlgorithms: ['ecdsa_secp256r1_sha256'],
  cipherNotes: [],
  vulnerabilities: [
    {
      id: 'heartbleed',
      name: 'Heartbleed',
      verdict: 'not_vulnerable',
      why: 'the server does not offer the heartbeat extension',
      cve: ['CVE-2014-0160'],
    },
  ],
  timings: {
    totalMs: 420,
    resolveMs: 2,
    handshakeMs: 40,
    probesMs: 45,
    chainMs: 3,
    homePageMs: 60,
    caaMs: 20,
    cipherSuitesMs: 250,
    vulnerabilitiesMs: 90,
    revocationMs: 80,
  },
  fast: false,
  certificateTransparency: { embedded: 2, stapled: 0, tlsExtension: 0 },
  revocation: { status: 'good', responder: 'http://ocsp.sandbox-ca.example' },
};
