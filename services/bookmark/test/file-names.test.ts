import { expect } from 'chai';
import { cleanUploadName, decryptedName, htmlName } from '../src/file-names.js';

describe('output file names', () => {
  const cases: [string, string, string][] = [
    ['bookmarks.xbel', 'bookmarks-decrypted.xbel', 'bookmarks.html'],
    ['my.backup.XBEL', 'my.backup-decrypted.XBEL', 'my.backup.html'],
    ['bookmarks', 'bookmarks-decrypted', 'bookmarks.html'],
    ['C:\\Users\\me\\Lesezeichen ü.xbel', 'Lesezeichen ü-decrypted.xbel', 'Lesezeichen ü.html'],
    ['../../etc/passwd.xbel', 'passwd-decrypted.xbel', 'passwd.html'],
    ['.xbel', 'bookmarks-decrypted.xbel', 'bookmarks.html'],
    ['', 'bookmarks-decrypted.xbel', 'bookmarks.html'],
    ['/', 'bookmarks-decrypted.xbel', 'bookmarks.html'],
    ['a\r\nb\u0000.xbel', 'ab-decrypted.xbel', 'ab.html'],
  ];
  for (const [upload, decrypted, html] of cases) {
    it(`${JSON.stringify(upload)} -> ${decrypted}, ${html}`, () => {
      expect(decryptedName(upload)).to.equal(decrypted);
      expect(htmlName(upload)).to.equal(html);
    });
  }

  it('keeps the end of an overlong name, extension included', () => {
    const name = cleanUploadName(`${'x'.repeat(500)}.xbel`);
    expect(name).to.have.length(200);
    expect(name.endsWith('.xbel')).to.equal(true);
  });
});
