/**
 * TLS fixtures for tests and benchmarks: certificates generated at run time (dates relative to
 * now, so nothing in the repository expires), HTTPS servers on 127.0.0.1 configured per scenario,
 * and a port switch that puts one of them behind a fixed port (the SSL scan connects to a
 * configured port, so a test picks the scenario by routing the switch).
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SecureVersion } from 'node:tls';
import * as x509 from '@peculiar/x509';
import { startFixtureSite } from './fixture-site.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;
type Algorithm = webcrypto.Algorithm;

/** `rsaPss`: a 2048-bit RSA key that signs with RSASSA-PSS (salt as long as the hash). */
export type KeyKind = 'ec' | 'rsa2048' | 'rsa1024' | 'rsaPss';
const DAY = 86_400_000;

/** A certificate with its private key, ready for a TLS server. */
export interface Issued {
  cert: x509.X509Certificate;
  /** PEM of the certificate. */
  pem: string;
  /** PKCS#8 PEM of the private key. */
  keyPem: string;
  keys: CryptoKeyPair;
  signing: Algorithm;
}

export interface IssueOptions {
  commonName: string;
  /** DNS names (IP literals become IP entries); none: no SAN extension at all. */
  altNames?: string[];
  /** Days from now: [start, end]; default [-30, 60]. */
  validDays?: [number, number];
  key?: KeyKind;
  /** Hash of the issuer's signature over this certificate; default SHA-256. */
  hash?: 'SHA-256' | 'SHA-1';
  /** A CA certificate (basicConstraints cA). */
  ca?: boolean;
  /** The issuer's certificate URL, for clients that complete chains (authorityInfoAccess caIssuers). */
  caIssuersUrl?: string;
  /** The OCSP responder's URL (authorityInfoAccess ocsp). */
  ocspUrl?: string;
  /** Embeds a signed certificate timestamp list of this many entries (their contents are not signed SCTs). */
  embeddedScts?: number;
  /**
   * A subjectAltName whose value is not valid DER instead of `altNames`: OpenSSL completes the
   * handshake (it reads extensions lazily), stricter X.509 readers refuse the certificate.
   */
  malformedAltNames?: boolean;
}

function algorithm(kind: KeyKind, hash: string): webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams {
  if (kind === 'ec') return { name: 'ECDSA', namedCurve: 'P-256' };
  return {
    name: kind === 'rsaPss' ? 'RSA-PSS' : 'RSASSA-PKCS1-v1_5',
    hash,
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: kind === 'rsa1024' ? 1024 : 2048,
  };
}

function signingAlgorithm(keys: CryptoKeyPair, hash: string): Algorithm {
  switch (keys.privateKey.algorithm.name) {
    case 'ECDSA':
      return { name: 'ECDSA', hash } as webcrypto.EcdsaParams;
    case 'RSA-PSS':
      return { name: 'RSA-PSS', hash, saltLength: hash === 'SHA-1' ? 20 : 32 } as webcrypto.RsaPssParams;
    default:
      return { name: 'RSASSA-PKCS1-v1_5', hash } as Algorithm;
  }
}

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n').trimEnd();
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

let serial = 1;

/** Issues a certificate signed by `issuer`, or self-signed when no issuer is given. */
export async function issue(options: IssueOptions, issuer?: Issued): Promise<Issued> {
  const hash = options.hash ?? 'SHA-256';
  const keys = (await webcrypto.subtle.generateKey(algorithm(options.key ?? 'ec', hash), true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const [from, to] = options.validDays ?? [-30, 60];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(options.ca ?? false, undefined, true),
    new x509.KeyUsagesExtension(
      options.ca
        ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign
        : x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (issuer) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuer.cert));
  if (options.altNames) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        options.altNames.map((name) => ({ type: net.isIP(name) ? 'ip' : 'dns', value: name })),
      ),
    );
  }
  if (options.caIssuersUrl || options.ocspUrl) {
    const url = (u: string | undefined) => (u ? [new x509.GeneralName('url', u)] : []);
    extensions.push(
      new x509.AuthorityInfoAccessExtension({ caIssuers: url(options.caIssuersUrl), ocsp: url(options.ocspUrl) }),
    );
  }
  if (options.embeddedScts) {
    // RFC 6962 3.3: an OCTET STRING holding the TLS-encoded SignedCertificateTimestampList.
    const sct = Buffer.alloc(47, 1);
    const entries = Buffer.concat(
      Array.from({ length: options.embeddedScts }, () => Buffer.concat([Buffer.from([0, sct.length]), sct])),
    );
    const list = Buffer.concat([Buffer.from([entries.length >> 8, entries.length & 0xff]), entries]);
    const octets = Buffer.concat([Buffer.from([0x04, 0x81, list.length]), list]);
    extensions.push(new x509.Extension('1.3.6.1.4.1.11129.2.4.2', false, new Uint8Array(octets)));
  }
  if (options.malformedAltNames) {
    // A SEQUENCE that announces 3 bytes and holds a dNSName announcing 5 of which 1 follows.
    extensions.push(new x509.Extension('2.5.29.17', false, new Uint8Array([0x30, 0x03, 0x82, 0x05, 0x61])));
  }
  const signerKeys = issuer?.keys ?? keys;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16).padStart(4, '0').padStart(16, '7'),
    subject: `CN=${options.commonName}, O=WebUtil Test`,
    issuer: issuer ? issuer.cert.subject : `CN=${options.commonName}, O=WebUtil Test`,
    notBefore: new Date(now + from * DAY),
    notAfter: new Date(now + to * DAY),
    publicKey: keys.publicKey,
    signingKey: signerKeys.privateKey,
    signingAlgorithm: signingAlgorithm(signerKeys, hash),
    extensions,
  });
  const keyPem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { cert, pem: `${cert.toString('pem').trimEnd()}\n`, keyPem, keys, signing: signingAlgorithm(keys, hash) };
}

export interface TlsServerOptions {
  /** The leaf's key and the certificates sent: leaf first, then what the server sends after it. */
  key: string;
  chain: string[];
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
  /** OpenSSL cipher list; SECLEVEL=0 so old protocols, SHA-1 and 1024-bit keys work at all. */
  ciphers?: string;
  /** Strict-Transport-Security header of every answer; none when absent. */
  hsts?: string;
  /** The port on 127.0.0.1; 0 (default): any free one. */
  port?: number;
  /** ALPN protocols the server selects from, in its order of preference; none: no ALPN. */
  alpn?: string[];
  /** A DER OCSP response stapled to every handshake whose client asks for one. */
  ocspResponse?: Buffer;
}

export interface TlsServer {
  port: number;
  /** TCP connections accepted so far: one per handshake a client attempted. */
  readonly connections: number;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 answering every request 200 (with HSTS when configured). */
export async function startTlsServer(options: TlsServerOptions): Promise<TlsServer> {
  let connections = 0;
  const server = https.createServer(
    {
      key: options.key,
      cert: options.chain.join(''),
      minVersion: options.minVersion ?? 'TLSv1.2',
      maxVersion: options.maxVersion ?? 'TLSv1.3',
      ciphers: options.ciphers ?? 'DEFAULT:@SECLEVEL=0',
      ALPNProtocols: options.alpn,
    },
    (req, res) => {
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      if (options.hsts) headers['strict-transport-security'] = options.hsts;
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : 'ok\n');
    },
  );
  server.on('connection', () => connections++);
  const stapled = options.ocspResponse;
  if (stapled) server.on('OCSPRequest', (_cert, _issuer, callback) => callback(null, stapled));
  // Probes that offer what this server refuses end in handshake errors: expected, not failures.
  server.on('tlsClientError', () => undefined);
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A TCP listener on a fixed port that pipes each connection to the port it is routed to, so one
 * configured port can reach any scenario's server in turn. `refuse()` stops listening (a closed
 * port); `silence()` accepts connections and never answers (a server that does not speak TLS);
 * `routeFirst()` routes the next connection only and holds every later one silent (a server whose
 * first handshake works and whose later connections hang). With `oneWayDelayMs`, every chunk
 * waits that long in each direction: a remote server's round trip.
 */
export interface PortSwitch {
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  route(targetPort: number): Promise<void>;
  routeFirst(targetPort: number): Promise<void>;
  refuse(): Promise<void>;
  silence(): Promise<void>;
  close(): Promise<void>;
}

/** Copies `from` to `to`, each chunk (and the end) `delayMs` later, in order. */
function delayedPipe(from: net.Socket, to: net.Socket, delayMs: number): void {
  if (delayMs === 0) {
    from.pipe(to);
    return;
  }
  from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), delayMs));
  from.on('end', () => setTimeout(() => to.destroyed || to.end(), delayMs));
}

export async function startPortSwitch(options: { oneWayDelayMs?: number } = {}): Promise<PortSwitch> {
  const delayMs = options.oneWayDelayMs ?? 0;
  let target: number | 'silent' = 'silent';
  let routeOnlyNext = false;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    connections++;
    track(client);
    if (target === 'silent') return;
    const upstream = net.connect(target, '127.0.0.1');
    if (routeOnlyNext) target = 'silent';
    track(upstream);
    delayedPipe(client, upstream, delayMs);
    delayedPipe(upstream, client, delayMs);
    // A side that closes takes the other down once what it sent last has arrived.
    client.on('close', () => setTimeout(() => upstream.destroy(), delayMs));
    upstream.on('close', () => setTimeout(() => client.destroy(), delayMs));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const listen = async () => {
    if (server.listening) return;
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
  };
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  const switchTo = async (to: number | 'silent', onlyNext = false) => {
    dropAll();
    target = to;
    routeOnlyNext = onlyNext;
    await listen();
  };
  return {
    port,
    get connections() {
      return connections;
    },
    route: (targetPort) => switchTo(targetPort),
    routeFirst: (targetPort) => switchTo(targetPort, true),
    silence: () => switchTo('silent'),
    refuse: async () => {
      dropAll();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
    close: async () => {
      dropAll();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}

const HSTS_ONE_YEAR = 'max-age=31536000; includeSubDomains';
export const HSTS_PRELOAD = 'max-age=63072000; includeSubDomains; preload';
/**
 * A DER OCSPResponse (RFC 6960 4.2.1) whose status is tryLater (3): it carries no signed
 * BasicOCSPResponse, so no client can use it as proof of status.
 */
export const TRY_LATER_OCSP_RESPONSE = Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x03]);

/**
 * What OpenSSL's OCSP responder answers about `leaf` ("good", or revoked a day ago), signed by
 * `issuer`, valid for a day: a request made with `openssl ocsp -reqout`, answered from an index
 * file as the responder does with `-index`, offline.
 */
export function ocspResponse(leaf: Issued, issuer: Issued, status: 'good' | 'revoked' = 'good'): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'webutil-ocsp-'));
  try {
    const file = (name: string, text: string | Buffer) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const asn1Time = (d: Date) => `${d.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`;
    const entry = [
      status === 'good' ? 'V' : 'R',
      asn1Time(leaf.cert.notAfter),
      status === 'good' ? '' : asn1Time(new Date(Date.now() - DAY)),
      leaf.cert.serialNumber.toUpperCase(),
      'unknown',
      `/CN=${leaf.cert.subjectName.getField('CN')[0]}`,
    ];
    const issuerPem = file('issuer.pem', issuer.pem);
    const leafPem = file('leaf.pem', leaf.pem);
    const index = file('index.txt', `${entry.join('\t')}\n`);
    const openssl = (...args: string[]) => execFileSync('openssl', ['ocsp', ...args], { cwd: dir, stdio: 'pipe' });
    openssl('-issuer', issuerPem, '-cert', leafPem, '-no_nonce', '-reqout', 'request.der');
    openssl(
      ...['-index', index, '-CA', issuerPem, '-rsigner', issuerPem, '-rkey', file('issuer.key', issuer.keyPem)],
      ...['-reqin', 'request.der', '-respout', 'response.der', '-ndays', '1'],
    );
    return readFileSync(join(dir, 'response.der'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The scenarios of the SSL scan tests, each an HTTPS server for the name `localhost`. */
export const TLS_SCENARIOS = [
  'good',
  'goodWithoutHsts',
  'shortHsts',
  'tls12Only',
  'tls12WithoutForwardSecrecy',
  'tls10Enabled',
  'missingIntermediate',
  'missingIntermediateNoDownload',
  'untrustedRoot',
  'selfSigned',
  'expired',
  'notYetValid',
  'wrongHost',
  'commonNameMismatch',
  'rsa1024',
  'sha1',
  'legacyOnly',
  'hstsPreload',
  'ocspStapled',
  'ocspStapledTryLater',
  'ocspStapledForAnother',
  'http2',
  'http11',
] as const;
export type TlsScenario = (typeof TLS_SCENARIOS)[number];

export interface TlsScenarios {
  /** PEM file of the test root, for the scanner's extra trusted roots. */
  caFile: string;
  caPem: string;
  /** The fixed port the scanner is pointed at; `use(name)` routes it to a scenario. */
  portSwitch: PortSwitch;
  servers: Record<TlsScenario, TlsServer>;
  /** Where the intermediate can be downloaded (the leaves' authorityInfoAccess URL). */
  intermediateUrl: string;
  use(name: TlsScenario): Promise<void>;
  close(): Promise<void>;
}

/**
 * A test PKI (a trusted RSA root, an EC intermediate, and an unrelated untrusted hierarchy), the
 * intermediate published over HTTP for chain completion, and one server per scenario.
 */
export async function startTlsScenarios(caFile: string): Promise<TlsScenarios> {
  const issuerSite = await startFixtureSite();
  const intermediateUrl = issuerSite.url('/intermediate.cer');
  const root = await issue({ commonName: 'WebUtil Test Root', ca: true, key: 'rsa2048', validDays: [-365, 3650] });
  const intermediate = await issue(
    { commonName: 'WebUtil Test Intermediate', ca: true, validDays: [-365, 1825] },
    root,
  );
  issuerSite.route('/intermediate.cer', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/pkix-cert' });
    res.end(Buffer.from(intermediate.cert.rawData));
  });
  const otherRoot = await issue({ commonName: 'Untrusted Root', ca: true });
  const otherIntermediate = await issue({ commonName: 'Untrusted Intermediate', ca: true }, otherRoot);
  writeFileSync(caFile, root.pem);

  const leaf = (options: Partial<IssueOptions> = {}, issuer: Issued = intermediate) =>
    issue({ commonName: 'localhost', altNames: ['localhost'], caIssuersUrl: intermediateUrl, ...options }, issuer);
  const serve = (cert: Issued, sent: Issued[], options: Partial<TlsServerOptions> = {}) =>
    startTlsServer({ key: cert.keyPem, chain: [cert, ...sent].map((c) => c.pem), hsts: HSTS_ONE_YEAR, ...options });

  const good = await leaf();
  const rsa = await leaf({ key: 'rsa2048' });
  const untrusted = await leaf({ caIssuersUrl: undefined }, otherIntermediate);
  const self = await issue({ commonName: 'localhost', altNames: ['localhost'] });
  const entries: [TlsScenario, Promise<TlsServer>][] = [
    ['good', serve(good, [intermediate])],
    ['goodWithoutHsts', serve(good, [intermediate], { hsts: undefined })],
    ['shortHsts', serve(good, [intermediate], { hsts: 'max-age=86400' })],
    ['tls12Only', serve(good, [intermediate], { maxVersion: 'TLSv1.2' })],
    [
      'tls12WithoutForwardSecrecy',
      serve(rsa, [intermediate], { maxVersion: 'TLSv1.2', ciphers: 'AES256-GCM-SHA384:AES128-GCM-SHA256' }),
    ],
    ['tls10Enabled', serve(good, [intermediate], { minVersion: 'TLSv1' })],
    ['missingIntermediate', serve(good, [])],
    ['missingIntermediateNoDownload', serve(await leaf({ caIssuersUrl: undefined }), [])],
    ['untrustedRoot', serve(untrusted, [otherIntermediate, otherRoot])],
    ['selfSigned', serve(self, [])],
    ['expired', serve(await leaf({ validDays: [-90, -1] }), [intermediate])],
    ['notYetValid', serve(await leaf({ validDays: [2, 90] }), [intermediate])],
    ['wrongHost', serve(await leaf({ commonName: 'other.test', altNames: ['other.test'] }), [intermediate])],
    ['commonNameMismatch', serve(await leaf({ commonName: 'other.test' }), [intermediate])],
    ['rsa1024', serve(await leaf({ key: 'rsa1024' }), [intermediate])],
    ['sha1', serve(await leaf({ hash: 'SHA-1' }), [intermediate])],
    ['legacyOnly', serve(good, [intermediate], { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' })],
    ['hstsPreload', serve(good, [intermediate], { hsts: HSTS_PRELOAD })],
    ['ocspStapled', serve(good, [intermediate], { ocspResponse: ocspResponse(good, intermediate) })],
    // Signed by the intermediate, about another certificate: the staple proves nothing.
    ['ocspStapledForAnother', serve(good, [intermediate], { ocspResponse: ocspResponse(rsa, intermediate) })],
    ['ocspStapledTryLater', serve(good, [intermediate], { ocspResponse: TRY_LATER_OCSP_RESPONSE })],
    ['http2', serve(good, [intermediate], { alpn: ['h2', 'http/1.1'] })],
    ['http11', serve(good, [intermediate], { alpn: ['http/1.1'] })],
  ];
  const servers = Object.fromEntries(
    await Promise.all(entries.map(async ([name, server]) => [name, await server] as const)),
  ) as Record<TlsScenario, TlsServer>;
  const portSwitch = await startPortSwitch();
  return {
    caFile,
    caPem: root.pem,
    portSwitch,
    servers,
    intermediateUrl,
    use: (name) => portSwitch.route(servers[name].port),
    close: async () => {
      await portSwitch.close();
      await Promise.all(Object.values(servers).map((s) => s.close()));
      await issuerSite.close();
    },
  };
}
