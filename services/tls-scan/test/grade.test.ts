import { expect } from 'chai';
import { type GradeInput, HSTS_A_PLUS_SECONDS, letterOf, rate, rawScore, trustMarker } from '../src/grade.js';
import { cipherBits } from '../src/handshake.js';
import { hstsMaxAge, parseHsts } from '../src/hsts.js';

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
    const caps = (input: GradeInput) => rate(input).reasons.filter((r) => r.effect.startsWith('grade capped'));
    expect(caps(modern({ hstsMaxAge: undefined }))).to.deep.equal([]);
  });

  const caps: [string, Partial<GradeInput>, string, string, RegExp][] = [
    ['untrusted', { trusted: false }, 'F', 'cert_untrusted', /not trusted/],
    ['out of date', { inDate: false }, 'F', 'cert_out_of_date', /expired or not yet valid/],
    ['name mismatch', { nameMatches: false }, 'F', 'cert_name_mismatch', /does not name the host/],
    ['a 512-bit key', { keyExchangeBits: 512 }, 'F', 'key_under_1024', /512-bit .*under 1024/],
    ['a NULL or anonymous suite', { insecureSuite: true }, 'F', 'insecure_suite', /without encryption/],
    [
      'no TLS 1.2 or 1.3',
      { protocols: ['TLSv1', 'TLSv1.1'], negotiated: { protocol: 'TLSv1.1', forwardSecrecy: true } },
      'C',
      'no_tls12',
      /neither TLS 1.2/,
    ],
    ['a 112-bit cipher', { weakestBits: 112 }, 'C', 'cipher_under_128', /112-bit cipher .*under 128/],
    ['TLS 1.0 accepted', { protocols: ['TLSv1', 'TLSv1.2', 'TLSv1.3'] }, 'B', 'legacy_protocol', /^TLS 1.0 is/],
    ['TLS 1.1 accepted', { protocols: ['TLSv1.1', 'TLSv1.2', 'TLSv1.3'] }, 'B', 'legacy_protocol', /^TLS 1.1 is/],
    ['an incomplete chain', { chainComplete: false }, 'B', 'chain_incomplete', /full certificate chain/],
    ['a 1024-bit key', { keyExchangeBits: 1024 }, 'B', 'key_under_2048', /1024-bit .*under 2048/],
    [
      'no forward secrecy',
      { negotiated: { protocol: 'TLSv1.2', forwardSecrecy: false } },
      'B',
      'no_forward_secrecy',
      /forward secrecy/,
    ],
  ];
  for (const [what, changes, grade, code, why] of caps) {
    it(`caps ${what} at ${grade} (${code}), lowering the score to the top of that band`, () => {
      const rating = rate(modern(changes));
      expect(rating.grade).to.equal(grade);
      expect(letterOf(rating.score)).to.equal(grade);
      const reason = rating.reasons.find((r) => r.code === code);
      expect(reason?.message, JSON.stringify(rating.reasons)).to.match(why);
      expect(reason?.effect).to.equal(`grade capped at ${grade} (score at most ${{ F: 19, C: 64, B: 79 }[grade]})`);
    });
  }

  it('keeps the lowest cap when several apply, and names each', () => {
    const rating = rate(modern({ chainComplete: false, trusted: false }));
    expect(rating.grade).to.equal('F');
    expect(rating.reasons.map((r) => r.code).slice(0, 2)).to.deep.equal(['cert_untrusted', 'chain_incomplete']);
  });

  it('names only the F cap for a key under 1024 bits, not the B cap too', () => {
    const codes = rate(modern({ keyExchangeBits: 512 })).reasons.map((r) => r.code);
    expect(codes).to.include('key_under_1024');
    expect(codes).to.not.include('key_under_2048');
  });

  it('explains an A+ short of 100 by its deductions, which add up to what the score lost', () => {
    const rating = rate(modern({ protocols: ['TLSv1.1', 'TLSv1.2', 'TLSv1.3'], hstsMaxAge: undefined }));
    // TLS 1.1 (95) to 1.3: protocol 97.5, -0.75; 3072 bits: 90, -3; 128 to 256 bits: 90, -4.
    expect(rating.reasons.map((r) => [r.code, r.effect])).to.deep.equal([
      ['legacy_protocol', 'grade capped at B (score at most 79)'],
      ['no_hsts', 'A+ needs HSTS with max-age ≥ 6 months (15552000 s)'],
      ['protocol_support', '-0.8 points: protocol support scores 97.5 of 100 (weight 30 %)'],
      ['key_exchange_strength', '-3 points: key exchange scores 90 of 100 (weight 30 %)'],
      ['cipher_strength', '-4 points: cipher strength scores 90 of 100 (weight 40 %)'],
    ]);
    expect(rating.reasons[2]?.message).to.equal('protocol support: the oldest version accepted is TLS 1.1');
  });

  it('gives a perfect server no reason at all', () => {
    const rating = rate(modern({ keyExchangeBits: 4096, weakestBits: 256 }));
    expect(rating).to.deep.equal({ score: 100, grade: 'A+', reasons: [] });
  });

  it('names the certificate key and the key exchange apart: a 1024-bit RSA certificate with X25519', () => {
    const keys = {
      certificate: { strength: 1024, label: '1024-bit RSA' },
      exchange: { strength: 3072, label: 'X25519 (ECDH)' },
    };
    const rating = rate(modern({ keyExchangeBits: 1024, keys }));
    const cap = rating.reasons.find((r) => r.code === 'key_under_2048');
    expect(cap?.message).to.equal('the certificate key is 1024-bit RSA (1024-bit RSA-equivalent), under 2048 bits');
    const deduction = rating.reasons.find((r) => r.code === 'key_exchange_strength');
    expect(deduction?.message).to.equal(
      'key exchange: 1024-bit RSA-equivalent, the weaker of the certificate key 1024-bit RSA and the exchange ' +
        'X25519 (ECDH) (4096 for full marks)',
    );
    const weakDh = {
      certificate: { strength: 3072, label: '256-bit EC (prime256v1)' },
      exchange: { strength: 1024, label: '1024-bit DH' },
    };
    expect(rate(modern({ keyExchangeBits: 1024, keys: weakDh })).reasons[0]?.message).to.equal(
      'the key exchange is 1024-bit DH (1024-bit RSA-equivalent), under 2048 bits',
    );
  });

  it('says why the certificate is not trusted', () => {
    const problems = ['the certificate is self-signed, so no browser trusts it'];
    expect(rate(modern({ trusted: false, trustProblems: problems })).reasons[0]?.message).to.equal(
      'the certificate is not trusted: the certificate is self-signed, so no browser trusts it',
    );
  });

  it('tells an HSTS header browsers ignore, or one not read, from one that is absent', () => {
    const ignored = rate(modern({ hstsStatus: 'ignored' }));
    expect(ignored.grade).to.equal('A');
    expect(ignored.reasons[0]?.code).to.equal('hsts_ignored');
    expect(rate(modern({ hstsStatus: 'not_read', hstsMaxAge: undefined })).reasons[0]?.code).to.equal('hsts_not_read');
    expect(rate(modern({ hstsStatus: 'absent', hstsMaxAge: undefined })).reasons[0]?.code).to.equal('no_hsts');
    expect(rate(modern({ hstsStatus: 'honoured' })).grade).to.equal('A+');
  });

  it("gives SSL Labs' T or M marker with the grade the server would get if its certificate were fine", () => {
    expect(trustMarker(modern())).to.equal(undefined);
    const selfSigned = modern({ trusted: false, hstsStatus: 'ignored' });
    expect(rate(selfSigned).grade).to.equal('F');
    expect(trustMarker(selfSigned)).to.deep.equal({ marker: 'T', gradeIgnoringTrust: 'A+' });
    expect(trustMarker(modern({ inDate: false, protocols: ['TLSv1', 'TLSv1.2', 'TLSv1.3'] }))).to.deep.equal({
      marker: 'T',
      gradeIgnoringTrust: 'B',
    });
    expect(trustMarker(modern({ nameMatches: false }))).to.deep.equal({ marker: 'M', gradeIgnoringTrust: 'A+' });
  });

  it('says when HSTS is too short for A+', () => {
    const reasons = rate(modern({ hstsMaxAge: 86_400 })).reasons;
    expect(reasons[0]).to.deep.equal({
      code: 'hsts_short',
      message: 'HSTS max-age is 86400 s, under 6 months',
      effect: 'A+ needs HSTS with max-age ≥ 6 months (15552000 s)',
    });
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
    ['TLS_RSA_EXPORT1024_WITH_RC4_56_SHA', 56],
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

describe('parseHsts', () => {
  it('reads max-age, includeSubDomains and preload, in any case and order', () => {
    expect(parseHsts('max-age=63072000; includeSubDomains; preload')).to.deep.equal({
      maxAge: 63_072_000,
      includeSubDomains: true,
      preload: true,
    });
    expect(parseHsts('PRELOAD;max-age="300"')).to.deep.equal({ maxAge: 300, includeSubDomains: false, preload: true });
  });

  it('is no policy without a valid max-age', () => {
    expect(parseHsts('includeSubDomains; preload')).to.equal(undefined);
    expect(parseHsts('max-age=-1; preload')).to.equal(undefined);
    expect(parseHsts(undefined)).to.equal(undefined);
  });
});
