import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { AddressPolicy, SafeHttp, ServiceError } from '@webutil/kit';
import { issue, startTlsServer, type TlsServer } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { readSentChain } from '../src/certificate.js';
import { TrustStore } from '../src/chain.js';
import { type SslScanDeps, sslScan } from '../src/ssl-scan.js';

/** The scan's failure: a ServiceError's reason and message. */
async function failure(scan: Promise<unknown>): Promise<{ reason: string; message: string }> {
  const err = await scan.then(
    () => expect.fail('the scan succeeded'),
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(ServiceError);
  const { reason, message } = err as ServiceError;
  return { reason, message };
}

/** Servers whose handshake works but whose certificate cannot be graded: a 400 with the reason, never a 500. */
describe('SSL scan of servers without a readable certificate', function () {
  this.timeout(20_000);
  const policy = new AddressPolicy(['127.0.0.0/8']);
  const http = new SafeHttp({ policy });
  let malformed: TlsServer;
  let anonymous: tls.Server;
  const deps = (port: number): SslScanDeps => ({
    policy,
    http,
    store: new TrustStore([]),
    port,
    dnsServers: [],
    handshakeTimeoutMs: 2_000,
    probeTimeoutMs: 2_000,
  });

  before(async () => {
    const cert = await issue({ commonName: 'localhost', malformedAltNames: true });
    malformed = await startTlsServer({ key: cert.keyPem, chain: [cert.pem] });
    // No key and no certificate: only suites without authentication can be agreed.
    anonymous = tls.createServer({ ciphers: 'aNULL:@SECLEVEL=0', maxVersion: 'TLSv1.2', dhparam: 'auto' });
    anonymous.on('tlsClientError', () => undefined);
    anonymous.listen(0, '127.0.0.1');
    await once(anonymous, 'listening');
  });
  after(async () => {
    await malformed?.close();
    anonymous?.close();
    await http.close();
  });

  it('refuses a certificate OpenSSL accepts but X.509 cannot read (a malformed subjectAltName)', async () => {
    const { reason, message } = await failure(sslScan('localhost', deps(malformed.port), new AbortController().signal));
    expect(reason).to.equal('TLS_HANDSHAKE_FAILED');
    expect(message).to.match(/^the server's certificate is malformed \(.+\); browsers refuse it$/);
  });

  it('refuses a server that offers only anonymous suites: browsers offer none of them', async () => {
    const port = (anonymous.address() as AddressInfo).port;
    const { reason, message } = await failure(sslScan('localhost', deps(port), new AbortController().signal));
    expect(reason).to.equal('TLS_HANDSHAKE_FAILED');
    expect(message).to.match(/^TLS error: the server answered with the alert handshake failure \(ERR_SSL_/);
  });

  it('refuses a handshake that brought no certificate at all, or an unreadable one further up the chain', async () => {
    expect(() => readSentChain([]))
      .to.throw(ServiceError, /^the server sent no certificate: it negotiated a cipher suite without authentication/)
      .with.property('reason', 'TLS_HANDSHAKE_FAILED');
    const leaf = Buffer.from((await issue({ commonName: 'localhost' })).cert.rawData);
    expect(() => readSentChain([leaf, Buffer.from('not DER')]))
      .to.throw(ServiceError, /^certificate 2 of the chain the server sent is malformed/)
      .with.property('reason', 'TLS_HANDSHAKE_FAILED');
    expect(readSentChain([leaf]).map((f) => f.subject.CN)).to.deep.equal(['localhost']);
  });
});
