import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import {
  alias,
  bookmark,
  floccusEncrypt,
  folder,
  type Imported,
  type Item,
  importNetscapeHtml,
  largeXbel,
  nestedFolders,
  separator,
  xbelOf,
} from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { creditsHeader, type Envelope, eventually, expectFailure, json, quota } from './billing-helpers.js';

type XbelRoute = 'xbel-decrypt' | 'xbel-to-html';
const PUBLIC_BASE_URL = 'https://api.webutil.test';
const MIB = 1024 * 1024;

interface UploadOptions {
  name?: string;
  type?: string;
  key?: string;
  headers?: Record<string, string>;
  anonymous?: boolean;
  /** The website's alias instead of /v1. */
  prefix?: '/v1' | '/api/v1';
}

/** A multipart POST of one file (and `key`, when given) as a browser's FormData sends it. */
function upload(stack: TestStack, route: XbelRoute, file: string | Buffer, options: UploadOptions = {}) {
  const form = new FormData();
  const type = options.type ?? 'application/xml';
  form.set('file', new Blob([file], { type }), options.name ?? 'bookmarks.xbel');
  if (options.key !== undefined) form.set('key', options.key);
  return stack.api(`${options.prefix ?? '/v1'}/${route}`, {
    method: 'POST',
    body: form,
    headers: options.headers,
    anonymous: options.anonymous,
  });
}

/** The XBEL result: 200, the spec's four top-level fields, an absolute URL on the public base. */
async function succeeded(res: Response, route: XbelRoute): Promise<{ downloadUrl: string; fileName: string }> {
  const body = (await json(res)) as Envelope & { downloadUrl: string; fileName: string; message: string };
  expect(res.status, JSON.stringify(body)).to.equal(200);
  expect(Object.keys(body).sort()).to.deep.equal(['downloadUrl', 'fileName', 'message', 'success']);
  expect(body.success).to.equal(true);
  expect(body.downloadUrl).to.match(new RegExp(`^${PUBLIC_BASE_URL}/v1/${route}/download/[A-Za-z0-9_-]{32}\\.`));
  expect(body.message).to.be.a('string').and.not.be.empty;
  return body;
}

/** Fetches a download URL from this stack's edge (the public base names the deployment, not the test). */
function download(stack: TestStack, downloadUrl: string): Promise<Response> {
  return stack.api(new URL(downloadUrl).pathname, { anonymous: true });
}

/**
 * A chunked multipart POST that sends `bytes` of a file under `field`, then stalls without ending
 * the body: the answer's status and body, or undefined when none came within 10 s (liveness bound;
 * an answer decided while streaming takes well under a second).
 */
async function stalledUpload(
  stack: TestStack,
  route: XbelRoute,
  field: string,
  bytes: number,
): Promise<{ status: number; body: Envelope } | undefined> {
  const boundary = `stalled-${Date.now()}`;
  const req = http.request(`${stack.edgeUrl}/v1/${route}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.apiKey}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'transfer-encoding': 'chunked',
    },
  });
  req.on('error', () => undefined); // the edge may cut the connection once it has answered
  const answered = new Promise<{ status: number; body: Envelope }>((resolve) => {
    req.on('response', async (res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk);
      resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
    });
  });
  req.write(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="big.xbel"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  for (let sent = 0; sent < bytes; sent += MIB) req.write(Buffer.alloc(Math.min(MIB, bytes - sent), 0x20));
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      answered,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), 10_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    req.destroy();
  }
}

async function spent(stack: TestStack, work: () => Promise<unknown>): Promise<number> {
  const before = (await quota(stack)).remaining;
  await work();
  return before - (await quota(stack)).remaining;
}

describe('XBEL routes through the edge', function () {
  this.timeout(120_000);
  let stack: TestStack;

  before(async () => {
    // Some cases run many conversions at once from one address on purpose (upload-admission.e2e tests the bound).
    stack = await startTestStack({ envFor: { edge: { PUBLIC_BASE_URL, MAX_UPLOADS_PER_CLIENT: '32' } } });
  });
  after(async () => stack?.stop());

  describe('POST /v1/xbel-decrypt', () => {
    const plain = xbelOf([folder('Sync', [bookmark('https://example.com/', 'Example ü')])]);

    it('decrypts a file encrypted by an independent WebCrypto implementation of Floccus’s format', async () => {
      const encrypted = await floccusEncrypt(plain, 'correct horse');
      let result = { downloadUrl: '', fileName: '' };
      const credits = await spent(stack, async () => {
        result = await succeeded(
          await upload(stack, 'xbel-decrypt', encrypted, { key: 'correct horse', name: 'floccus.xbel' }),
          'xbel-decrypt',
        );
      });
      expect(credits).to.equal(1);
      expect(result.fileName).to.equal('floccus-decrypted.xbel');
      const file = await download(stack, result.downloadUrl);
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.match(/^application\/xml/);
      expect(file.headers.get('content-disposition')).to.equal('attachment; filename="floccus-decrypted.xbel"');
      expect(await file.text()).to.equal(plain);
    });

    it('passes a plain XBEL file through unchanged (the key is still required)', async () => {
      const bytes = Buffer.from(`\uFEFF${plain}\n`);
      const res = await upload(stack, 'xbel-decrypt', bytes, { key: 'unused', type: 'application/octet-stream' });
      const { downloadUrl } = await succeeded(res, 'xbel-decrypt');
      expect(Buffer.from(await (await download(stack, downloadUrl)).arrayBuffer())).to.deep.equal(bytes);
    });

    it('keeps the bookmark service serving other calls while 20 decrypts derive their keys', async () => {
      const encrypted = await floccusEncrypt(plain, 'k');
      const small = xbelOf([bookmark('https://example.com/', 'small')]);
      let deriving = true;
      const decrypts = Promise.all(
        Array.from({ length: 20 }, async () => (await upload(stack, 'xbel-decrypt', encrypted, { key: 'k' })).status),
      ).finally(() => {
        deriving = false;
      });
      // Conversions on the same service, one after another for as long as the derivations run.
      const conversionsMs: number[] = [];
      while (deriving) {
        const started = Date.now();
        await succeeded(await upload(stack, 'xbel-to-html', small), 'xbel-to-html');
        conversionsMs.push(Date.now() - started);
      }
      expect(await decrypts).to.deep.equal(Array(20).fill(200));
      expect(conversionsMs.length).to.be.at.least(2);
      // Liveness: a small conversion takes tens of ms; a derivation (~0.1 s of CPU each, 2 s for the
      // 20) on the service's event loop would hold it for seconds.
      expect(Math.max(...conversionsMs), JSON.stringify(conversionsMs)).to.be.below(1_000);
    });

    it('answers 500 naming a wrong password, and spends nothing', async () => {
      const encrypted = await floccusEncrypt(plain, 'right');
      const credits = await spent(stack, async () => {
        const body = await expectFailure(
          await upload(stack, 'xbel-decrypt', encrypted, { key: 'wrong' }),
          500,
          'wrong_password',
        );
        expect(body.error?.message).to.match(/password is wrong/);
      });
      expect(credits).to.equal(0);
    });

    it('answers 500 for truncated ciphertext and for JSON of the wrong shape, saying which', async () => {
      const { ciphertext, salt } = JSON.parse(await floccusEncrypt(plain, 'k')) as Record<string, string>;
      const cut = JSON.stringify({ ciphertext: ciphertext?.slice(0, -40), salt });
      const cutBody = await expectFailure(
        await upload(stack, 'xbel-decrypt', cut, { key: 'k' }),
        500,
        'corrupted_file',
      );
      expect(cutBody.error?.message).to.match(/cut short/);
      const stub = JSON.stringify({ ciphertext: ciphertext?.slice(0, 24), salt });
      const stubBody = await expectFailure(
        await upload(stack, 'xbel-decrypt', stub, { key: 'k' }),
        500,
        'invalid_file',
      );
      expect(stubBody.error?.message).to.match(/too short for a 16-byte IV and a 16-byte tag/);
      for (const shape of [{ data: ciphertext, salt }, [ciphertext, salt], { ciphertext: 42, salt }]) {
        const body = await expectFailure(
          await upload(stack, 'xbel-decrypt', JSON.stringify(shape), { key: 'k' }),
          500,
          'invalid_file',
        );
        expect(body.error?.message).to.match(/ciphertext and salt/);
      }
      const neither = await expectFailure(
        await upload(stack, 'xbel-decrypt', 'just some text', { key: 'k' }),
        500,
        'invalid_file',
      );
      expect(neither.error?.message).to.match(/^the file is neither XBEL nor an encrypted Floccus file/);
    });
  });

  describe('POST /v1/xbel-to-html', () => {
    const tree: Item[] = [
      folder(
        'Work & "Projects" <2024>',
        [
          bookmark('https://example.com/search?q=a&b=<c>', 'Tom & Jerry <script>x</script>', {
            id: 'tj',
            added: '2024-01-02T03:04:05Z',
            visited: '2024-01-03T10:00:00+02:00',
            modified: '2024-01-04',
            desc: 'two\nlines',
          }),
          separator(),
          folder('Nested', [folder('Deeper', [bookmark('https://example.org/ü', '名前 🚀')])], {
            added: '2023-06-07T08:09:10.5Z',
            desc: 'inner folder',
          }),
        ],
        { id: 'work', added: '2020-02-29T00:00:00Z', modified: '2024-06-01T12:00:00Z' },
      ),
      separator(),
      bookmark('https://example.net/', 'Top level'),
    ];

    it('converts folders, separators, descriptions, dates, special text: read back, it is the input tree', async () => {
      let result = { downloadUrl: '', fileName: '' };
      const credits = await spent(stack, async () => {
        result = await succeeded(
          await upload(stack, 'xbel-to-html', xbelOf(tree, 'Mine'), { name: 'export.xbel' }),
          'xbel-to-html',
        );
      });
      expect(credits).to.equal(1);
      expect(result.fileName).to.equal('export.html');
      const res = await download(stack, result.downloadUrl);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      const html = await res.text();
      expect(html.startsWith('<!DOCTYPE NETSCAPE-Bookmark-file-1>\n')).to.equal(true);
      const seconds = (iso: string) => String(Math.floor(Date.parse(iso) / 1000));
      const nested: Imported = {
        kind: 'folder',
        title: 'Nested',
        attributes: { add_date: seconds('2023-06-07T08:09:10.5Z') },
        desc: 'inner folder',
        children: [
          {
            kind: 'folder',
            title: 'Deeper',
            attributes: {},
            children: [{ kind: 'bookmark', href: 'https://example.org/ü', title: '名前 🚀', attributes: {} }],
          },
        ],
      };
      expect(importNetscapeHtml(html)).to.deep.equal({
        title: 'Mine',
        items: [
          {
            kind: 'folder',
            title: 'Work & "Projects" <2024>',
            attributes: { add_date: seconds('2020-02-29T00:00:00Z'), last_modified: seconds('2024-06-01T12:00:00Z') },
            children: [
              {
                kind: 'bookmark',
                href: 'https://example.com/search?q=a&b=<c>',
                title: 'Tom & Jerry <script>x</script>',
                attributes: {
                  add_date: seconds('2024-01-02T03:04:05Z'),
                  last_visit: seconds('2024-01-03T10:00:00+02:00'),
                  last_modified: seconds('2024-01-04'),
                },
                desc: 'two lines',
              },
              { kind: 'separator' },
              nested,
            ],
          },
          { kind: 'separator' },
          { kind: 'bookmark', href: 'https://example.net/', title: 'Top level', attributes: {} },
        ],
      });
    });

    it('resolves aliases to what they reference, and ends an alias loop', async () => {
      const res = await upload(
        stack,
        'xbel-to-html',
        xbelOf([
          folder('Loop', [bookmark('https://example.com/1', 'one', { id: 'one' }), alias('loop')], { id: 'loop' }),
          folder('Links', [alias('one'), alias('loop'), alias('nowhere')]),
        ]),
      );
      const html = await (await download(stack, (await succeeded(res, 'xbel-to-html')).downloadUrl)).text();
      const one: Imported = { kind: 'bookmark', href: 'https://example.com/1', title: 'one', attributes: {} };
      const loop: Imported = { kind: 'folder', title: 'Loop', attributes: {}, children: [one] };
      expect(importNetscapeHtml(html).items).to.deep.equal([
        loop,
        { kind: 'folder', title: 'Links', attributes: {}, children: [one, loop] },
      ]);
    });

    it('refuses an output past 50 MB with 422 output_too_large, spending nothing and storing nothing', async () => {
      // One bookmark with a 1 MB title, copied by 60 aliases: a 1 MB upload that would write 61 MB.
      const title = 'x'.repeat(MIB);
      const xbel = xbelOf([
        bookmark('https://example.com/', title, { id: 'big' }),
        ...Array.from({ length: 60 }, () => alias('big')),
      ]);
      const stored = () =>
        readdirSync(path.join(stack.dataDir, 'artifacts', 'bookmark')).filter((f) => f.includes('.'));
      const before = stored();
      let body: Envelope | undefined;
      const credits = await spent(stack, async () => {
        body = await expectFailure(await upload(stack, 'xbel-to-html', xbel), 422, 'output_too_large');
      });
      expect(body?.error?.message).to.equal(
        'the output would be larger than 50.0 MB (52428800 bytes), the most this file may convert to',
      );
      expect(credits).to.equal(0);
      expect(stored()).to.deep.equal(before);
      expect(readdirSync(path.join(stack.dataDir, 'artifacts', 'bookmark', 'tmp'))).to.deep.equal([]);
      // Under the bound, the same file converts: 40 copies write 41 MB.
      const fits = xbelOf([
        bookmark('https://example.com/', title, { id: 'big' }),
        ...Array.from({ length: 40 }, () => alias('big')),
      ]);
      await succeeded(await upload(stack, 'xbel-to-html', fits), 'xbel-to-html');
    });

    it('converts 100 nested folder levels and refuses 101 with a clear 500', async () => {
      await succeeded(await upload(stack, 'xbel-to-html', xbelOf([nestedFolders(100)])), 'xbel-to-html');
      const credits = await spent(stack, async () => {
        const body = await expectFailure(
          await upload(stack, 'xbel-to-html', xbelOf([nestedFolders(101)])),
          500,
          'nesting_too_deep',
        );
        expect(body.error?.message).to.equal('folders are nested deeper than 100 levels; at most 100 are supported');
      });
      expect(credits).to.equal(0);
    });

    it('answers 500 for a file that is not XML or has no xbel root', async () => {
      await expectFailure(await upload(stack, 'xbel-to-html', '<xbel><folder></xbel>'), 500, 'invalid_xbel');
      const body = await expectFailure(
        await upload(stack, 'xbel-to-html', '<?xml version="1.0"?><opml/>'),
        500,
        'invalid_xbel',
      );
      expect(body.error?.message).to.equal('the root element is <opml>, not <xbel>');
    });
  });

  describe('upload rules (both routes)', () => {
    const xbel = xbelOf([bookmark('https://example.com/', 'x')]);

    for (const route of ['xbel-decrypt', 'xbel-to-html'] as const) {
      it(`${route}: 400 without a file, 400 for another type, 413 past 10 MB; nothing spent`, async () => {
        const credits = await spent(stack, async () => {
          const noFile = new FormData();
          noFile.set('key', 'k');
          await expectFailure(
            await stack.api(`/v1/${route}`, { method: 'POST', body: noFile }),
            400,
            'invalid_request',
          );
          await expectFailure(
            await stack.api(`/v1/${route}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ file: xbel, key: 'k' }),
            }),
            400,
            'invalid_request',
          );
          const wrongType = await expectFailure(
            await upload(stack, route, xbel, { name: 'bookmarks.xml', type: 'text/xml', key: 'k' }),
            400,
            'invalid_request',
          );
          expect(wrongType.error?.message).to.equal(
            'file must have the .xbel extension or be sent as application/octet-stream',
          );
          const big = Buffer.alloc(10 * MIB + 1, 0x20);
          const tooLarge = await expectFailure(await upload(stack, route, big, { key: 'k' }), 413, 'payload_too_large');
          expect(tooLarge.error?.message).to.match(/larger than 10 MB/);
        });
        expect(credits).to.equal(0);
        // Either rule admits a file: the extension (any case) or the octet-stream type.
        await succeeded(await upload(stack, route, xbel, { name: 'B.XBEL', type: 'text/plain', key: 'k' }), route);
        await succeeded(
          await upload(stack, route, xbel, { name: 'b.txt', type: 'application/octet-stream', key: 'k' }),
          route,
        );
      });
    }

    it('decides 413 while a chunked upload streams, without reading it to the end', async () => {
      // 64 MB announced by nothing: the body is a stream with no Content-Length.
      const form = new FormData();
      form.set('file', new Blob([Buffer.alloc(64 * MIB, 0x20)]), 'big.xbel');
      const encoded = new Response(form);
      const res = await stack.api('/v1/xbel-to-html', {
        method: 'POST',
        body: encoded.body,
        headers: { 'content-type': encoded.headers.get('content-type') ?? '' },
        duplex: 'half',
      } as RequestInit);
      await expectFailure(res, 413, 'payload_too_large');
      expect(creditsHeader(res)).to.be.a('number');
    });

    it('answers 413 for a file that passes 10 MB while the client is still sending, and never ends', async () => {
      const answer = await stalledUpload(stack, 'xbel-to-html', 'file', 11 * MIB);
      expect(answer, 'no answer while the body stalled').to.not.equal(undefined);
      expect(answer?.status).to.equal(413);
      expect(answer?.body.error).to.include({ code: 'payload_too_large' });
    });

    it('refuses a file under another field name (400) at once, without reading it', async () => {
      const form = new FormData();
      form.set('upload', new Blob([xbel]), 'bookmarks.xbel');
      const message = 'unexpected file field "upload": send the file in the field "file"';
      const body = await expectFailure(
        await stack.api('/v1/xbel-to-html', { method: 'POST', body: form }),
        400,
        'invalid_request',
      );
      expect(body.error?.message).to.equal(message);
      // Answered while a large file under that name is still on its way: it is not drained.
      const answer = await stalledUpload(stack, 'xbel-to-html', 'upload', 11 * MIB);
      expect(answer, 'no answer while the body stalled').to.not.equal(undefined);
      expect(answer?.status).to.equal(400);
      expect(answer?.body.error).to.include({ code: 'invalid_request', message });
    });

    it('xbel-decrypt: 400 when key is missing, even for a plain file', async () => {
      const body = await expectFailure(await upload(stack, 'xbel-decrypt', xbel), 400, 'invalid_request');
      expect(body.error?.message).to.equal('key is required');
    });
  });

  describe('hostile XML', () => {
    const MB10 = 10 * MIB - 64 * 1024;

    it('a billion-laughs file and external entities fail fast and read or fetch nothing', async () => {
      let requests = 0;
      const server = http.createServer((_req, res) => {
        requests++;
        res.end('secret');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/entity`;
      try {
        const lols = Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`).join('');
        const use = '<xbel><title>&x;</title></xbel>';
        const files = [
          `<?xml version="1.0"?><!DOCTYPE xbel [<!ENTITY l0 "lol">${lols}]><xbel><title>&l9;</title></xbel>`,
          `<?xml version="1.0"?><!DOCTYPE xbel [<!ENTITY x SYSTEM "file:///etc/passwd">]>${use}`,
          `<?xml version="1.0"?><!DOCTYPE xbel [<!ENTITY x SYSTEM "${url}">]>${use}`,
          `<?xml version="1.0"?><!DOCTYPE xbel SYSTEM "${url}">${use}`,
        ];
        for (const file of files) {
          for (const route of ['xbel-to-html', 'xbel-decrypt'] as const) {
            const res = await upload(stack, route, file, { key: 'k' });
            const body = await expectFailure(res, 500, route === 'xbel-to-html' ? 'invalid_xbel' : 'invalid_file');
            expect(body.error?.message).not.to.include('root:');
          }
        }
        expect(requests).to.equal(0);
      } finally {
        server.close();
      }
    });

    it('10 MB hostile files fail in bounded memory while other conversions stay served', async () => {
      const pid = stack.pid('bookmark');
      if (pid === undefined) throw new Error('no bookmark process');
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const hostile = [
        `<xbel>${'<folder>'.repeat(MB10 / 8)}`,
        `<xbel>${'<b>'.repeat(MB10 / 3)}`,
        `<xbel><bookmark href="${'a'.repeat(MB10)}`,
        `<xbel>${'x'.repeat(MB10)}</xbel>`,
        'x'.repeat(MB10),
      ];
      const small = xbelOf([bookmark('https://example.com/', 'fine')]);
      const started = Date.now();
      const [failures, normal] = await Promise.all([
        Promise.all(hostile.map(async (file) => (await upload(stack, 'xbel-to-html', file)).status)),
        (async () => {
          const begun = Date.now();
          await succeeded(await upload(stack, 'xbel-to-html', small), 'xbel-to-html');
          return Date.now() - begun;
        })(),
      ]);
      expect(failures).to.deep.equal([500, 500, 500, 200, 500]);
      // Liveness bounds ten times what these take on a loaded machine.
      expect(normal).to.be.below(20_000);
      expect(Date.now() - started).to.be.below(60_000);
      const peakMb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
      expect(peakMb).to.be.below(600);
    });

    it('a valid 10 MB conversion raises the service’s peak memory by a small multiple of the file', async () => {
      const pid = stack.pid('bookmark');
      if (pid === undefined) throw new Error('no bookmark process');
      const { text, bookmarks } = largeXbel(MB10);
      const status = () => readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (field: string, text: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1]);
      writeFileSync(`/proc/${pid}/clear_refs`, '5'); // the peak restarts from the present RSS
      const before = kb('VmRSS', status());
      const res = await upload(stack, 'xbel-to-html', text);
      const growth = (kb('VmHWM', status()) - before) * 1024;
      const html = await (await download(stack, (await succeeded(res, 'xbel-to-html')).downloadUrl)).text();
      expect(html.split('\n').filter((line) => line.includes('<DT><A ')).length).to.equal(bookmarks);
      // Measured 5-9x (the bytes, gRPC's buffers, the item tree, garbage not yet collected); a bound
      // that a copy of the whole text kept at every step would cross.
      const ratio = growth / Buffer.byteLength(text);
      expect(ratio, `peak RSS growth ${(growth / MIB).toFixed(1)} MB`).to.be.below(15);
    });

    it('a 10 MB XBEL on one line converts like any other', async () => {
      const { text, bookmarks } = largeXbel(MB10);
      const res = await upload(stack, 'xbel-to-html', text.replace(/\n/g, ''));
      const html = await (await download(stack, (await succeeded(res, 'xbel-to-html')).downloadUrl)).text();
      expect(html.split('\n').filter((line) => line.includes('<DT><A ')).length).to.equal(bookmarks);
    });
  });

  describe('downloads', () => {
    it('need no credential, spend nothing, and encode any file name per RFC 6266', async () => {
      const res = await upload(stack, 'xbel-to-html', xbelOf([]), { name: 'Lesezeichen “ü” 2024.xbel' });
      const { downloadUrl, fileName } = await succeeded(res, 'xbel-to-html');
      expect(fileName).to.equal('Lesezeichen “ü” 2024.html');
      const credits = await spent(stack, async () => {
        // With the stack's key (whose credits are counted), and with no credential at all.
        expect((await stack.api(new URL(downloadUrl).pathname)).status).to.equal(200);
        const file = await download(stack, downloadUrl);
        expect(file.status).to.equal(200);
        expect(file.headers.get('content-disposition')).to.equal(
          // ISO-8859-1 fallback (ü stays, the curly quotes do not), then the UTF-8 form.
          'attachment; filename="Lesezeichen ?ü? 2024.html"; ' +
            "filename*=UTF-8''Lesezeichen%20%E2%80%9C%C3%BC%E2%80%9D%202024.html",
        );
      });
      expect(credits).to.equal(0);
    });

    it('build downloadUrl from the configured public base, never from the Host header', async () => {
      const res = await upload(stack, 'xbel-to-html', xbelOf([]), { headers: { host: 'evil.example' } });
      expect((await succeeded(res, 'xbel-to-html')).downloadUrl.startsWith(`${PUBLIC_BASE_URL}/`)).to.equal(true);
      // The website's /api/v1 alias uploads too; the link is the API's own.
      const viaAlias = await upload(stack, 'xbel-decrypt', xbelOf([]), { key: 'k', prefix: '/api/v1' });
      const { downloadUrl } = await succeeded(viaAlias, 'xbel-decrypt');
      expect((await download(stack, downloadUrl)).status).to.equal(200);
    });

    it('refuse names that leave the store or belong to the other route', async () => {
      const res = await upload(stack, 'xbel-to-html', xbelOf([]));
      const name = new URL((await succeeded(res, 'xbel-to-html')).downloadUrl).pathname.split('/').pop() ?? '';
      for (const path of [
        `/v1/xbel-decrypt/download/${name}`,
        '/v1/xbel-to-html/download/..%2F..%2F..%2Fetc%2Fpasswd',
        '/v1/xbel-to-html/download/../../package.json',
        `/v1/xbel-to-html/download/${name.replace('.html', '.json')}`,
      ]) {
        const got = await stack.api(path, { anonymous: true });
        expect(got.status, path).to.equal(404);
        await json(got);
      }
    });
  });
});

describe('XBEL outputs expire', function () {
  this.timeout(60_000);
  let stack: TestStack;

  before(async () => {
    stack = await startTestStack({
      envFor: { edge: { PUBLIC_BASE_URL }, bookmark: { XBEL_TTL_MS: '1500', ARTIFACT_SWEEP_MS: '200' } },
    });
  });
  after(async () => stack?.stop());

  it('a download answers 404 once the lifetime has passed, and the file is deleted', async () => {
    const res = await upload(stack, 'xbel-to-html', xbelOf([bookmark('https://example.com/', 'x')]));
    const { downloadUrl } = await succeeded(res, 'xbel-to-html');
    expect((await download(stack, downloadUrl)).status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await expectFailure(await download(stack, downloadUrl), 404, 'file_not_found');
    // The sweep deletes the bytes and their record, not only hides them.
    const stored = () => readdirSync(path.join(stack.dataDir, 'artifacts', 'bookmark')).filter((f) => f.includes('.'));
    await eventually(async () => expect(stored()).to.deep.equal([]));
  });
});
