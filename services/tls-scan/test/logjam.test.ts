import { execFileSync } from 'node:child_process';
import { createHash, getDiffieHellman } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { issue } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { scanSuites } from '../src/cipher-suites.js';
import { COMMON_DH_PRIMES } from '../src/vulnerabilities/logjam.js';
import { checkVulnerabilities } from '../src/vulnerabilities.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** DER length prefix. */
const derLength = (n: number) =>
  n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
const derInteger = (b: Buffer) => {
  const body = (b[0] as number) & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b;
  return Buffer.concat([Buffer.from([0x02]), derLength(body.length), body]);
};

/** PKCS#3 DHParameter PEM (p, g = 2), what a server's dhparam file holds. */
function dhParamsPem(prime: Buffer): string {
  const body = Buffer.concat([derInteger(prime), derInteger(Buffer.from([2]))]);
  const der = Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
  return `-----BEGIN DH PARAMETERS-----\n${der.toString('base64')}\n-----END DH PARAMETERS-----\n`;
}

/** The prime of one of OpenSSL's named DH groups, from `openssl genpkey -genparam` (p is the first INTEGER). */
function opensslPrime(group: string): Buffer {
  const pem = execFileSync('openssl', ['genpkey', '-genparam', '-algorithm', 'DH', '-pkeyopt', `group:${group}`]);
  const der = Buffer.from(
    pem
      .toString()
      .split('\n')
      .filter((line) => !line.startsWith('-----'))
      .join(''),
    'base64',
  );
  let at = (der[1] as number) & 0x80 ? 2 + ((der[1] as number) & 0x7f) : 2;
  let length = der[at + 1] as number;
  at += 2;
  if (length & 0x80) {
    const n = length & 0x7f;
    length = der.readUIntBE(at, n);
    at += n;
  }
  const p = der.subarray(at, at + length);
  return p[0] === 0 ? p.subarray(1) : p;
}

describe('LOGJAM: common DH primes', function () {
  this.timeout(60_000);

  it('lists exactly the published groups, recomputed from Node (RFC 2409, 3526) and OpenSSL (RFC 5114, 7919)', () => {
    const expected = new Map<string, string>();
    const node: [string, string][] = [
      ['modp1', 'RFC 2409 group 1 (768-bit MODP)'],
      ['modp2', 'RFC 2409 group 2 (1024-bit MODP)'],
      ['modp5', 'RFC 3526 group 5 (1536-bit MODP)'],
      ['modp14', 'RFC 3526 group 14 (2048-bit MODP)'],
      ['modp15', 'RFC 3526 group 15 (3072-bit MODP)'],
      ['modp16', 'RFC 3526 group 16 (4096-bit MODP)'],
      ['modp17', 'RFC 3526 group 17 (6144-bit MODP)'],
      ['modp18', 'RFC 3526 group 18 (8192-bit MODP)'],
    ];
    for (const [group, name] of node) expected.set(sha256(getDiffieHellman(group).getPrime()), name);
    const openssl: [string, string][] = [
      ['dh_1024_160', 'RFC 5114 1024-bit group (160-bit subgroup)'],
      ['dh_2048_224', 'RFC 5114 2048-bit group (224-bit subgroup)'],
      ['dh_2048_256', 'RFC 5114 2048-bit group (256-bit subgroup)'],
      ...[2048, 3072, 4096, 6144, 8192].map((bits): [string, string] => [`ffdhe${bits}`, `RFC 7919 ffdhe${bits}`]),
    ];
    for (const [group, name] of openssl) expected.set(sha256(opensslPrime(group)), name);
    expect(Object.fromEntries(COMMON_DH_PRIMES)).to.deep.equal(Object.fromEntries(expected));
  });

  describe('against OpenSSL servers with DHE', () => {
    const servers: tls.Server[] = [];
    after(() => {
      for (const s of servers) s.close();
    });
    async function logjamOf(dhparam: string) {
      const cert = await issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' });
      const server = tls.createServer({
        key: cert.keyPem,
        cert: cert.pem,
        maxVersion: 'TLSv1.2',
        ciphers: 'DHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0',
        dhparam,
      });
      server.on('tlsClientError', () => undefined);
      servers.push(server);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const endpoint = { address: '127.0.0.1', port: (server.address() as AddressInfo).port, servername: 'localhost' };
      const signal = new AbortController().signal;
      const suites = await scanSuites(endpoint, 2_000, signal);
      const results = await checkVulnerabilities({
        endpoint,
        timeoutMs: 2_000,
        signal,
        suites,
        page: { answered: false, why: 'not asked' },
        otherPorts: [],
      });
      return results.find((r) => r.id === 'logjam');
    }

    it('finds the 1024-bit RFC 2409 group 2 a server sends: vulnerable, capped at F', async () => {
      const found = await logjamOf(dhParamsPem(getDiffieHellman('modp2').getPrime()));
      expect(found, JSON.stringify(found)).to.include({ verdict: 'vulnerable', cap: 'F' });
      expect(found?.why).to.equal(
        'the DHE suites use a common 1024-bit prime, RFC 2409 group 2 (1024-bit MODP): ' +
          'one precomputation breaks every server using it',
      );
    });

    it('names a large common group (RFC 3526 group 14) without finding it vulnerable', async () => {
      const found = await logjamOf(dhParamsPem(getDiffieHellman('modp14').getPrime()));
      expect(found, JSON.stringify(found)).to.include({ verdict: 'not_vulnerable' });
      expect(found?.why).to.equal(
        'no DH export suite (the DH group is 2048-bit, RFC 3526 group 14 (2048-bit MODP)) accepted',
      );
    });
  });
});
