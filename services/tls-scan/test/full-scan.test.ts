import { AddressPolicy, SafeHttp } from '@webutil/kit';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { type Issued, issue, ocspResponse, startTlsServer, type TlsServer } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { TrustStore } from '../src/chain.js';
import { type SslScanDeps, sslScan } from '../src/ssl-scan.js';

/**
 * The full scan through sslScan against Node's HTTPS servers: certificate transparency, the OCSP
 * responder's answer (a fixture site answering what OpenSSL's responder signs), the revoked
 * certificate's T marker, and fast mode leaving the new parts out.
 */
describe('SSL scan: full scan, revocation and certificate transparency', function () {
  this.timeout(60_000);
  const policy = new AddressPolicy(['127.0.0.0/8']);
  const http = new SafeHttp({ policy });
  let responder: FixtureSite;
  let root: Issued;
  let good: TlsServer;
  let revoked: TlsServer;
  let legacy: TlsServer;
  const deps = (port: number): SslScanDeps => ({
    policy,
    http,
    store: new TrustStore([root.pem]),
    port,
    dnsServers: [],
    extraProbes: false,
    handshakeTimeoutMs: 5_000,
    probeTimeoutMs: 5_000,
  });
  const scan = (server: TlsServer, fast = false) =>
    sslScan('localhost', deps(server.port), new AbortController().signal, undefined, fast);

  before(async () => {
    responder = await startFixtureSite();
    root = await issue({ commonName: 'WebUtil Test Root', ca: true, key: 'rsa2048', validDays: [-365, 3650] });
    const leaf = (path: string) =>
      issue({ commonName: 'localhost', altNames: ['localhost'], ocspUrl: responder.url(path), embeddedScts: 2 }, root);
    const [fine, bad] = await Promise.all([leaf('/ocsp-good'), leaf('/ocsp-revoked')]);
    const answer = (der: Buffer) => (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/ocsp-response' }).end(der);
    };
    responder.route('/ocsp-good', answer(ocspResponse(fine, root, 'good')));
    responder.route('/ocsp-revoked', answer(ocspResponse(bad, root, 'revoked')));
    const hsts = 'max-age=31536000';
    [good, revoked, legacy] = await Promise.all([
      startTlsServer({ key: fine.keyPem, chain: [fine.pem], hsts }),
      startTlsServer({ key: bad.keyPem, chain: [bad.pem], hsts }),
      startTlsServer({ key: fine.keyPem, chain: [fine.pem], hsts, minVersion: 'TLSv1', maxVersion: 'TLSv1' }),
    ]);
  });
  after(async () => {
    await Promise.all([good?.close(), revoked?.close(), legacy?.close(), responder?.close()]);
    await http.close();
  });

  it('asks the OCSP responder the certificate names, and counts the embedded timestamps', async () => {
    const data = await scan(good);
    expect(data.revocation).to.deep.equal({ status: 'good', responder: responder.url('/ocsp-good') });
    expect(responder.requests.some((r) => r.method === 'POST' && r.path === '/ocsp-good')).to.equal(true);
    expect(data.certificateTransparency).to.deep.equal({ embedded: 2, stapled: 0, tlsExtension: 0 });
    expect(data.securityGrade).to.equal('A+');
    expect(data.vulnerabilities.length).to.equal(17);
    expect(data.cipherSuites.find((p) => p.protocol === 'TLSv1.3')?.suites.length).to.be.above(0);
    expect(data.fast).to.equal(false);
    expect(data.timings?.cipherSuitesMs).to.be.above(0);
    expect(data.timings?.totalMs).to.be.at.least(data.timings?.cipherSuitesMs ?? 0);
    // A healthy server answers every probe: none may wait out its time limit (5 s here), and the
    // whole full scan stays under the issue's 10 s (it takes well under a second).
    expect(data.timings?.vulnerabilitiesMs).to.be.below(5_000);
    expect(data.timings?.totalMs).to.be.below(10_000);
    // The web server's answer to renegotiations (Node allows three, then a 400 and a close) is read, not waited out.
    const renegotiation = data.vulnerabilities.find((v) => v.id === 'client_renegotiation');
    expect(renegotiation).to.deep.include({ verdict: 'not_vulnerable' });
    expect(renegotiation?.why).to.match(/^mitigated: the server accepts 3 renegotiations/);
  });

  it('fails a revoked certificate with SSL Labs’ T, naming the responder’s answer', async () => {
    const data = await scan(revoked);
    expect(data.revocation?.status).to.equal('revoked');
    expect(data.certValidations?.trustedCert).to.equal(false);
    expect(data.securityGrade).to.equal('F');
    expect(data).to.include({ trustMarker: 'T', gradeIgnoringTrust: 'A+', hstsStatus: 'ignored' });
    expect(data.gradeReasons[0]?.message).to.match(
      /^the certificate is not trusted: the OCSP responder says .*revoked/,
    );
  });

  it('reads HSTS from a server that speaks only TLS 1.0, and leaves the deep parts out in fast mode', async () => {
    const data = await scan(legacy, true);
    expect(data.protocol).to.equal('TLSv1');
    expect(data.hsts).to.deep.include({ maxAge: '31536000' });
    expect(data.hstsStatus).to.equal('honoured');
    expect(data.gradeReasons.map((r) => r.code)).to.not.include('no_hsts');
    expect(data).to.include({ fast: true });
    expect(data.cipherSuites).to.deep.equal([]);
    expect(data.vulnerabilities).to.deep.equal([]);
    expect(data.revocation).to.equal(undefined);
    expect(data.timings?.cipherSuitesMs).to.equal(0);
  });
});
