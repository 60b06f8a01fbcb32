import { type ChildProcess, spawn } from 'node:child_process';
import { sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BasicOCSPResponse, OCSPResponse } from '@peculiar/asn1-ocsp';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { Extension } from '@peculiar/asn1-x509';
import { AddressPolicy, SafeHttp } from '@webutil/kit';
import { type Issued, issue, ocspResponse, startTlsServer, type TlsServer } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { TrustStore } from '../src/chain.js';
import { sslScan } from '../src/ssl-scan.js';

/** A TLS-encoded SignedCertificateTimestampList of `count` SCTs (RFC 6962 3.3), each of plausible size. */
function sctList(count: number): Buffer {
  const entries = Buffer.concat(
    Array.from({ length: count }, (_, i) => Buffer.concat([Buffer.from([0, 47]), Buffer.alloc(47, i + 1)])),
  );
  return Buffer.concat([Buffer.from([entries.length >> 8, entries.length & 0xff]), entries]);
}

/**
 * `der` (an OCSP response OpenSSL's responder signed) with `count` SCTs in its single response's
 * extension (RFC 6962 3.3, OID 1.3.6.1.4.1.11129.2.4.5), signed again with the issuer's key.
 */
function withScts(der: Buffer, issuer: Issued, count: number): Buffer {
  const outer = AsnConvert.parse(der, OCSPResponse);
  const bytes = outer.responseBytes;
  if (!bytes) throw new Error('no response bytes');
  const basic = AsnConvert.parse(bytes.response.buffer, BasicOCSPResponse);
  const single = basic.tbsResponseData.responses[0];
  if (!single) throw new Error('no single response');
  const octets = AsnConvert.serialize(new OctetString(sctList(count)));
  single.singleExtensions = [new Extension({ extnID: '1.3.6.1.4.1.11129.2.4.5', extnValue: new OctetString(octets) })];
  basic.tbsResponseDataRaw = undefined;
  const tbs = Buffer.from(AsnConvert.serialize(basic.tbsResponseData));
  basic.signature = new Uint8Array(sign('sha256', tbs, issuer.keyPem)).buffer;
  bytes.response = new OctetString(AsnConvert.serialize(basic));
  return Buffer.from(AsnConvert.serialize(outer));
}

/** A free port on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Certificate transparency by each of its three routes, against real servers: embedded in the
 * certificate, in the stapled OCSP response (Node's server stapling a signed response), and in the
 * TLS extension (OpenSSL's s_server sending a serverinfo block for extension 18).
 */
describe('SSL scan: certificate transparency by each route', function () {
  this.timeout(60_000);
  const policy = new AddressPolicy(['127.0.0.0/8']);
  const http = new SafeHttp({ policy });
  const signal = new AbortController().signal;
  let root: Issued;
  let leaf: Issued;
  let stapling: TlsServer;
  let sServer: ChildProcess | undefined;
  let sServerPort: number;
  let dir: string;
  const scan = (port: number) =>
    sslScan(
      'localhost',
      {
        policy,
        http,
        store: new TrustStore([root.pem]),
        port,
        dnsServers: [],
        extraProbes: true,
        handshakeTimeoutMs: 5_000,
        probeTimeoutMs: 5_000,
        drownPorts: [],
      },
      signal,
    );

  before(async () => {
    root = await issue({ commonName: 'WebUtil Test Root', ca: true, key: 'rsa2048', validDays: [-365, 3650] });
    leaf = await issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' }, root);
    stapling = await startTlsServer({
      key: leaf.keyPem,
      chain: [leaf.pem, root.pem],
      hsts: 'max-age=31536000',
      ocspResponse: withScts(ocspResponse(leaf, root, 'good'), root, 3),
    });
    dir = mkdtempSync(path.join(os.tmpdir(), 'ct-'));
    const file = (name: string, text: string) => {
      writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    // serverinfo: extension type 18 (signed_certificate_timestamp), its length, the SCT list.
    const list = sctList(2);
    const block = Buffer.concat([Buffer.from([0, 18, list.length >> 8, list.length & 0xff]), list]);
    const serverinfo = file(
      'serverinfo.pem',
      `-----BEGIN SERVERINFO FOR localhost-----\n${block.toString('base64')}\n-----END SERVERINFO FOR localhost-----\n`,
    );
    sServerPort = await freePort();
    sServer = spawn(
      'openssl',
      [
        ...['s_server', '-quiet', '-www', '-accept', `127.0.0.1:${sServerPort}`, '-tls1_2'],
        ...['-cert', file('leaf.pem', leaf.pem), '-key', file('leaf.key', leaf.keyPem)],
        ...['-cert_chain', file('root.pem', root.pem), '-serverinfo', serverinfo],
      ],
      { stdio: 'ignore' },
    );
    // Ready when it accepts a connection.
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const socket = net.connect(sServerPort, '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (up) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  after(async () => {
    sServer?.kill();
    await stapling?.close();
    await http.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('counts the SCTs in the stapled OCSP response, and the staple is usable', async () => {
    const data = await scan(stapling.port);
    expect(data.ocspStapling).to.equal(true);
    expect(data.certificateTransparency).to.deep.equal({ embedded: 0, stapled: 3, tlsExtension: 0 });
  });

  it('counts the SCTs OpenSSL sends in the TLS extension', async () => {
    const data = await scan(sServerPort);
    expect(data.protocol).to.equal('TLSv1.2');
    expect(data.certificateTransparency).to.deep.equal({ embedded: 0, stapled: 0, tlsExtension: 2 });
  });
});
