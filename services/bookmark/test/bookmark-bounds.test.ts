import { hostileBookmarkHtml } from '@webutil/scripts/bookmark-html-fixtures';
import { expect } from 'chai';
import { maxOutputBytes } from '../src/bookmark-files.js';
import { runBookmarkTask } from '../src/bookmark-work.js';
import { BookmarkWorkers } from '../src/bookmark-workers.js';
import { folderChain, MAX_HTML_ITEMS, readNetscape } from '../src/netscape-read.js';
import { failure } from './service-failure.js';

const MB = 1024 * 1024;
const live = () => new AbortController().signal;

/** Bookmark HTML built to cost the most (decision 0292): bounded while it is read and written. */
describe('bookmark HTML bounds', () => {
  it('keeps folder membership by reference: every bookmark of a 99-deep file shares one chain', () => {
    const doc = readNetscape(hostileBookmarkHtml('deep', 512 * 1024));
    expect(doc.bookmarks.length).to.be.above(1_000);
    const [first, last] = [doc.bookmarks[0], doc.bookmarks.at(-1)];
    expect(first?.folder).to.equal(last?.folder);
    expect(folderChain(last?.folder).map((f) => f.title)).to.deep.equal(Array.from({ length: 99 }, (_, i) => `F${i}`));
  });

  it(`refuses more than ${MAX_HTML_ITEMS} items as it reads them, whatever the file's shape`, async () => {
    const flat = hostileBookmarkHtml('flat', 4 * MB, { items: MAX_HTML_ITEMS + 1 });
    expect(await failure((async () => readNetscape(flat))())).to.include({ reason: 'TOO_MANY_BOOKMARKS' });
    // MAX_HTML_ITEMS - 2 bookmarks and the one padding the file: one under the bound.
    expect(readNetscape(hostileBookmarkHtml('flat', 4 * MB, { items: MAX_HTML_ITEMS - 2 })).bookmarks).to.have.length(
      MAX_HTML_ITEMS - 1,
    );
  });

  it('writes XBEL of a 99-deep file within 4 times its size and 1 MiB (indentation stops growing)', async () => {
    const file = Buffer.from(hostileBookmarkHtml('deep', 2 * MB));
    const result = await runBookmarkTask({ kind: 'html-to-xbel', file });
    if (!('body' in result)) throw new Error('no body');
    expect(result.body.length).to.be.below(maxOutputBytes(file.length));
    expect(result.body.length).to.be.below(3 * file.length);
  });

  it('refuses output past the bound relative to the input (markup built to multiply)', async () => {
    // Every character of the HREF becomes &quot; (6 bytes).
    const file = Buffer.from(`<DL><p><DT><A HREF='${'"'.repeat(1_000_000)}'>x</A></DL>`);
    expect(await failure(runBookmarkTask({ kind: 'html-to-xbel', file }))).to.include({
      reason: 'OUTPUT_TOO_LARGE',
    });
  });

  it('reads in a worker with a heap ceiling: past it FILE_TOO_COMPLEX, then the next file', async function () {
    this.timeout(120_000);
    const workers = new BookmarkWorkers({ concurrency: 1, heapMb: 32, timeoutMs: 60_000 });
    const large = Buffer.from(hostileBookmarkHtml('flat', 10 * MB, { items: MAX_HTML_ITEMS - 2 }));
    expect(await failure(workers.run({ kind: 'list-html', file: large }, live()))).to.include({
      reason: 'FILE_TOO_COMPLEX',
    });
    const small = Buffer.from(hostileBookmarkHtml('flat', 4 * 1024, { items: 10 }));
    const listed = await workers.run({ kind: 'list-html', file: small }, live());
    expect(listed.total).to.equal(11);
    expect(listed.bookmarks[0]).to.include({ url: 'https://example.com/0', title: 'b0' });
  });
});
