import { type CloseDelimitedSite, startCloseDelimitedSite } from '@webutil/scripts/fixture-close-delimited';
import { expect } from 'chai';
import { AddressPolicy } from '../src/address-policy.js';
import { SafeHttp, type SafeResponse } from '../src/safe-http.js';

/** Reads a body a chunk at a time with a pause after each: far slower than loopback fills the socket. */
async function readSlowly(res: SafeResponse): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) {
    chunks.push(chunk);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Large close-delimited HTTP/1.0 bodies read under back-pressure: the socket's end while the body
 * waited crashed the process in undici 7.30.2 (docs/decisions/0301-undici-paused-parser-patch.md).
 * Every service fetches through SafeHttp, so these are the readers they use: slow to the end,
 * stopping early, and dropping the body.
 */
describe('SafeHttp with close-delimited HTTP/1.0 bodies', function () {
  this.timeout(60_000);
  let site: CloseDelimitedSite;
  let http: SafeHttp;

  before(async () => {
    site = await startCloseDelimitedSite();
    http = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']) });
  });
  after(async () => {
    await http.close();
    await site.close();
  });

  for (const [path, times] of [
    ['/page', 20],
    ['/paused', 20],
    ['/slow', 5],
  ] as const) {
    it(`reads ${path} whole, slowly, ${times} times in a row`, async () => {
      for (let i = 0; i < times; i++) {
        const res = await http.fetch(site.url(path));
        // The body waits before its first read, as a page waits for its turn to be parsed.
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(await readSlowly(res)).to.equal(site.page);
      }
    });
  }

  it('stops reading at maxBodyBytes or early, or drops the body, and goes on answering', async () => {
    for (let i = 0; i < 10; i++) {
      const cut = await http.fetch(site.url('/page'), { maxBodyBytes: 200_000 });
      expect((await readSlowly(cut)).length).to.equal(200_000);
      expect(cut.truncated).to.equal(true);
      const early = await http.fetch(site.url('/slow'));
      for await (const _ of early.body) break;
      const dropped = await http.fetch(site.url('/paused'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      await dropped.dump();
    }
    const res = await http.fetch(site.url('/page'));
    expect(await res.text()).to.equal(site.page);
  });
});
