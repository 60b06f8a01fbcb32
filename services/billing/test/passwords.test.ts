import { scryptSync } from 'node:crypto';
import argon2 from 'argon2';
import { expect } from 'chai';
import { hashPassword, verifyPassword } from '../src/passwords.js';

describe('passwords', () => {
  it('are hashed with Argon2id at OWASP’s minimum (19 MiB, 2 passes, 1 lane), salted', async () => {
    const stored = await hashPassword('correct horse battery');
    const [, algorithm, version, params] = stored.split('$');
    expect([algorithm, version]).to.deep.equal(['argon2id', 'v=19']);
    expect(params?.split(',').sort()).to.deep.equal(['m=19456', 'p=1', 't=2']);
    expect(await hashPassword('correct horse battery')).to.not.equal(stored);
    expect(await verifyPassword('correct horse battery', stored)).to.deep.equal({ ok: true, outdated: false });
    expect(await verifyPassword('correct horse batterY', stored)).to.deep.include({ ok: false });
    // Unicode NFKC: the same text typed as composed or decomposed characters matches.
    expect((await verifyPassword('cafe\u0301 au lait!', await hashPassword('caf\u00e9 au lait!'))).ok).to.equal(true);
  });

  it('checks the older scrypt hashes and weaker Argon2id ones, and says they are outdated', async () => {
    const salt = Buffer.from('0123456789abcdef');
    const key = scryptSync('correct horse battery', salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 2 ** 20 });
    const scrypt = ['scrypt', 2 ** 15, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
    expect(await verifyPassword('correct horse battery', scrypt)).to.deep.equal({ ok: true, outdated: true });
    expect(await verifyPassword('wrong horse battery', scrypt)).to.deep.include({ ok: false });
    const weak = await argon2.hash('correct horse battery', {
      type: argon2.argon2id,
      memoryCost: 4096,
      timeCost: 1,
    });
    expect(await verifyPassword('correct horse battery', weak)).to.deep.equal({ ok: true, outdated: true });
    for (const garbage of ['', 'scrypt$x$8$1$a$b', '$argon2id$nonsense', 'plain text'])
      expect((await verifyPassword('correct horse battery', garbage)).ok).to.equal(false);
  });

  it('hash off the event loop: timers keep firing while passwords are hashed and checked', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const hashes = await Promise.all(Array.from({ length: 8 }, (_, i) => hashPassword(`password number ${i}`)));
      await Promise.all(hashes.map((hash, i) => verifyPassword(`password number ${i}`, hash)));
    } finally {
      clearInterval(timer);
    }
    // 16 Argon2id computations take well over 100 ms of CPU; computed on the loop, no timer would fire.
    expect(ticks).to.be.at.least(10);
  });
});
