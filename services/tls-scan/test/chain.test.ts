import { type Issued, issue } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { type CertificateFacts, nameMatches, readCertificate } from '../src/certificate.js';
import { type ChainVerdict, splitPem, TrustStore, verifyChain } from '../src/chain.js';

const facts = (issued: Issued): CertificateFacts => readCertificate(Buffer.from(issued.cert.rawData));

describe('certificate chains', function () {
  this.timeout(20_000);
  let root: Issued;
  let intermediate: Issued;
  let store: TrustStore;

  /** Verifies what a server sent (leaf first); these leaves name no issuer URL, so nothing is downloaded. */
  const verify = (leaf: Issued, ...others: Issued[]): Promise<ChainVerdict> =>
    verifyChain([facts(leaf), ...others.map(facts)], {
      store,
      now: new Date(),
      download: () => Promise.reject(new Error('no certificate of these tests names an issuer URL')),
    });
  const names = (verdict: ChainVerdict) => verdict.path.map((l) => `${l.facts.subject.CN} (${l.origin})`);

  before(async () => {
    root = await issue({ commonName: 'Root', ca: true });
    intermediate = await issue({ commonName: 'Intermediate', ca: true }, root);
    store = new TrustStore([root.pem]);
  });

  it('follows the sent intermediate to the trusted root', async () => {
    const verdict = await verify(await issue({ commonName: 'leaf' }, intermediate), intermediate);
    expect(names(verdict)).to.deep.equal(['leaf (sent)', 'Intermediate (sent)', 'Root (trust store)']);
    expect(verdict).to.include({ selfSigned: false, complete: true, trusted: true });
    expect(verdict.problems).to.deep.equal([]);
  });

  it('ignores the order and duplicates of what was sent, and a trusted root sent along', async () => {
    const leaf = await issue({ commonName: 'leaf' }, intermediate);
    const verdict = await verify(leaf, root, intermediate, intermediate);
    expect(names(verdict)).to.deep.equal(['leaf (sent)', 'Intermediate (sent)', 'Root (sent)']);
    expect(verdict).to.include({ complete: true, trusted: true });
  });

  it('finds a missing intermediate nowhere without an issuer URL: incomplete and untrusted', async () => {
    const verdict = await verify(await issue({ commonName: 'leaf' }, intermediate));
    expect(names(verdict)).to.deep.equal(['leaf (sent)']);
    expect(verdict).to.include({ complete: false, trusted: false });
    expect(verdict.problems).to.deep.equal([
      'the chain ends at "leaf", whose issuer "Intermediate" the server did not send and is not a trusted root',
    ]);
  });

  it('tells a self-signed certificate', async () => {
    const verdict = await verify(await issue({ commonName: 'self' }));
    expect(verdict).to.include({ selfSigned: true, complete: true, trusted: false });
    expect(verdict.problems[0]).to.match(/self-signed/);
  });

  it('trusts a self-signed certificate that is itself a trusted root', async () => {
    const verdict = await verify(root);
    expect(verdict).to.include({ selfSigned: true, trusted: true });
  });

  it('reads a complete chain to another root as untrusted', async () => {
    const otherRoot = await issue({ commonName: 'Other Root', ca: true });
    const verdict = await verify(await issue({ commonName: 'leaf' }, otherRoot), otherRoot);
    expect(verdict).to.include({ complete: true, trusted: false });
    expect(verdict.problems).to.deep.equal(['the chain ends at the root "Other Root", which is not a trusted root']);
  });

  it('distrusts SHA-1 signatures below the root, an expired issuer and an issuer that is not a CA', async () => {
    const sha1 = await verify(await issue({ commonName: 'leaf', hash: 'SHA-1' }, intermediate), intermediate);
    expect(sha1.trusted).to.equal(false);
    expect(sha1.problems).to.deep.equal(['"leaf" is signed with ecdsa-with-SHA1, which browsers no longer accept']);

    const old = await issue({ commonName: 'Old Intermediate', ca: true, validDays: [-30, -1] }, root);
    const expired = await verify(await issue({ commonName: 'leaf' }, old), old);
    expect(expired.trusted).to.equal(false);
    expect(expired.problems[0]).to.match(/^the issuing certificate "Old Intermediate" is valid only from/);

    const notCa = await issue({ commonName: 'Not a CA' }, root);
    const misissued = await verify(await issue({ commonName: 'leaf' }, notCa), notCa);
    expect(misissued.trusted).to.equal(false);
    expect(misissued.problems).to.include('"Not a CA" signs "leaf" but is not a CA certificate');
  });

  it('names RSASSA-PSS signatures with their hash, and distrusts a SHA-1 one', async () => {
    const pssRoot = await issue({ commonName: 'PSS Root', ca: true, key: 'rsaPss' });
    const pss = await verify(await issue({ commonName: 'leaf' }, pssRoot), pssRoot);
    expect(pss.path[0]?.facts).to.include({ sigalg: 'rsassaPss (sha256)', weakSignature: false });
    expect(pss).to.include({ complete: true, trusted: false }); // an untrusted root, but a sound signature
    expect(pss.problems).to.deep.equal(['the chain ends at the root "PSS Root", which is not a trusted root']);

    const sha1Root = await issue({ commonName: 'PSS SHA-1 Root', ca: true, key: 'rsaPss', hash: 'SHA-1' });
    const sha1 = await verify(await issue({ commonName: 'leaf', hash: 'SHA-1' }, sha1Root), sha1Root);
    expect(sha1.path[0]?.facts).to.include({ sigalg: 'rsassaPss (sha1)', weakSignature: true });
    expect(sha1.problems).to.include('"leaf" is signed with rsassaPss (sha1), which browsers no longer accept');
  });
});

describe('PEM bundles', function () {
  this.timeout(20_000);

  it('splits certificates out of surrounding text', async () => {
    const [a, b] = await Promise.all([issue({ commonName: 'a' }), issue({ commonName: 'b' })]);
    expect(splitPem(`junk\n${a.pem}between\n${b.pem}-----BEGIN CERTIFICATE-----\nunterminated`)).to.deep.equal([
      a.pem.trimEnd(),
      b.pem.trimEnd(),
    ]);
    expect(splitPem('no certificate here')).to.deep.equal([]);
  });

  it('reads a hostile body in linear time: half a megabyte of BEGIN lines without an END', () => {
    const hostile = '-----BEGIN CERTIFICATE-----\n'.repeat(20_000);
    const started = performance.now();
    expect(splitPem(hostile)).to.deep.equal([]);
    expect(splitPem(`${hostile}-----END CERTIFICATE-----`)).to.have.length(1);
    // Liveness bound: one pass takes a millisecond; a lazy regex retried from each BEGIN took 12 s here.
    expect(performance.now() - started).to.be.below(2_000);
  });
});

describe('certificate facts', function () {
  this.timeout(20_000);

  it('reads names, keys and the signature algorithm', async () => {
    const root = await issue({ commonName: 'Root', ca: true, key: 'rsa2048' });
    const leaf = facts(await issue({ commonName: 'www.example.test', altNames: ['*.example.test', '10.0.0.1'] }, root));
    expect(leaf.subject).to.deep.equal({ CN: 'www.example.test', O: 'WebUtil Test' });
    expect(leaf.issuer).to.deep.equal({ CN: 'Root', O: 'WebUtil Test' });
    expect(leaf.dnsNames).to.deep.equal(['*.example.test']);
    expect(leaf.ipAddresses).to.deep.equal(['10.0.0.1']);
    expect(leaf).to.include({
      keyBits: 256,
      keyStrength: 3072,
      sigalg: 'sha256WithRSAEncryption',
      weakSignature: false,
    });
    expect(facts(root)).to.include({ keyBits: 2048, keyStrength: 2048 });
    expect(nameMatches(leaf, 'www.example.test')).to.deep.equal({ san: true, commonName: true });
    expect(nameMatches(leaf, 'api.example.test')).to.deep.equal({ san: true, commonName: false });
    expect(nameMatches(leaf, 'a.b.example.test')).to.deep.equal({ san: false, commonName: false });
    expect(nameMatches(leaf, '10.0.0.1')).to.deep.equal({ san: true, commonName: false });
  });

  it('matches nothing by SAN when there is no subjectAltName, whatever the CN says', async () => {
    const legacy = facts(await issue({ commonName: 'legacy.example.test' }));
    expect(nameMatches(legacy, 'legacy.example.test')).to.deep.equal({ san: false, commonName: true });
  });
});
