import { expect } from 'chai';
import { type GradeInput, HSTS_A_PLUS_SECONDS, letterOf, rate, rawScore } from '../src/grade.js';
import { cipherBits } from '../src/handshake.js';
import { hstsMaxAge } from '../src/hsts.js';

/** A modern server: TLS 1.2 and 1.3, AES-128 and AES-256, X25519 with a P-256 key, HSTS for a year. */
const modern = (changes: Partial<GradeInput> = {}): GradeInput => ({
  protocols: ['TLSv1.2', 'TLSv1.3'],
  strongestBits: 256,
  weakestBits: 128,
  insecureSuite: false,
  keyExchangeBits: 3072,
  negotiated: { protocol: 'TLSv1.3', forwardSecrecy: true },
  trusted: true,
  chainComplete: true,
  nameMatches: true,
  inDate: true,
  hstsMaxAge: 31_536_000,
  ...changes,
});

describe('SSL grading', () => {
  it('weighs protocol 30 %, key exchange 30 % and cipher 40 %, each the mean of best and worst', () => {
    // protocol (100+100)/2, key exchange 90 (3072 bits), cipher (100+80)/2 = 90
    expect(rawScore(modern())).to.equal(93);
    // TLS 1.0 to 1.3: (100+90)/2 = 95; a 4096-bit key: 100; 256-bit only: 100
    expect(rawScore(modern({ protocols: ['TLSv1', 'TLSv1.3'], keyExchangeBits: 4096, weakestBits: 256 }))).to.equal(99);
    expect(rawScore(modern({ keyExchangeBits: 1024 }))).to.equal(90);
    expect(rawScore(modern({ keyExchangeBits: 512 }))).to.equal(78);
    expect(rawScore(modern({ weakestBits: 0 }))).to.equal(77);
    expect(rawScore(modern({ insecureSuite: true }))).to.equal(66);
  });

  it('maps scores to the guide bands: A 80, B 65, C 50, D 35, E 20', () => {
    const letters = [100, 80, 79, 65, 64, 50, 49, 35, 34, 20, 19, 0].map(letterOf);
    expect(letters).to.deep.equal(['A', 'A', 'B', 'B', 'C', 'C', 'D', 'D', 'E', 'E', 'F', 'F']);
  });

  it('gives A+ to an A with TLS 1.3 (or 1.2 with forward secrecy) and HSTS of at least 180 days', () => {
    expect(rate(modern()).grade).to.equal('A+');
    expect(rate(modern({ hstsMaxAge: HSTS_A_PLUS_SECONDS })).grade).to.equal('A+');
    expect(rate(modern({ hstsMaxAge: HSTS_A_PLUS_SECONDS - 1 })).grade).to.equal('A');
    expect(rate(modern({ hstsMaxAge: undefined })).grade).to.equal('A');
    const tls12 = {
      protocols: ['TLSv1.2' as const],
      negotiated: { protocol: 'TLSv1.2' as const, forwardSecrecy: true },
    };
    expect(rate(modern(tls12)).grade).to.equal('A+');
    expect(rate(modern({ hstsMaxAge: undefined })).caps).to.deep.equal([]);
  });

  const caps: [string, Partial<GradeInput>, string, RegExp][] = [
    ['untrusted', { trusted: false }, 'F', /not trusted/],
    ['out of date', { inDate: false }, 'F', /expired or not yet valid/],
    ['name mismatch', { nameMatches: false }, 'F', /does not name the host/],
    ['a 512-bit key', { keyExchangeBits: 512 }, 'F', /weaker than 1024/],
    ['a NULL or anonymous suite', { insecureSuite: true }, 'F', /without encryption/],
    [
      'no TLS 1.2 or 1.3',
      { protocols: ['TLSv1', 'TLSv1.1'], negotiated: { protocol: 'TLSv1.1', forwardSecrecy: true } },
      'C',
      /neither TLS 1.2/,
    ],
    ['a 112-bit cipher', { weakestBits: 112 }, 'C', /weaker than 128/],
    ['TLS 1.0 accepted', { protocols: ['TLSv1', 'TLSv1.2', 'TLSv1.3'] }, 'B', /TLS 1.0 or TLS 1.1/],
    ['TLS 1.1 accepted', { protocols: ['TLSv1.1', 'TLSv1.2', 'TLSv1.3'] }, 'B', /TLS 1.0 or TLS 1.1/],
    ['an incomplete chain', { chainComplete: false }, 'B', /full certificate chain/],
    ['a 1024-bit key', { keyExchangeBits: 1024 }, 'B', /weaker than 2048/],
    ['no forward secrecy', { negotiated: { protocol: 'TLSv1.2', forwardSecrecy: false } }, 'B', /forward secrecy/],
  ];
  for (const [what, changes, grade, why] of caps) {
    it(`caps ${what} at ${grade}, lowering the score to the top of that band`, () => {
      const rating = rate(modern(changes));
      expect(rating.grade).to.equal(grade);
      expect(letterOf(rating.score)).to.equal(grade);
      expect(
        rating.caps.some((c) => why.test(c)),
        rating.caps.join('; '),
      ).to.equal(true);
    });
  }

  it('keeps the lowest cap when several apply', () => {
    const rating = rate(modern({ chainComplete: false, trusted: false }));
    expect(rating.grade).to.equal('F');
    expect(rating.caps).to.have.length(2);
  });
});

describe('cipherBits', () => {
  const cases: [string, number][] = [
    ['TLS_AES_256_GCM_SHA384', 256],
    ['TLS_CHACHA20_POLY1305_SHA256', 256],
    ['TLS_AES_128_GCM_SHA256', 128],
    ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 128],
    ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 256],
    ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', 112],
    ['TLS_RSA_WITH_DES_CBC_SHA', 56],
    ['TLS_RSA_EXPORT_WITH_RC4_40_MD5', 40],
    ['TLS_RSA_WITH_NULL_SHA256', 0],
    ['TLS_ECDHE_RSA_WITH_NULL_SHA', 0],
  ];
  for (const [suite, bits] of cases) it(`${suite}: ${bits}`, () => expect(cipherBits(suite)).to.equal(bits));
});

describe('hstsMaxAge', () => {
  const cases: [string | undefined, number | undefined][] = [
    ['max-age=31536000; includeSubDomains; preload', 31_536_000],
    ['includeSubDomains; MAX-AGE = "15552000"', 15_552_000],
    ['max-age=0', 0],
    ['includeSubDomains', undefined],
    ['max-age=abc', undefined],
    ['', undefined],
    [undefined, undefined],
  ];
  for (const [header, seconds] of cases) {
    it(`${JSON.stringify(header)} -> ${seconds}`, () => expect(hstsMaxAge(header)).to.equal(seconds));
  }
});
