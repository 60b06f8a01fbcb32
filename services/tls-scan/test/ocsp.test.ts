import { X509Certificate } from 'node:crypto';
import { type Issued, issue, ocspResponse, TRY_LATER_OCSP_RESPONSE } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { usableStaple } from '../src/ocsp.js';

describe('a stapled OCSP response, judged', function () {
  this.timeout(30_000);
  let root: Issued;
  let intermediate: Issued;
  let leaf: Issued;
  let other: Issued;
  const x509 = (issued: Issued) => new X509Certificate(issued.pem);

  before(async () => {
    root = await issue({ commonName: 'Root', ca: true, key: 'rsa2048' });
    intermediate = await issue({ commonName: 'Intermediate', ca: true }, root);
    leaf = await issue({ commonName: 'localhost', altNames: ['localhost'] }, intermediate);
    other = await issue({ commonName: 'localhost', altNames: ['localhost'] }, intermediate);
  });

  it("counts the issuer's signed answer about this certificate, good or revoked", () => {
    const now = new Date();
    expect(usableStaple(ocspResponse(leaf, intermediate), x509(leaf), x509(intermediate), now)).to.equal(true);
    const revoked = ocspResponse(leaf, intermediate, 'revoked');
    expect(usableStaple(revoked, x509(leaf), x509(intermediate), now)).to.equal(true);
  });

  it('refuses an answer about another certificate, from another signer, out of date, or not signed', () => {
    const answer = ocspResponse(leaf, intermediate);
    const now = new Date();
    expect(usableStaple(answer, x509(other), x509(intermediate), now)).to.equal(false);
    expect(usableStaple(answer, x509(leaf), x509(root), now)).to.equal(false);
    expect(usableStaple(answer, x509(leaf), x509(intermediate), new Date(Date.now() + 3 * 86_400_000))).to.equal(false);
    expect(usableStaple(TRY_LATER_OCSP_RESPONSE, x509(leaf), x509(intermediate), now)).to.equal(false);
    expect(usableStaple(Buffer.from('not DER'), x509(leaf), x509(intermediate), now)).to.equal(false);
    expect(usableStaple(null, x509(leaf), x509(intermediate), now)).to.equal(false);
  });
});
