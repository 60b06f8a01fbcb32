import { constants, createPrivateKey } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { type RawTlsServer, type RawTlsServerOptions, startRawTlsServer } from '@webutil/scripts/raw-tls-server';
import { issue } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { scanSuites } from '../src/cipher-suites.js';
import type { Endpoint } from '../src/handshake.js';
import type { HomePage } from '../src/hsts.js';
import { checkVulnerabilities, derivedChecks, type VulnerabilityResult } from '../src/vulnerabilities.js';

const signal = new AbortController().signal;
const PAGE: HomePage = { answered: true, status: 200, headers: {} };
const endpoint = (port: number): Endpoint => ({ address: '127.0.0.1', port, servername: 'localhost' });

async function scan(port: number, page = PAGE): Promise<Map<string, VulnerabilityResult>> {
  const suites = await scanSuites(endpoint(port), 2_000, signal);
  const results = await checkVulnerabilities({ endpoint: endpoint(port), timeoutMs: 2_000, signal, suites, page });
  return new Map(results.map((r) => [r.id, r]));
}

async function nodeServer(options: tls.TlsOptions): Promise<tls.Server> {
  // Keeps each connection open (as a web server does), so a renegotiation can be asked on it.
  const server = tls.createServer({ ciphers: 'DEFAULT:@SECLEVEL=0', ...options }, (socket) => socket.resume());
  server.on('tlsClientError', () => undefined);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}
const portOf = (server: tls.Server) => (server.address() as AddressInfo).port;

/**
 * Each vulnerability shown present and absent: a record-level server answering as an affected
 * implementation would (no affected build runs here), a patched one, and Node's own TLS servers.
 */
describe('SSL scan vulnerability checks', function () {
  this.timeout(60_000);
  let real: tls.Server; // Node: TLS 1.2 and 1.3, ECDHE with AES-GCM, tickets, client renegotiation accepted
  let noRenegotiation: tls.Server;
  let broken: RawTlsServer;
  let patched: RawTlsServer;
  let bad: Map<string, VulnerabilityResult>;
  let good: Map<string, VulnerabilityResult>;
  let node: Map<string, VulnerabilityResult>;

  before(async () => {
    const cert = await issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' });
    const der = Buffer.from(cert.cert.rawData);
    real = await nodeServer({
      key: cert.keyPem,
      cert: cert.pem,
      minVersion: 'TLSv1.2',
      ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384',
    });
    noRenegotiation = await nodeServer({
      key: cert.keyPem,
      cert: cert.pem,
      minVersion: 'TLSv1.2',
      secureOptions: constants.SSL_OP_NO_RENEGOTIATION,
    });
    broken = await startRawTlsServer({
      versions: ['SSLv3', 'TLSv1', 'TLSv1.2'],
      // RC4-SHA, 3DES, RSA export RC4-40, DHE-RSA export DES40, AES128-SHA (CBC)
      suites: [0x0005, 0x000a, 0x0003, 0x0014, 0x002f],
      certificate: der,
      sslv2: true,
      compression: true,
      heartbeat: true,
      heartbleed: true,
      ccsInjection: true,
      fallbackScsv: false,
      secureRenegotiation: false,
      ticketbleed: true,
      rsaKey: createPrivateKey(cert.keyPem),
      robotOracle: true,
      delegatePort: portOf(real),
    });
    patched = await startRawTlsServer({
      versions: ['TLSv1.1', 'TLSv1.2'],
      suites: [0x009c], // AES128-GCM-SHA256: AEAD only
      certificate: der,
      rsaKey: createPrivateKey(cert.keyPem),
      heartbeat: true,
    });
    [bad, good, node] = await Promise.all([
      scan(broken.port, { answered: true, status: 200, headers: { 'content-encoding': 'gzip' } }),
      scan(patched.port),
      scan(portOf(real)),
    ]);
  });
  after(async () => {
    await Promise.all([broken?.close(), patched?.close()]);
    real?.close();
    noRenegotiation?.close();
  });

  const cases: [string, RegExp, string, () => Map<string, VulnerabilityResult>, RegExp][] = [
    [
      'heartbleed',
      /bytes of the server's memory/,
      'patched (heartbeat offered)',
      () => good,
      /malformed heartbeat|no answer/,
    ],
    ['ccs_injection', /took the early ChangeCipherSpec/, 'patched', () => good, /refused \(unexpected_message\)/],
    ['ticketbleed', /32 bytes: 31 bytes/, 'Node', () => node, /not padded with memory/],
    ['secure_renegotiation', /does not support secure renegotiation/, 'patched', () => good, /renegotiation_info/],
    ['crime', /picks TLS compression/, 'patched', () => good, /refuses TLS compression/],
    ['breach', /HTTP compression \(gzip\)/, 'patched', () => good, /without HTTP compression/],
    ['poodle_ssl', /SSLv3 with CBC suites is accepted/, 'patched', () => good, /SSLv3 is refused/],
    ['fallback_scsv', /marked as a fallback is accepted/, 'patched', () => good, /refused \(inappropriate_fallback\)/],
    ['sweet32', /TLS_RSA_WITH_3DES_EDE_CBC_SHA/, 'patched', () => good, /no 64-bit block cipher/],
    ['freak', /TLS_RSA_EXPORT_WITH_RC4_40_MD5/, 'patched', () => good, /no RSA export suite/],
    ['drown', /SSLv2 is accepted/, 'patched', () => good, /SSLv2 is refused/],
    [
      'logjam',
      /DH export suites accepted: TLS_DHE_RSA_EXPORT_WITH_DES40_CBC_SHA/,
      'Node',
      () => node,
      /no DH export suite/,
    ],
    ['beast', /CBC suites with TLS 1.0 or SSLv3/, 'patched', () => good, /no CBC suite with TLS 1.0/],
    ['lucky13', /potentially: CBC suites/, 'patched', () => good, /no CBC suite accepted/],
    ['rc4', /TLS_RSA_WITH_RC4_128_SHA/, 'patched', () => good, /no RC4 suite/],
  ];
  for (const [id, present, absentOn, absent, absentWhy] of cases) {
    it(`${id}: vulnerable on the affected server, not on the ${absentOn} one`, () => {
      const found = bad.get(id);
      expect(found?.verdict, JSON.stringify(found)).to.equal('vulnerable');
      expect(found?.why).to.match(present);
      const clean = absent().get(id);
      expect(clean?.verdict, JSON.stringify(clean)).to.equal('not_vulnerable');
      expect(clean?.why).to.match(absentWhy);
    });
  }

  it('caps the grade as the SSL Labs guide says for each finding that caps', () => {
    const caps = Object.fromEntries([...bad].map(([id, r]) => [id, r.cap]));
    expect(caps).to.include({ heartbleed: 'F', ccs_injection: 'F', drown: 'F', freak: 'F', logjam: 'F', crime: 'C' });
    expect(caps).to.include({ rc4: 'C', sweet32: 'C', poodle_ssl: 'C', secure_renegotiation: 'C', ticketbleed: 'F' });
    // Warnings without a cap: BEAST, LUCKY13, BREACH, no downgrade prevention.
    expect([caps.beast, caps.lucky13, caps.breach, caps.fallback_scsv]).to.deep.equal([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect([...good.values()].filter((r) => r.cap)).to.deep.equal([]);
  });

  it('client-initiated renegotiation: accepted repeatedly by Node, refused with SSL_OP_NO_RENEGOTIATION', async () => {
    expect(node.get('client_renegotiation')).to.include({ verdict: 'vulnerable' });
    const refused = await scan(portOf(noRenegotiation));
    expect(refused.get('client_renegotiation')?.verdict).to.equal('not_vulnerable');
  });

  it('ROBOT: an oracle on the affected server; the same answer to every premaster secret on the patched one', () => {
    expect(bad.get('robot'), JSON.stringify(bad.get('robot'))).to.include({ verdict: 'vulnerable', cap: 'F' });
    expect(bad.get('robot')?.why).to.match(/^the server answers malformed RSA premaster secrets differently/);
    expect(bad.get('robot')?.why).to.include('well-formed: alert 20; wrong first bytes: alert 40');
    expect(good.get('robot')).to.include({ verdict: 'not_vulnerable' });
    expect(good.get('robot')?.why).to.match(/all got the same answer \(alert 20\): no oracle/);
    expect(node.get('robot')).to.include({ verdict: 'not_vulnerable', why: 'no RSA key transport suite is accepted' });
  });

  it('ROBOT: an exchange left unanswered is asked again, not read as the answer', async () => {
    const cert = await issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' });
    const common: RawTlsServerOptions = {
      versions: ['TLSv1.2'],
      suites: [0x009c],
      certificate: Buffer.from(cert.cert.rawData),
      rsaKey: createPrivateKey(cert.keyPem),
    };
    // Five exchanges a round: the oracle loses one of its second round, the patched one one of its first.
    const oracle = await startRawTlsServer({ ...common, robotOracle: true, unansweredKeyExchanges: [7] });
    const patchedLossy = await startRawTlsServer({ ...common, unansweredKeyExchanges: [3] });
    try {
      const [onOracle, onPatched] = await Promise.all([scan(oracle.port), scan(patchedLossy.port)]);
      expect(onOracle.get('robot'), JSON.stringify(onOracle.get('robot'))).to.include({ verdict: 'vulnerable' });
      expect(onPatched.get('robot'), JSON.stringify(onPatched.get('robot'))).to.include({ verdict: 'not_vulnerable' });
    } finally {
      await Promise.all([oracle.close(), patchedLossy.close()]);
    }
  });

  it('ROBOT: OpenSSL with RSA key transport answers every premaster secret alike', async () => {
    const cert = await issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' });
    const rsaOnly = await nodeServer({
      key: cert.keyPem,
      cert: cert.pem,
      maxVersion: 'TLSv1.2',
      ciphers: 'AES128-GCM-SHA256:AES256-SHA',
    });
    try {
      const found = (await scan(portOf(rsaOnly))).get('robot');
      expect(found?.verdict, JSON.stringify(found)).to.equal('not_vulnerable');
      expect(found?.why).to.match(/a well-formed and four malformed premaster secrets all got the same answer/);
    } finally {
      rsaOnly.close();
    }
  });

  it('answers every check in testssl.sh order, unknown when the page could not be read', () => {
    expect([...bad.keys()]).to.deep.equal([
      'heartbleed',
      'ccs_injection',
      'ticketbleed',
      'robot',
      'secure_renegotiation',
      'client_renegotiation',
      'crime',
      'breach',
      'poodle_ssl',
      'fallback_scsv',
      'sweet32',
      'freak',
      'drown',
      'logjam',
      'beast',
      'lucky13',
      'rc4',
    ]);
    const suites = {
      protocols: [],
      findings: { dhPrimes: [], secureRenegotiation: undefined, tlsScts: 0 },
      groups: [],
      signatureAlgorithms: [],
      connections: 0,
    };
    const breach = derivedChecks(suites, { answered: false, why: 'no answer within 2 s' }).find(
      (r) => r.id === 'breach',
    );
    expect(breach).to.include({ verdict: 'unknown', why: 'the home page could not be read: no answer within 2 s' });
  });
});
