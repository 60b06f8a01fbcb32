import { monitorEventLoopDelay } from 'node:perf_hooks';
import { floccusEncrypt } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { decryptFloccus, encryptedFileOf, keyDerivation } from '../src/floccus-crypto.js';
import { failure } from './service-failure.js';

const deriveKey = keyDerivation(4);

const XBEL = '<?xml version="1.0" encoding="UTF-8"?>\n<xbel version="1.0"><title>Ünïcödé 🚀</title></xbel>';

const encrypted = async (plaintext: string, key: string) =>
  encryptedFileOf(JSON.parse(await floccusEncrypt(plaintext, key)));

describe('Floccus decryption', () => {
  it('decrypts what a WebCrypto implementation of Floccus’s format encrypted', async () => {
    const file = await encrypted(XBEL, 'pässwörd with spaces');
    expect(file.salt).to.match(/^[0-9a-f]{128}$/);
    const plaintext = await decryptFloccus(file, 'pässwörd with spaces', deriveKey);
    expect(plaintext.toString('utf8')).to.equal(XBEL);
  });

  it('names a wrong password as such', async () => {
    const err = await failure(decryptFloccus(await encrypted(XBEL, 'right'), 'wrong', deriveKey));
    expect(err.reason).to.equal('WRONG_PASSWORD');
    expect(err.message).to.match(/^the key does not decrypt this file: the password is wrong/);
  });

  it('names ciphertext cut short as damaged (not a wrong password), too short for IV and tag as wrong', async () => {
    const file = await encrypted(XBEL, 'k');
    const cut = await failure(decryptFloccus({ ...file, ciphertext: file.ciphertext.slice(0, -24) }, 'k', deriveKey));
    expect(cut.reason).to.equal('CORRUPTED_FILE');
    expect(cut.message).to.match(/cut short/);
    // The same cut file with the wrong key is a wrong password: nothing deciphers to XML.
    const wrong = await failure(
      decryptFloccus({ ...file, ciphertext: file.ciphertext.slice(0, -24) }, 'other', deriveKey),
    );
    expect(wrong.reason).to.equal('WRONG_PASSWORD');
    const stub = await failure(decryptFloccus({ ...file, ciphertext: file.ciphertext.slice(0, 40) }, 'k', deriveKey));
    expect(stub.reason).to.equal('INVALID_FILE');
    expect(stub.message).to.equal('ciphertext is 30 bytes, too short for a 16-byte IV and a 16-byte tag');
  });

  it('refuses ciphertext that is not base64', async () => {
    const err = await failure(decryptFloccus({ ciphertext: 'not base64!', salt: 's' }, 'k', deriveKey));
    expect(err.reason).to.equal('INVALID_FILE');
    expect(err.message).to.equal('ciphertext is not base64');
  });

  it('takes the salt from the caller for a file without one (older Floccus releases)', async () => {
    const file = await encrypted(XBEL, 'k');
    const { salt, ciphertext } = file;
    expect(() => encryptedFileOf({ ciphertext }))
      .to.throw()
      .with.property('reason', 'INVALID_FILE');
    const plain = await decryptFloccus(encryptedFileOf({ ciphertext }, salt), 'k', deriveKey);
    expect(plain.toString('utf8')).to.equal(XBEL);
  });

  it('names JSON of the wrong shape', () => {
    for (const json of [[], null, 'text', { ciphertext: 'x' }, { ciphertext: 1, salt: 's' }, { salt: 's' }]) {
      expect(() => encryptedFileOf(json), JSON.stringify(json))
        .to.throw()
        .with.property('reason', 'INVALID_FILE');
    }
  });

  it('keeps the event loop free while 20 key derivations run', async () => {
    const file = await encrypted(XBEL, 'k');
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const outputs = await Promise.all(Array.from({ length: 20 }, () => decryptFloccus(file, 'k', deriveKey)));
    delay.disable();
    expect(outputs.every((out) => out.toString('utf8') === XBEL)).to.equal(true);
    // 20 derivations take seconds of CPU; on the loop they would block it for all of that.
    expect(delay.max / 1e6).to.be.below(250);
  });

  it('derives one key at a time when told to, and skips a derivation cancelled while it waits', async () => {
    const oneAtATime = keyDerivation(1);
    const waiting = new AbortController();
    const first = oneAtATime('k', 'salt');
    const second = oneAtATime('k', 'salt', waiting.signal);
    waiting.abort(new Error('caller left'));
    const [key, refused] = await Promise.all([first, second.then(String, (err: Error) => err.message)]);
    expect(key).to.have.length(32);
    expect(refused).to.equal('caller left');
  });
});
