import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { startTlsScenarios, TLS_SCENARIOS, type TlsScenario, type TlsScenarios } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { creditsHeader, type Envelope, expectFailure, json } from './billing-helpers.js';

const GRADE_ORDER = ['A+', 'A', 'B', 'C', 'D', 'E', 'F'];
const HEX_PAIRS = (bytes: number) => new RegExp(`^([0-9A-F]{2}:){${bytes - 1}}[0-9A-F]{2}$`);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('GET /v1/ssl-scan, through the REST edge', function () {
  this.timeout(90_000);
  let dir: string;
  let tls: TlsScenarios;
  let plain: FixtureSite;
  let dns: FixtureDns; // answers the CAA lookups
  let open: TestStack; // loopback allowed, the scanner pointed at the port switch, the test root trusted
  let strict: TestStack; // default policy: loopback refused

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ssl-scan-'));
    [tls, plain, dns] = await Promise.all([
      startTlsScenarios(path.join(dir, 'root.pem')),
      startFixtureSite(),
      startFixtureDns(),
    ]);
    dns.setCaa('localhost', [
      { tag: 'issue', value: 'letsencrypt.org' },
      { tag: 'iodef', value: 'mailto:security@localhost', critical: true },
    ]);
    const scanner = {
      SSL_SCAN_DNS_SERVERS: dns.server,
      SSL_SCAN_PORT: String(tls.portSwitch.port),
      SSL_SCAN_EXTRA_CA_FILE: tls.caFile,
      SSL_SCAN_HANDSHAKE_TIMEOUT_MS: '2000',
      SSL_SCAN_PROBE_TIMEOUT_MS: '2000',
    };
    [open, strict] = await Promise.all([
      startTestStack({ allowTargets: '127.0.0.0/8', envFor: { 'tls-scan': scanner } }),
      startTestStack({ envFor: { 'tls-scan': scanner } }),
    ]);
  });
  after(async () => {
    await Promise.all([open?.stop(), strict?.stop()]);
    await Promise.all([tls?.close(), plain?.close(), dns?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const scan = async (stack: TestStack, domain: string, query = '') =>
    stack.api(`/v1/ssl-scan?domain=${encodeURIComponent(domain)}${query}`);
  const codes = (data: any) => data.gradeReasons.map((r: { code: string }) => r.code);
  const support = (data: any) => data.protocols.map((p: { supported: boolean | null }) => p.supported);

  /** Scans `localhost` with the switch routed to a scenario's server. */
  async function scanScenario(name: TlsScenario): Promise<any> {
    await tls.use(name);
    return scanScenarioAsIs();
  }

  /** Scans `localhost` wherever the switch is routed now; a 200 with the result. */
  async function scanScenarioAsIs(): Promise<any> {
    const res = await scan(open, 'localhost');
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.success).to.equal(true);
    return body.data;
  }

  const grades: Partial<Record<TlsScenario, string>> = {};
  const graded = async (name: TlsScenario) => {
    const data = await scanScenario(name);
    grades[name] = data.securityGrade;
    return data;
  };

  describe('a well-configured server', () => {
    it('reports every field of the spec, with a trusted, complete chain and A+', async () => {
      const data = await graded('good');
      expect(data).to.have.all.keys(
        'domain',
        'port',
        'protocol',
        'certificate',
        'chain',
        'isValid',
        'daysUntilExpiry',
        'isExpired',
        'certValidations',
        'tlsVersion',
        'cipherSuite',
        'securityGrade',
        'score',
        'protocols',
        'gradeReasons',
        'hsts',
        'ocspStapling',
        'keyExchange',
        'caa',
        'ipAddress',
        'alpn',
        'scoreAreas',
        'hstsStatus',
        'trustMarker',
        'gradeIgnoringTrust',
        'cipherSuites',
        'namedGroups',
        'signatureAlgorithms',
        'cipherNotes',
        'vulnerabilities',
        'timings',
        'fast',
        'certificateTransparency',
        'revocation',
      );
      expect(data).to.include({ hstsStatus: 'honoured', trustMarker: null, gradeIgnoringTrust: null });
      // SSL Labs' bars: P-256 and X25519 count as 3072 bits (90); AES-128 and AES-256 average 90.
      expect(data.scoreAreas).to.deep.equal({
        certificate: 100,
        protocolSupport: 100,
        keyExchange: 90,
        cipherStrength: 90,
      });
      expect(data.domain).to.equal('localhost');
      expect(data.port).to.equal(tls.portSwitch.port);
      expect(data.protocol).to.equal('TLSv1.3');
      expect(data.tlsVersion).to.equal(data.protocol);
      expect(data.cipherSuite).to.match(/^TLS_(AES_(128|256)_GCM|CHACHA20_POLY1305)_SHA(256|384)$/);
      const cert = data.certificate;
      expect(cert).to.have.all.keys(
        'subject',
        'issuer',
        'valid_from',
        'valid_to',
        'fingerprint',
        'fingerprint256',
        'serialNumber',
        'altNames',
        'keySize',
        'sigalg',
      );
      expect(cert.subject).to.deep.equal({ CN: 'localhost', O: 'WebUtil Test' });
      expect(cert.issuer).to.deep.equal({ CN: 'WebUtil Test Intermediate', O: 'WebUtil Test' });
      expect(cert.valid_from).to.match(ISO);
      expect(cert.valid_to).to.match(ISO);
      expect(cert.fingerprint).to.match(HEX_PAIRS(20));
      expect(cert.fingerprint256).to.match(HEX_PAIRS(32));
      expect(cert.serialNumber).to.match(/^[0-9A-F]+$/);
      expect(cert.altNames).to.deep.equal(['localhost']);
      expect(cert.keySize).to.equal(256);
      expect(cert.sigalg).to.equal('ecdsa-with-SHA256');
      // The intermediate the server sent, then the root from the trust store; neither has key or sigalg.
      expect(data.chain.map((c: any) => c.subject.CN)).to.deep.equal([
        'WebUtil Test Intermediate',
        'WebUtil Test Root',
      ]);
      for (const c of data.chain) expect(c).to.not.have.any.keys('keySize', 'sigalg');
      expect(data.chain[1].subject).to.deep.equal(data.chain[1].issuer);
      expect(data.isValid).to.equal(true);
      expect(data.isExpired).to.equal(false);
      expect(data.daysUntilExpiry).to.be.within(58, 60);
      expect(data.certValidations).to.deep.equal({
        selfSigned: false,
        chainComplete: true,
        trustedCert: true,
        commonNameValid: true,
        sanValid: true,
      });
      expect(data.securityGrade).to.equal('A+');
      expect(data.score).to.be.within(80, 100);
      expect(data.protocols).to.deep.equal([
        { version: 'TLSv1', supported: false },
        { version: 'TLSv1.1', supported: false },
        { version: 'TLSv1.2', supported: true },
        { version: 'TLSv1.3', supported: true },
      ]);
      // An A+ short of 100: P-256 and X25519 count as 3072 bits, AES-128 is accepted beside AES-256.
      expect(data.gradeReasons).to.deep.equal([
        {
          code: 'key_exchange_strength',
          message:
            'key exchange: 3072-bit RSA-equivalent, the weaker of the certificate key 256-bit EC (prime256v1) ' +
            'and the exchange X25519 (ECDH) (4096 for full marks)',
          effect: '-3 points: key exchange scores 90 of 100 (weight 30 %)',
        },
        {
          code: 'cipher_strength',
          message:
            'cipher strength: the weakest suite accepted has 128-bit encryption, ' +
            'the strongest 256-bit (256 for full marks)',
          effect: '-4 points: cipher strength scores 90 of 100 (weight 40 %)',
        },
      ]);
      expect(data.score).to.equal(93);
      expect(data.hsts).to.deep.equal({ maxAge: 31_536_000, includeSubDomains: true, preload: false });
      expect(data.ocspStapling).to.equal(false);
      expect(data.keyExchange).to.deep.equal({ type: 'ECDH', name: 'X25519', size: 253 });
      expect(data.caa).to.deep.equal({
        domain: 'localhost',
        records: [
          { critical: false, tag: 'issue', value: 'letsencrypt.org' },
          { critical: true, tag: 'iodef', value: 'mailto:security@localhost' },
        ],
      });
      expect(data.ipAddress).to.equal('127.0.0.1');
      // The fixture's HTTPS server offers no ALPN.
      expect(data.alpn).to.deep.equal([]);
    });

    it('reads the CAA records of the closest parent that has them', async () => {
      await tls.use('good');
      const res = await scan(open, 'www.localhost');
      const data = (await json(res)).data;
      expect(data.caa.domain).to.equal('localhost');
      expect(data.caa.records).to.have.length(2);
      // The certificate names only localhost: the grade says why it fails.
      expect(codes(data)).to.include('cert_name_mismatch');
      expect(data.securityGrade).to.equal('F');
    });

    it('is an A without HSTS, and with an HSTS max-age under 180 days', async () => {
      const without = await graded('goodWithoutHsts');
      expect(without.securityGrade).to.equal('A');
      expect(without.hsts).to.equal(null);
      expect(without.gradeReasons[0]).to.deep.equal({
        code: 'no_hsts',
        message: 'no Strict-Transport-Security header with a max-age',
        effect: 'A+ needs HSTS with max-age ≥ 6 months (15552000 s)',
      });
      const short = await graded('shortHsts');
      expect(short.securityGrade).to.equal('A');
      expect(short.hsts).to.deep.equal({ maxAge: 86_400, includeSubDomains: false, preload: false });
      expect(codes(short)).to.deep.equal(['hsts_short', 'key_exchange_strength', 'cipher_strength']);
      expect(without.isValid).to.equal(true);
    });

    it('parses an HSTS header with preload', async () => {
      const data = await graded('hstsPreload');
      expect(data.hsts).to.deep.equal({ maxAge: 63_072_000, includeSubDomains: true, preload: true });
      expect(data.securityGrade).to.equal('A+');
    });

    it('sees a stapled OCSP response that OpenSSL’s responder signed', async () => {
      const data = await graded('ocspStapled');
      expect(data.ocspStapling).to.equal(true);
      expect(data.securityGrade).to.equal('A+');
    });

    it('does not count a staple no client can use: about another certificate, or tryLater', async () => {
      expect((await graded('ocspStapledForAnother')).ocspStapling).to.equal(false);
      expect((await graded('ocspStapledTryLater')).ocspStapling).to.equal(false);
    });

    it('lists the application protocols the server selects: h2 and http/1.1, or http/1.1 alone', async () => {
      expect((await graded('http2')).alpn).to.deep.equal(['h2', 'http/1.1']);
      expect((await graded('http11')).alpn).to.deep.equal(['http/1.1']);
    });

    it('gives TLS 1.2 with forward secrecy and HSTS an A+ too', async () => {
      const data = await graded('tls12Only');
      expect(data.protocol).to.equal('TLSv1.2');
      expect(data.cipherSuite).to.match(/^TLS_ECDHE_ECDSA_WITH_/);
      expect(data.securityGrade).to.equal('A+');
    });

    it('caps TLS 1.2 without forward secrecy at B', async () => {
      const data = await graded('tls12WithoutForwardSecrecy');
      expect(data.cipherSuite).to.match(/^TLS_RSA_WITH_AES_/);
      expect(data.keyExchange).to.equal(null);
      expect(codes(data)[0]).to.equal('no_forward_secrecy');
      expect(data.certificate.keySize).to.equal(2048);
      expect(data.certificate.sigalg).to.equal('ecdsa-with-SHA256');
      expect(data.securityGrade).to.equal('B');
      expect(data.score).to.be.within(65, 79);
    });

    it('caps a server that still accepts TLS 1.0 at B, though it negotiates TLS 1.3', async () => {
      const data = await graded('tls10Enabled');
      expect(data.protocol).to.equal('TLSv1.3');
      expect(data.isValid).to.equal(true);
      expect(data.securityGrade).to.equal('B');
      expect(support(data)).to.deep.equal([true, true, true, true]);
      expect(data.gradeReasons[0]).to.deep.equal({
        code: 'legacy_protocol',
        message: 'TLS 1.0 and TLS 1.1 are still accepted',
        effect: 'grade capped at B (score at most 79)',
      });
      expect(codes(data)).to.include('protocol_support');
    });

    it('caps a server that speaks only TLS 1.0 and 1.1 at C', async () => {
      const data = await graded('legacyOnly');
      expect(data.protocol).to.equal('TLSv1.1');
      expect(support(data)).to.deep.equal([true, true, false, false]);
      expect(codes(data).slice(0, 2)).to.deep.equal(['no_tls12', 'legacy_protocol']);
      expect(data.securityGrade).to.equal('C');
      // HSTS is read over the TLS 1.1 the server speaks.
      expect(data.hsts).to.deep.equal({ maxAge: 31_536_000, includeSubDomains: true, preload: false });
      expect(data.hstsStatus).to.equal('honoured');
      expect(codes(data)).to.not.include('no_hsts');
    });

    it('scans the port asked for, and echoes it', async () => {
      await tls.portSwitch.refuse(); // the configured port answers nothing: only the asked one can
      const port = tls.servers.hstsPreload.port;
      const res = await scan(open, 'localhost', `&port=${port}`);
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body.data.port).to.equal(port);
      // HSTS is read from https://localhost:<port>/ too.
      expect(body.data.hsts).to.deep.equal({ maxAge: 63_072_000, includeSubDomains: true, preload: true });
      expect(body.data.securityGrade).to.equal('A+');
    });
  });

  describe('certificate problems', () => {
    it('completes a chain missing its intermediate from the issuer URL: trusted, incomplete, B', async () => {
      const data = await graded('missingIntermediate');
      expect(data.certValidations).to.include({ chainComplete: false, trustedCert: true, sanValid: true });
      expect(data.certValidations.chainIssueDescription).to.match(/does not send the intermediate certificate/);
      expect(data.chain.map((c: any) => c.subject.CN)).to.deep.equal([
        'WebUtil Test Intermediate',
        'WebUtil Test Root',
      ]);
      expect(data.isValid).to.equal(false);
      expect(data.securityGrade).to.equal('B');
    });

    it('fails a missing intermediate that cannot be downloaded: untrusted, F', async () => {
      const data = await graded('missingIntermediateNoDownload');
      expect(data.certValidations).to.include({ chainComplete: false, trustedCert: false });
      expect(data.certValidations.chainIssueDescription).to.match(/the server did not send and is not a trusted root/);
      expect(data.chain).to.deep.equal([]);
      expect(data.securityGrade).to.equal('F');
    });

    it('reads a chain to an untrusted root in full and fails it', async () => {
      const data = await graded('untrustedRoot');
      expect(data.chain.map((c: any) => c.subject.CN)).to.deep.equal(['Untrusted Intermediate', 'Untrusted Root']);
      expect(data.certValidations).to.include({ selfSigned: false, chainComplete: true, trustedCert: false });
      expect(data.certValidations.chainIssueDescription).to.match(/"Untrusted Root", which is not a trusted root/);
      expect(data.isValid).to.equal(false);
      expect(data.securityGrade).to.equal('F');
      expect(data.score).to.be.below(20);
    });

    it('flags a self-signed certificate', async () => {
      const data = await graded('selfSigned');
      expect(data.certValidations).to.include({ selfSigned: true, trustedCert: false, sanValid: true });
      expect(data.certValidations.chainIssueDescription).to.match(/self-signed/);
      expect(data.certificate.subject).to.deep.equal(data.certificate.issuer);
      expect(data.chain).to.deep.equal([]);
      expect(data.securityGrade).to.equal('F');
      expect(data.gradeReasons[0].message).to.match(/^the certificate is not trusted: .*self-signed/);
      // The header was read; browsers ignore it over this certificate. SSL Labs' T beside the grade it would get.
      expect(data.hstsStatus).to.equal('ignored');
      expect(data.hsts).to.deep.equal({ maxAge: 31_536_000, includeSubDomains: true, preload: false });
      expect(data).to.include({ trustMarker: 'T', gradeIgnoringTrust: 'A+' });
    });

    it('reports an expired certificate with negative days left', async () => {
      const data = await graded('expired');
      expect(data.isExpired).to.equal(true);
      expect(data.daysUntilExpiry).to.be.within(-2, -1);
      expect(data.isValid).to.equal(false);
      expect(data.certValidations.trustedCert).to.equal(true);
      // Dates are not a chain problem: the spec reports them in isExpired and daysUntilExpiry.
      expect(data.certValidations).to.not.have.property('chainIssueDescription');
      expect(data.securityGrade).to.equal('F');
      expect(data).to.include({ hstsStatus: 'ignored', trustMarker: 'T', gradeIgnoringTrust: 'A+' });
    });

    it('reports a certificate that is not valid yet', async () => {
      const data = await graded('notYetValid');
      expect(data.isExpired).to.equal(false);
      expect(data.isValid).to.equal(false);
      expect(new Date(data.certificate.valid_from).getTime()).to.be.above(Date.now());
      expect(data.certValidations).to.not.have.property('chainIssueDescription');
      expect(data.securityGrade).to.equal('F');
    });

    it('reports a certificate for another host', async () => {
      const data = await graded('wrongHost');
      expect(data.certificate.altNames).to.deep.equal(['other.test']);
      expect(data.certValidations).to.include({ commonNameValid: false, sanValid: false, trustedCert: true });
      expect(data.certValidations).to.not.have.property('chainIssueDescription');
      expect(data.isValid).to.equal(false);
      expect(data.securityGrade).to.equal('F');
      expect(data).to.include({ trustMarker: 'M', gradeIgnoringTrust: 'A+' });
    });

    it('is invalid when only the subjectAltName names the host, though browsers and the grade accept it', async () => {
      const data = await graded('commonNameMismatch');
      expect(data.certificate.subject.CN).to.equal('other.test');
      expect(data.certificate.altNames).to.deep.equal(['localhost']);
      expect(data.certValidations).to.deep.equal({
        selfSigned: false,
        chainComplete: true,
        trustedCert: true,
        commonNameValid: false,
        sanValid: true,
      });
      // The spec: isValid only when every validation passes, commonNameValid included.
      expect(data.isValid).to.equal(false);
      expect(data.securityGrade).to.equal('A+');
    });

    it('caps a 1024-bit RSA key at B', async () => {
      const data = await graded('rsa1024');
      expect(data.certificate.keySize).to.equal(1024);
      expect(data.isValid).to.equal(true);
      expect(data.securityGrade).to.equal('B');
      // The certificate key is weak, not the X25519 exchange: the reason names each.
      expect(data.keyExchange.name).to.equal('X25519');
      expect(data.gradeReasons[0]).to.include({
        code: 'key_under_2048',
        message: 'the certificate key is 1024-bit RSA (1024-bit RSA-equivalent), under 2048 bits',
      });
    });

    it('fails a certificate signed with SHA-1', async () => {
      const data = await graded('sha1');
      expect(data.certificate.sigalg).to.equal('ecdsa-with-SHA1');
      expect(data.certValidations.trustedCert).to.equal(false);
      expect(data.certValidations.chainIssueDescription).to.match(/signed with ecdsa-with-SHA1/);
      expect(data.securityGrade).to.equal('F');
    });

    it('orders the grades: A+ best configured, B for weaker setups, F for untrustworthy certificates', () => {
      const rank = (name: TlsScenario) => GRADE_ORDER.indexOf(grades[name] ?? 'missing');
      const scenarios = Object.keys(grades) as TlsScenario[];
      expect(scenarios).to.have.length(TLS_SCENARIOS.length);
      for (const best of ['good', 'tls12Only'] as const) {
        for (const other of scenarios) expect(rank(best)).to.be.at.most(rank(other), `${best} vs ${other}`);
      }
      for (const weaker of ['tls10Enabled', 'missingIntermediate', 'rsa1024', 'tls12WithoutForwardSecrecy'] as const) {
        expect(rank(weaker)).to.be.above(rank('goodWithoutHsts'), weaker);
        for (const bad of ['expired', 'selfSigned', 'untrustedRoot', 'wrongHost', 'sha1'] as const) {
          expect(rank(weaker)).to.be.below(rank(bad), `${weaker} vs ${bad}`);
        }
      }
    });
  });

  describe('protocol probes', () => {
    it('run at once, each within its timeout: probes that hang cost one probe timeout, not their sum', async () => {
      // The main connection reaches the good server; every later one (the probes) is accepted and hangs.
      await tls.portSwitch.routeFirst(tls.servers.good.port);
      const accepted = tls.portSwitch.connections;
      const started = Date.now();
      const res = await scan(open, 'localhost', '&fast=true');
      const data = (await json(res)).data;
      const elapsed = Date.now() - started;
      // TLS 1.0, 1.1 and 1.2, NULL/anonymous and the 128-bit class: five probes of 2 s each, and the HSTS request.
      expect(tls.portSwitch.connections - accepted).to.equal(7);
      expect(elapsed).to.be.at.least(2_000);
      // Liveness bound: one probe timeout plus room for a loaded machine, well under the 10 s of five in a row.
      expect(elapsed).to.be.below(6_000);
      // A probe that timed out could not tell: only the main handshake's TLS 1.3 is known, and no HSTS came.
      expect(data.protocol).to.equal('TLSv1.3');
      expect(support(data)).to.deep.equal([null, null, null, true]);
      expect(data.hsts).to.equal(null);
      expect(data.securityGrade).to.equal('A');
    });
  });

  describe('credits and aliases', () => {
    it('spends 1 credit per scan, nothing on a failure, and is served under /api/v1 too', async () => {
      await tls.use('good');
      const before = creditsHeader(await open.api('/v1/quota'));
      const ok = await open.api('/api/v1/ssl-scan?domain=localhost');
      expect((await json(ok)).data.securityGrade).to.equal('A+');
      expect(creditsHeader(ok)).to.equal(before - 1);
      const failed = await scan(open, 'no-such-host.invalid');
      await expectFailure(failed, 400, 'target_unreachable');
      expect(creditsHeader(failed)).to.equal(before - 1);
    });
  });

  describe('bad input and unreachable targets: 400 with the reason', () => {
    for (const port of ['0', '65536', 'abc', '1.5', '-1', '', '443 ']) {
      it(`refuses port=${JSON.stringify(port)} before spending anything`, async () => {
        const before = creditsHeader(await open.api('/v1/quota'));
        const res = await scan(open, 'localhost', `&port=${encodeURIComponent(port)}`);
        const body = await expectFailure(res, 400, 'invalid_request');
        expect(body.error?.message).to.match(/^port /);
        expect(creditsHeader(await open.api('/v1/quota'))).to.equal(before);
      });
    }

    it('requires domain', async () => {
      const body = await expectFailure(await open.api('/v1/ssl-scan'), 400, 'invalid_request');
      expect(body.error?.message).to.equal('domain is required');
    });

    for (const [domain, why] of [
      ['https://localhost', /remove the scheme/],
      ['localhost/path', /remove the path/],
      ['localhost?x=1', /remove the path/],
      [`localhost:${443}`, /remove the port/],
      ['user@localhost', /remove the user name/],
      ['exa mple.com', /characters a host name cannot have/],
      ['*.example.com', /not a valid host name/],
    ] as const) {
      it(`refuses ${JSON.stringify(domain)}`, async () => {
        const body = await expectFailure(await scan(open, domain), 400, 'invalid_domain');
        expect(body.error?.message).to.match(why);
      });
    }

    // Network failures in the kit's one wording, shared by every route: what happened, then the code once.
    it('reports a name that does not resolve', async () => {
      const body = await expectFailure(await scan(open, 'no-such-host.invalid'), 400, 'target_unreachable');
      expect(body.error?.message).to.equal('the host name does not resolve (ENOTFOUND)');
    });

    it('reports a closed port', async () => {
      await tls.portSwitch.refuse();
      const body = await expectFailure(await scan(open, 'localhost'), 400, 'target_unreachable');
      expect(body.error?.message).to.equal('the connection was refused (ECONNREFUSED)');
    });

    it('reports a server that speaks HTTP, not TLS', async () => {
      await tls.portSwitch.route(plain.port);
      const body = await expectFailure(await scan(open, 'localhost'), 400, 'tls_handshake_failed');
      expect(body.error?.message).to.equal(
        `TLS error: the server on port ${tls.portSwitch.port} does not speak TLS (ERR_SSL_WRONG_VERSION_NUMBER)`,
      );
    });

    it('gives up on a server that accepts the connection and never speaks, at the handshake deadline', async () => {
      await tls.portSwitch.silence();
      const started = Date.now();
      const body = await expectFailure(await scan(open, 'localhost'), 400, 'tls_handshake_failed');
      expect(body.error?.message).to.equal(
        'TLS error: the server accepted the connection but sent no TLS handshake within 2 s (ETIMEDOUT)',
      );
      expect(Date.now() - started).to.be.below(20_000); // liveness bound, 10x the configured deadline
    });

    for (const domain of ['localhost', '127.0.0.1', '127.1', '0x7f000001', '[::1]', '::1']) {
      it(`refuses the loopback target ${domain} under the default policy`, async () => {
        await tls.use('good');
        const body: Envelope = await expectFailure(await scan(strict, domain), 400, 'target_blocked');
        expect(body.error?.message).to.match(/private or reserved address, which is not fetched \(ETARGETBLOCKED\)$/);
        // A name's resolved address is not told: that would map the inside of our network.
        if (domain === 'localhost') expect(body.error?.message).to.not.match(/127\.0\.0\.1|::1/);
      });
    }
  });
});
