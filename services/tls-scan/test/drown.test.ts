import { AddressPolicy, SafeHttp } from '@webutil/kit';
import { type RawTlsServer, startRawTlsServer } from '@webutil/scripts/raw-tls-server';
import { type Issued, issue, startTlsServer, type TlsServer } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { TrustStore } from '../src/chain.js';
import { readConfig } from '../src/config.js';
import { sslScan } from '../src/ssl-scan.js';
import { DROWN_PORTS } from '../src/vulnerabilities/drown.js';

/**
 * DROWN beyond the scanned port: a TLS server without SSLv2 whose certificate's key is served
 * over SSLv2 on another port of the same address (a mail server sharing the certificate).
 */
describe('SSL scan: DROWN on other ports of the address', function () {
  this.timeout(60_000);
  const policy = new AddressPolicy(['127.0.0.0/8']);
  const http = new SafeHttp({ policy });
  let root: Issued;
  let web: TlsServer;
  let sharedKey: RawTlsServer;
  let otherKey: RawTlsServer;
  const scan = (drownPorts: number[]) =>
    sslScan(
      'localhost',
      {
        policy,
        http,
        store: new TrustStore([root.pem]),
        port: web.port,
        dnsServers: [],
        extraProbes: false,
        handshakeTimeoutMs: 5_000,
        probeTimeoutMs: 5_000,
        drownPorts,
      },
      new AbortController().signal,
    );

  before(async () => {
    root = await issue({ commonName: 'WebUtil Test Root', ca: true, key: 'rsa2048', validDays: [-365, 3650] });
    const [leaf, other] = await Promise.all([
      issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' }, root),
      issue({ commonName: 'mail.test', altNames: ['mail.test'], key: 'rsa2048' }, root),
    ]);
    const sslv2With = (cert: Issued) =>
      startRawTlsServer({
        versions: ['TLSv1.2'],
        suites: [0x009c],
        certificate: Buffer.from(cert.cert.rawData),
        sslv2: true,
      });
    [web, sharedKey, otherKey] = await Promise.all([
      startTlsServer({ key: leaf.keyPem, chain: [leaf.pem], hsts: 'max-age=31536000' }),
      sslv2With(leaf),
      sslv2With(other),
    ]);
  });
  after(async () => {
    await Promise.all([web?.close(), sharedKey?.close(), otherKey?.close()]);
    await http.close();
  });

  it('finds SSLv2 with this certificate’s key on another port: vulnerable, the grade capped at F', async () => {
    const data = await scan([otherKey.port, sharedKey.port]);
    const drown = data.vulnerabilities.find((v) => v.id === 'drown');
    expect(drown, JSON.stringify(drown)).to.include({ verdict: 'vulnerable', gradeCap: 'F' });
    expect(drown?.why).to.equal(
      `SSLv2 is refused here but accepted on port ${sharedKey.port} of this address with this certificate's key`,
    );
    expect(data.securityGrade).to.equal('F');
    expect(data.gradeReasons.map((r) => r.code)).to.include('vulnerable_drown');
  });

  it('does not count SSLv2 with another key, and says which ports it tried', async () => {
    const data = await scan([otherKey.port]);
    const drown = data.vulnerabilities.find((v) => v.id === 'drown');
    expect(drown, JSON.stringify(drown)).to.include({ verdict: 'not_vulnerable' });
    expect(drown?.why).to.equal(
      `SSLv2 is refused here and on port ${otherKey.port} of this address, except port ${otherKey.port}, ` +
        'where it comes with another key (other hosts sharing the key are not checked)',
    );
    expect(data.securityGrade).to.equal('A+');
  });

  it('reads the ports to try from SSL_SCAN_DROWN_PORTS: a list, `none`, or the default', () => {
    expect(readConfig({ SSL_SCAN_DROWN_PORTS: '993, 995' }).SSL_SCAN_DROWN_PORTS).to.deep.equal([993, 995]);
    expect(readConfig({ SSL_SCAN_DROWN_PORTS: 'none' }).SSL_SCAN_DROWN_PORTS).to.deep.equal([]);
    expect(readConfig({}).SSL_SCAN_DROWN_PORTS).to.deep.equal([...DROWN_PORTS]);
  });
});
