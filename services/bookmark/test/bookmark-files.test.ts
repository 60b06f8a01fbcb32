import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { DiskArtifactStore } from '@webutil/kit/artifacts';
import {
  DownloadKind,
  type ReadCleanedBookmarksResponse,
  type ReadDownloadResponse,
} from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { alias, bookmark, floccusEncrypt, folder, largeXbel, xbelOf } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import type { BookmarkFilesDeps } from '../src/bookmark-files.js';
import { BookmarkWorkers } from '../src/bookmark-workers.js';
import { readCleanedBookmarks } from '../src/cleaned-bookmarks.js';
import { convertXbelToHtml } from '../src/convert-xbel-to-html.js';
import { decryptXbel } from '../src/decrypt-xbel.js';
import { keyDerivation } from '../src/floccus-crypto.js';
import { parseBookmarks } from '../src/parse-bookmarks.js';
import { readDownload } from '../src/read-download.js';
import { failure } from './service-failure.js';

/** The RPC handlers over a real artifact store on disk, with a clock the tests move. */
describe('bookmark RPC handlers over a disk artifact store', () => {
  let dir: string;
  let now: number;
  let deps: BookmarkFilesDeps;
  const live = () => new AbortController().signal;
  const stored = () => readdirSync(dir).filter((name) => !['keys', 'tmp'].includes(name));

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bookmark-files-'));
    now = Date.parse('2026-01-01T00:00:00Z');
    deps = {
      store: await DiskArtifactStore.open(dir, () => now),
      ttlMs: 30 * 60_000,
      deriveKey: keyDerivation(1),
      workers: new BookmarkWorkers({ concurrency: 1, heapMb: 64, timeoutMs: 30_000 }),
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function download(kind: DownloadKind, storedName: string) {
    const messages: ReadDownloadResponse[] = [];
    await readDownload({ kind, storedName }, deps, async (m) => void messages.push(m), live());
    const [head, ...rest] = messages;
    return { head, body: Buffer.concat(rest.map((m) => m.chunk)).toString('utf8') };
  }

  const xbel = xbelOf([folder('F', [bookmark('https://example.com/', 'Example')])]);

  it('stores a decrypted file and serves it under the upload name with -decrypted', async () => {
    const file = Buffer.from(await floccusEncrypt(xbel, 'secret'));
    const reply = await decryptXbel({ fileName: 'Sync.xbel', file, key: 'secret' }, deps, live());
    expect(reply.fileName).to.equal('Sync-decrypted.xbel');
    expect(reply.message).to.equal(
      'Decrypted Sync.xbel as Sync-decrypted.xbel. The download link is valid for 30 minutes.',
    );
    const { head, body } = await download(DownloadKind.DOWNLOAD_KIND_DECRYPTED, reply.storedName);
    expect(head).to.deep.include({ fileName: 'Sync-decrypted.xbel', contentType: 'application/xml' });
    expect(head?.sizeBytes).to.equal(String(Buffer.byteLength(xbel)));
    expect(body).to.equal(xbel);
  });

  it('passes a plain file through byte for byte', async () => {
    const file = Buffer.from(`\uFEFF${xbel}\r\n`);
    const reply = await decryptXbel({ fileName: 'plain.xbel', file, key: 'any' }, deps, live());
    expect(reply.message).to.match(
      /^The file was not encrypted; returned unchanged: plain.xbel as plain-decrypted.xbel/,
    );
    const { body } = await download(DownloadKind.DOWNLOAD_KIND_DECRYPTED, reply.storedName);
    expect(Buffer.from(body)).to.deep.equal(file);
  });

  it('serves a name only on its own kind’s route, and nothing after the lifetime', async () => {
    const html = await convertXbelToHtml({ fileName: 'b.xbel', file: Buffer.from(xbel) }, deps, live());
    expect(html.storedName).to.match(/^[A-Za-z0-9_-]{32}\.html$/);
    expect((await download(DownloadKind.DOWNLOAD_KIND_HTML, html.storedName)).body).to.include('Example</A>');
    for (const [kind, name] of [
      [DownloadKind.DOWNLOAD_KIND_DECRYPTED, html.storedName],
      [DownloadKind.DOWNLOAD_KIND_UNSPECIFIED, html.storedName],
      [DownloadKind.DOWNLOAD_KIND_HTML, `../${html.storedName}`],
      [DownloadKind.DOWNLOAD_KIND_HTML, '../../../../etc/passwd'],
      [DownloadKind.DOWNLOAD_KIND_HTML, `${html.storedName.slice(0, -5)}.json`],
    ] as const) {
      const err = await failure(download(kind, name));
      expect(err.code, name).to.equal(status.NOT_FOUND);
      expect(err.reason).to.equal('FILE_NOT_FOUND');
    }
    now += 30 * 60_000;
    const err = await failure(download(DownloadKind.DOWNLOAD_KIND_HTML, html.storedName));
    expect(err.message).to.equal('no such file: download links are valid for 30 minutes');
    expect(await deps.store.sweep()).to.equal(1);
    expect(stored()).to.deep.equal([]);
  });

  it('leaves nothing stored when the call is cancelled mid-conversion, or the file is refused', async () => {
    const controller = new AbortController();
    const big = Buffer.from(largeXbel(4 * 1024 * 1024).text);
    const converting = convertXbelToHtml({ fileName: 'big.xbel', file: big }, deps, controller.signal);
    setTimeout(() => controller.abort(new Error('cancelled by caller')), 20);
    expect((await failure(converting)).message).to.equal('cancelled by caller');

    const deep = xbelOf([folder('a', [folder('b', [])])]).replace('<folder>', '<folder>'.repeat(200));
    await failure(convertXbelToHtml({ fileName: 'x.xbel', file: Buffer.from(deep) }, deps, live()));
    await failure(decryptXbel({ fileName: 'x.xbel', file: Buffer.from('{"salt":"s"}'), key: 'k' }, deps, live()));
    expect(stored()).to.deep.equal([]);
    expect(readdirSync(path.join(dir, 'tmp'))).to.deep.equal([]);
  });

  it('refuses an output that would pass 50 MiB while it is written, and keeps none of it', async () => {
    // A 1 MiB title copied by 60 aliases: the alias count is far below its bound, the bytes are not.
    const title = 'x'.repeat(1024 * 1024);
    const file = Buffer.from(
      xbelOf([bookmark('https://example.com/', title, { id: 'b' }), ...Array(60).fill(alias('b'))]),
    );
    const err = await failure(convertXbelToHtml({ fileName: 'big.xbel', file }, deps, live()));
    expect(err.code).to.equal(status.INVALID_ARGUMENT);
    expect(err.reason).to.equal('OUTPUT_TOO_LARGE');
    expect(err.message).to.include('52428800 bytes');
    expect(stored()).to.deep.equal([]);
    expect(readdirSync(path.join(dir, 'tmp'))).to.deep.equal([]);
  });

  it('refuses an empty upload, a missing key and a file over 10 MiB', async () => {
    const cases: [Promise<unknown>, string][] = [
      [convertXbelToHtml({ fileName: 'e.xbel', file: Buffer.alloc(0) }, deps, live()), 'EMPTY_FILE'],
      [decryptXbel({ fileName: 'e.xbel', file: Buffer.from(xbel), key: '' }, deps, live()), 'KEY_REQUIRED'],
      [
        convertXbelToHtml({ fileName: 'e.xbel', file: Buffer.alloc(10 * 1024 * 1024 + 1, 0x20) }, deps, live()),
        'FILE_TOO_LARGE',
      ],
    ];
    for (const [call, reason] of cases) expect((await failure(call)).reason).to.equal(reason);
  });
  it('writes each cleaned copy once, in a worker; later reads stream the stored bytes', async function () {
    this.timeout(90_000); // each worker thread compiles its TypeScript under tsx
    const runs: string[] = [];
    deps.workers = new (class extends BookmarkWorkers {
      override run: BookmarkWorkers['run'] = (task, signal) => {
        runs.push(task.kind);
        return super.run(task, signal);
      };
    })({ concurrency: 1, heapMb: 64, timeoutMs: 30_000 });
    const html =
      '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><A HREF="https://a.example/">A</A>\n' +
      '<DT><A HREF="https://b.example/">B</A>\n</DL><p>\n';
    const parsed = await parseBookmarks({ fileName: 'b.html', file: Buffer.from(html) }, deps, live());
    expect(runs).to.deep.equal(['list-html']);
    const read = async (format: string) => {
      const messages: ReadCleanedBookmarksResponse[] = [];
      const request = { fileId: parsed.fileId, format, drop: [0], rewrites: [], baseName: '' };
      await readCleanedBookmarks(request, deps, async (m) => void messages.push(m), live());
      return Buffer.concat(messages.map((m) => m.chunk)).toString('utf8');
    };
    const [first, again, concurrent] = [await read('xbel'), await read('xbel'), await read('xbel')];
    expect(first).to.include('https://b.example/').and.not.include('https://a.example/');
    expect([again, concurrent]).to.deep.equal([first, first]);
    const [html1, html2] = await Promise.all([read('html'), read('html')]);
    expect(html1).to.equal(html2).and.include('https://b.example/');
    expect(runs).to.deep.equal(['list-html', 'cleaned-copy', 'cleaned-copy']);
  });
});
