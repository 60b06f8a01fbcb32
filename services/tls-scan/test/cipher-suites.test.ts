import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { issue } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { type ProtocolSuites, scanSuites, suiteNotes } from '../src/cipher-suites.js';

const signal = new AbortController().signal;

async function serve(options: tls.TlsOptions): Promise<{ port: number; close: () => void }> {
  const server = tls.createServer({ ciphers: 'DEFAULT:@SECLEVEL=0', ...options }, (socket) => socket.end());
  server.on('tlsClientError', () => undefined);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}
const names = (p: ProtocolSuites | undefined) => p?.suites.map((s) => s.name);

/** Node's TLS servers, configured with known suites, groups and orders, enumerated with raw ClientHellos. */
describe('SSL scan cipher suite enumeration', function () {
  this.timeout(30_000);
  let rsa: Awaited<ReturnType<typeof issue>>;
  before(async () => {
    rsa = await issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' });
  });

  it('finds every suite per protocol in the server’s order, and tells server from client preference', async () => {
    const ciphers =
      'ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA:ECDHE-RSA-CHACHA20-POLY1305:' +
      'TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:@SECLEVEL=0';
    const ordered = await serve({
      key: rsa.keyPem,
      cert: rsa.pem,
      ciphers,
      honorCipherOrder: true,
      minVersion: 'TLSv1',
    });
    const clients = await serve({
      key: rsa.keyPem,
      cert: rsa.pem,
      ciphers,
      honorCipherOrder: false,
      minVersion: 'TLSv1.2',
    });
    try {
      const [server, client] = await Promise.all([
        scanSuites({ address: '127.0.0.1', port: ordered.port, servername: 'localhost' }, 2_000, signal),
        scanSuites({ address: '127.0.0.1', port: clients.port, servername: 'localhost' }, 2_000, signal),
      ]);
      const at = (scan: typeof server, v: string) => scan.protocols.find((p) => p.protocol === v);
      expect(server.protocols.map((p) => [p.protocol, p.supported])).to.deep.equal([
        ['SSLv2', false],
        ['SSLv3', false],
        ['TLSv1', true],
        ['TLSv1.1', true],
        ['TLSv1.2', true],
        ['TLSv1.3', true],
      ]);
      expect(names(at(server, 'TLSv1.2'))).to.deep.equal([
        'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
        'TLS_RSA_WITH_AES_256_CBC_SHA',
        'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
      ]);
      expect(at(server, 'TLSv1.2')?.serverPreference).to.equal(true);
      expect(names(at(server, 'TLSv1'))).to.deep.equal(['TLS_RSA_WITH_AES_256_CBC_SHA']);
      expect(names(at(server, 'TLSv1.3'))).to.deep.equal(['TLS_AES_128_GCM_SHA256', 'TLS_CHACHA20_POLY1305_SHA256']);
      const gcm = at(server, 'TLSv1.2')?.suites[0];
      expect(gcm).to.include({
        code: 0xc02f,
        keyExchange: 'ECDHE',
        forwardSecrecy: true,
        aead: true,
        cbc: false,
        bits: 128,
      });
      expect(at(server, 'TLSv1.2')?.suites[1]).to.include({
        keyExchange: 'RSA',
        forwardSecrecy: false,
        cbc: true,
        bits: 256,
      });
      // Picking by the client's order: the same three, found in whatever order, marked as the client's.
      expect(at(client, 'TLSv1.2')?.serverPreference).to.equal(false);
      expect(names(at(client, 'TLSv1.2'))).to.have.members(names(at(server, 'TLSv1.2')) ?? []);
      expect(at(client, 'TLSv1')?.supported).to.equal(false);
    } finally {
      ordered.close();
      clients.close();
    }
  });

  it('finds the named groups and signature algorithms the server accepts', async () => {
    const ec = await issue({ commonName: 'localhost', altNames: ['localhost'] });
    const server = await serve({ key: ec.keyPem, cert: ec.pem, ecdhCurve: 'P-384:X25519', minVersion: 'TLSv1.2' });
    try {
      const scan = await scanSuites(
        { address: '127.0.0.1', port: server.port, servername: 'localhost' },
        2_000,
        signal,
      );
      expect(scan.groups).to.have.members(['secp384r1', 'x25519']);
      // A P-256 key signs with ECDSA P-256 SHA-256 only at TLS 1.3; TLS 1.2 also lets it sign with other hashes.
      expect(scan.signatureAlgorithms).to.include('ecdsa_secp256r1_sha256');
      expect(scan.signatureAlgorithms.some((s) => s.startsWith('rsa'))).to.equal(false);
    } finally {
      server.close();
    }
  });

  it('notes CBC-only, no AEAD and no TLS 1.3', async () => {
    const server = await serve({
      key: rsa.keyPem,
      cert: rsa.pem,
      ciphers: 'ECDHE-RSA-AES128-SHA:AES128-SHA256',
      maxVersion: 'TLSv1.2',
    });
    try {
      const scan = await scanSuites(
        { address: '127.0.0.1', port: server.port, servername: 'localhost' },
        2_000,
        signal,
      );
      expect(suiteNotes(scan.protocols)).to.deep.equal([
        'no AEAD suite (GCM, ChaCha20-Poly1305, CCM) is accepted',
        'TLS 1.2 offers CBC suites only',
        'TLS 1.3 is not supported',
      ]);
      // One connection per suite accepted plus one refusal per protocol, the order check, groups and
      // signatures: bounded.
      expect(scan.connections).to.be.below(100);
    } finally {
      server.close();
    }
  });
});
