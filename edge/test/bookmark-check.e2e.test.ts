import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostileBookmarkHtml } from '@webutil/scripts/bookmark-html-fixtures';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { floccusEncrypt, nestedFolders, xbelOf } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { type Envelope, expectFailure, json, quota } from './billing-helpers.js';

/**
 * Bookmark health through the REST edge: a file's bookmarks checked against a fixture site on
 * 127.0.0.1 with live, dead, redirected and slow pages, and cleaned copies of the file.
 */

const MIB = 1024 * 1024;
/** A hostile file just under the 10 MB upload limit. */
const HOSTILE_BYTES = 10 * MIB - 64 * 1024;

/** The fixture site: each path answers as its name says. */
function startSite(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/live' || path === '/live2' || path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>live page</body></html>');
    } else if (path === '/moved') {
      res.writeHead(301, { location: '/live2' }).end();
    } else if (path === '/temp') {
      res.writeHead(302, { location: '/live' }).end();
    } else if (path === '/slow') {
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>slow</html>'), 1_200);
    } else res.writeHead(404, { 'content-type': 'text/html' }).end('<html>not found</html>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function upload(stack: TestStack, file: string | Buffer, name: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.set('file', new Blob([file], { type: 'application/octet-stream' }), name);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return stack.api('/v1/bookmarks/check', { method: 'POST', body: form });
}

async function started(res: Response): Promise<string> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).to.equal(202);
  return body.data.jobId as string;
}

async function poll(stack: TestStack, jobId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await stack.api(`/v1/bookmarks/check/${jobId}`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    if (body.data.status !== 'crawling') return body.data;
    if (Date.now() > deadline) throw new Error(`still checking: ${JSON.stringify(body.data.progress)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('Bookmark health (POST /v1/bookmarks/check)', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let site: http.Server;
  let base: string;

  before(async () => {
    site = await startSite();
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { LINK_TIMEOUT_MS: '3000' } });
  });
  after(async () => {
    await stack?.stop();
    site?.close();
  });

  /** XBEL with what a cleaned copy must keep: metadata, separators, aliases, dates, a comment. */
  const xbel = () =>
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<xbel version="1.0">',
      '  <title>Mine</title>',
      '  <info><metadata owner="http://example.org/x" keep="yes"/></info>',
      `  <bookmark href="${base}/live" id="b1" added="2020-01-02T03:04:05Z"><title>Live — ok</title></bookmark>`,
      '  <folder id="f1" added="2019-05-05T00:00:00Z">',
      '    <title>Work</title>',
      `    <bookmark href="${base}/dead" id="b2"><title>Dead</title><desc>gone</desc></bookmark>`,
      `    <bookmark href="${base}/moved" id="b3"><title>Moved</title></bookmark>`,
      '    <separator/>',
      `    <bookmark href="${base}/temp"><title>Temp</title></bookmark>`,
      '    <alias ref="b2"/>',
      '    <alias ref="b1"/>',
      '  </folder>',
      '  <!-- a comment stays -->',
      `  <bookmark href="${base}/live"><title>Live again</title></bookmark>`,
      `  <bookmark href="${base}/slow" added="yesterday"><title>Slow</title></bookmark>`,
      '  <bookmark href="javascript:alert(1)"><title>Bookmarklet</title></bookmark>',
      '</xbel>',
      '',
    ].join('\n');

  it('checks every bookmark once, grades each, and summarises by folder; 2 credits', async () => {
    const before = (await quota(stack)).remaining;
    const job = await poll(stack, await started(await upload(stack, xbel(), 'mine.xbel')));
    expect(job.status, JSON.stringify(job)).to.equal('done');
    expect(before - (await quota(stack)).remaining).to.equal(2);
    const r = job.result;
    expect(r.sourceFormat).to.equal('xbel');
    expect(r.totalBookmarks).to.equal(7);
    expect(r.checkedBookmarks).to.equal(7);
    expect(r.uniqueUrls).to.equal(5);
    expect(r.truncated).to.equal(false);
    const [live, dead, moved, temp, again, slow, js] = r.bookmarks;
    expect(live).to.include({ index: 0, title: 'Live — ok', severity: 'ok', statusCode: 200 });
    expect(live.addedAt).to.equal('2020-01-02T03:04:05.000Z');
    expect(live.folderPath).to.deep.equal([]);
    expect(dead).to.include({ severity: 'broken', statusCode: 404 });
    expect(dead.folderPath).to.deep.equal(['Work']);
    expect(moved).to.include({ finalUrl: `${base}/live2`, permanentRedirect: true, statusCode: 200 });
    expect(temp).to.include({ finalUrl: `${base}/live`, permanentRedirect: false });
    expect(again).to.include({ duplicateOf: 0, severity: 'ok' });
    expect(slow).to.include({ severity: 'ok', statusCode: 200 });
    expect(slow).not.to.have.property('addedAt'); // not an ISO 8601 date
    expect(js).to.include({ severity: 'info', statusCode: null });
    expect(r.summary).to.include({ ok: 3, redirected: 2, broken: 1, unchecked: 1, duplicates: 1 });
    const work = r.summary.byFolder.find((f: any) => f.folderPath[0] === 'Work');
    expect(work).to.include({ total: 3, broken: 1, redirected: 2 });
    expect(r.healthScore).to.be.below(100);
    expect(r.grade).to.be.a('string');
  });

  it('hands back the file unchanged, or cleaned with only the edited bookmarks touched', async () => {
    const source = xbel();
    const jobId = await started(await upload(stack, source, 'mine.xbel'));
    expect((await poll(stack, jobId)).status).to.equal('done');
    const same = await stack.api(`/v1/bookmarks/check/${jobId}/download`);
    expect(same.status).to.equal(200);
    expect(same.headers.get('content-disposition')).to.match(/^attachment; filename="mine-cleaned\.xbel"/);
    expect(await same.text()).to.equal(source);

    const cleaned = await stack.api(`/v1/bookmarks/check/${jobId}/download?drop=broken,duplicates&update=redirects`);
    expect(cleaned.status).to.equal(200);
    const expected = source
      .split('\n')
      .filter((line) => !line.includes('/dead"') && !line.includes('Live again') && !line.includes('ref="b2"'))
      .join('\n')
      .replace(`href="${base}/moved"`, `href="${base}/live2"`);
    expect(await cleaned.text()).to.equal(expected);

    const asHtml = await stack.api(`/v1/bookmarks/check/${jobId}/download?format=html&drop=broken`);
    expect(asHtml.status).to.equal(200);
    expect(asHtml.headers.get('content-type')).to.match(/^text\/html/);
    const html = await asHtml.text();
    expect(html).to.include('<!DOCTYPE NETSCAPE-Bookmark-file-1>');
    expect(html).not.to.include('/dead');
    expect(html).to.include(`${base}/moved`);
  });

  it('reads a browser’s bookmark HTML and cleans it in place', async () => {
    const source = [
      '<!DOCTYPE NETSCAPE-Bookmark-file-1>',
      '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">',
      '<TITLE>Bookmarks</TITLE>',
      '<H1>Bookmarks</H1>',
      '<DL><p>',
      '    <DT><H3 ADD_DATE="1600000000">Bar</H3>',
      '    <DL><p>',
      `        <DT><A HREF="${base}/live" ADD_DATE="1600000001" ICON="data:x">Live</A>`,
      `        <DT><A HREF="${base}/dead" ADD_DATE="1600000002">Dead</A>`,
      '        <DD>a description',
      '        <HR>',
      `        <DT><A HREF="${base}/moved">Moved</A>`,
      '    </DL><p>',
      `    <DT><A HREF="${base}/live">Live twice</A>`,
      '</DL><p>',
      '',
    ].join('\n');
    const jobId = await started(await upload(stack, source, 'bookmarks.html'));
    const job = await poll(stack, jobId);
    expect(job.result.sourceFormat).to.equal('html');
    expect(job.result.bookmarks.map((b: any) => b.folderPath)).to.deep.equal([['Bar'], ['Bar'], ['Bar'], []]);
    expect(job.result.bookmarks[0].addedAt).to.equal('2020-09-13T12:26:41.000Z');
    const res = await stack.api(`/v1/bookmarks/check/${jobId}/download?drop=broken,duplicates&update=redirects`);
    const expected = source
      .split('\n')
      .filter((line) => !line.includes('/dead"') && !line.includes('a description') && !line.includes('Live twice'))
      .join('\n')
      .replace(`HREF="${base}/moved"`, `HREF="${base}/live2"`);
    expect(await res.text()).to.equal(expected);
    const asXbel = await stack.api(`/v1/bookmarks/check/${jobId}/download?format=xbel`);
    const text = await asXbel.text();
    expect(text).to.include('<xbel version="1.0">');
    expect(text).to.include('<title>Bar</title>');
    expect(text).to.include('added="2020-09-13T12:26:41.000Z"');
  });

  it('decrypts a Floccus file with its key; a wrong key or a cut file spends nothing', async () => {
    const plain = xbelOf([{ kind: 'bookmark', href: `${base}/live`, title: 'L' }]);
    const encrypted = await floccusEncrypt(plain, 'pw');
    const job = await poll(stack, await started(await upload(stack, encrypted, 'enc.xbel', { key: 'pw' })));
    expect(job.result.bookmarks[0]).to.include({ severity: 'ok' });
    const before = (await quota(stack)).remaining;
    await expectFailure(await upload(stack, encrypted, 'enc.xbel', { key: 'nope' }), 400, 'wrong_password');
    const { ciphertext, salt } = JSON.parse(encrypted);
    const cut = JSON.stringify({ ciphertext: ciphertext.slice(0, -24), salt });
    await expectFailure(await upload(stack, cut, 'enc.xbel', { key: 'pw' }), 400, 'corrupted_file');
    await expectFailure(await upload(stack, encrypted, 'enc.xbel'), 400, 'key_required');
    expect((await quota(stack)).remaining).to.equal(before);
  });

  it('refuses what is not a bookmark file, bombs and deep nesting, spending nothing', async () => {
    const before = (await quota(stack)).remaining;
    const form = new FormData();
    await expectFailure(await stack.api('/v1/bookmarks/check', { method: 'POST', body: form }), 400, 'invalid_request');
    await expectFailure(await upload(stack, 'just some text', 'notes.html'), 400, 'invalid_file');
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE xbel [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>' +
      '<xbel><bookmark href="&b;"/></xbel>';
    await expectFailure(await upload(stack, laughs, 'bomb.xbel'), 400, 'invalid_file');
    await expectFailure(await upload(stack, xbelOf([nestedFolders(150)]), 'deep.xbel'), 400, 'nesting_too_deep');
    await expectFailure(await upload(stack, xbelOf([]), 'empty.xbel'), 400, 'no_bookmarks');
    expect((await quota(stack)).remaining).to.equal(before);
    const missing = await stack.api('/v1/bookmarks/check/00000000-0000-4000-8000-000000000000');
    expect(missing.status).to.equal(404);
    const body = (await json(missing)) as Envelope;
    expect(body.error?.code).to.equal('job_not_found');
  });

  describe('conversions beside it', () => {
    const post = (route: string, file: string, name: string, fields: Record<string, string> = {}) => {
      const form = new FormData();
      form.set('file', new Blob([file], { type: 'application/octet-stream' }), name);
      for (const [k, v] of Object.entries(fields)) form.set(k, v);
      return stack.api(`/v1/${route}`, { method: 'POST', body: form });
    };

    it('reads 10 MB of hostile bookmark HTML within +128 MB, output bounded by its input', async function () {
      this.timeout(400_000); // four 10 MB uploads, each read in a worker
      const pid = stack.pid('bookmark');
      if (pid === undefined) throw new Error('no bookmark process');
      const kb = (field: string) =>
        Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      // What one file costs: the peak restarts from the present RSS before each upload.
      const growths: number[] = [];
      const measured = async <T>(send: () => Promise<T>): Promise<T> => {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        const rssBefore = kb('VmRSS');
        const result = await send();
        growths.push((kb('VmHWM') - rssBefore) / 1024);
        return result;
      };
      const before = (await quota(stack)).remaining;
      // Past 50,000 items, whatever the shape: refused while reading, nothing spent.
      for (const shape of ['deep', 'flat'] as const) {
        await expectFailure(
          await measured(() => post('html-to-xbel', hostileBookmarkHtml(shape, HOSTILE_BYTES), `${shape}.html`)),
          400,
          'too_many_bookmarks',
        );
      }
      expect((await quota(stack)).remaining).to.equal(before);
      // Under the bound: 99 folders deep, and three bookmarks of 3 MB attributes each.
      for (const file of [
        hostileBookmarkHtml('deep', HOSTILE_BYTES, { items: 49_000 }),
        hostileBookmarkHtml('attributes', HOSTILE_BYTES),
      ]) {
        const res = await measured(() => post('html-to-xbel', file, 'hostile.html'));
        const body = (await json(res)) as Envelope & { downloadUrl: string };
        expect(res.status, JSON.stringify(body)).to.equal(200);
        const xbel = await (await stack.api(new URL(body.downloadUrl).pathname, { anonymous: true })).arrayBuffer();
        // Today's by-depth indentation wrote 10x this deep file; the bound is 4x the input and 1 MiB.
        expect(xbel.byteLength)
          .to.be.above(0)
          .and.below(4 * file.length + MIB);
      }
      expect(growths).to.have.length(4);
      for (const growthMb of growths)
        expect(growthMb, `peak RSS growths ${growths.map(Math.round)} MB`).to.be.below(128);
    });

    it('POST /v1/html-to-xbel converts a browser export to XBEL for 1 credit; its file is its own', async () => {
      const html = [
        '<!DOCTYPE NETSCAPE-Bookmark-file-1>',
        '<TITLE>Bookmarks</TITLE><H1>Bookmarks</H1>',
        '<DL><p>',
        '  <DT><H3 ADD_DATE="1600000000">Tools &amp; more</H3>',
        '  <DL><p>',
        '    <DT><A HREF="https://example.org/?a=1&amp;b=2" ADD_DATE="1600000001">Ex</A>',
        '    <DD>desc',
        '    <HR>',
        '  </DL><p>',
        '</DL><p>',
      ].join('\n');
      const before = (await quota(stack)).remaining;
      const res = await post('html-to-xbel', html, 'export.html');
      const body = (await json(res)) as Envelope & { downloadUrl: string; fileName: string };
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body.fileName).to.equal('export.xbel');
      expect(before - (await quota(stack)).remaining).to.equal(1);
      const path = new URL(body.downloadUrl).pathname;
      expect(path).to.match(/^\/v1\/html-to-xbel\/download\//);
      const file = await stack.api(path, { anonymous: true });
      expect(file.status).to.equal(200);
      const xml = await file.text();
      expect(xml).to.include('<folder added="2020-09-13T12:26:40.000Z">');
      expect(xml).to.include('<title>Tools &amp; more</title>');
      expect(xml).to.include('href="https://example.org/?a=1&amp;b=2"');
      expect(xml).to.include('<desc>desc</desc>');
      expect(xml).to.include('<separator/>');
      const name = path.split('/').pop();
      expect((await stack.api(`/v1/xbel-decrypt/download/${name}`, { anonymous: true })).status).to.equal(404);
      await expectFailure(await post('html-to-xbel', '<html><p>hi</p></html>', 'x.html'), 400, 'invalid_html');
    });

    it('xbel-decrypt takes the salt of a Floccus file that carries none', async () => {
      const plain = xbelOf([{ kind: 'bookmark', href: 'https://example.org/', title: 'E' }]);
      const { ciphertext } = JSON.parse(await floccusEncrypt(plain, 'pw', 'bookmarks.xbel-salt'));
      const saltless = JSON.stringify({ ciphertext });
      await expectFailure(await post('xbel-decrypt', saltless, 'old.xbel', { key: 'pw' }), 500, 'invalid_file');
      const res = await post('xbel-decrypt', saltless, 'old.xbel', { key: 'pw', salt: 'bookmarks.xbel-salt' });
      const body = (await json(res)) as Envelope & { downloadUrl: string };
      expect(res.status, JSON.stringify(body)).to.equal(200);
      const file = await stack.api(new URL(body.downloadUrl).pathname, { anonymous: true });
      expect(await file.text()).to.equal(plain);
    });
  });
});

describe('Bookmark health over NATS: 5,000 bookmarks to one slow host', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let site: http.Server;
  let base: string;
  const prefix = uniquePrefix();
  let inFlight = 0;
  let maxInFlight = 0;
  let requests = 0;

  before(async () => {
    site = http.createServer((req, res) => {
      requests++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        // Each page its own text, and a real 404 elsewhere: no soft 404s.
        if (req.url?.startsWith('/p/'))
          res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>slow but fine: ${req.url}</p>`);
        else res.writeHead(404, { 'content-type': 'text/html' }).end('<p>no such page</p>');
      }, 300);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: {
        NATS_URL: SHARED_NATS_URL,
        CRAWL_NATS_PREFIX: prefix,
        CRAWL_TIME_BUDGET_MS: '5000',
        HOST_CONCURRENCY_MAX: '4',
      },
    });
  });
  after(async () => {
    await stack?.stop();
    site?.close();
    await removeStreams(SHARED_NATS_URL, prefix);
  });

  it('holds the host to its per-host bound and ends at the time budget with what it checked', async () => {
    const xbel = xbelOf(
      Array.from({ length: 5_000 }, (_, i) => ({ kind: 'bookmark' as const, href: `${base}/p/${i}`, title: `P${i}` })),
    );
    const begun = Date.now();
    const job = await poll(stack, await started(await upload(stack, xbel, 'many.xbel')));
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    const r = job.result;
    expect(r.checkedBookmarks).to.equal(5_000);
    expect(r.truncated).to.equal(true);
    expect(r.summary.ok).to.be.above(0);
    expect(r.summary.unchecked).to.be.above(0);
    expect(r.summary.ok + r.summary.unchecked).to.equal(5_000);
    const unchecked = r.bookmarks.find((b: any) => b.severity === 'info');
    expect(unchecked.reason).to.match(/time budget/);
    expect(maxInFlight).to.be.at.most(5);
    expect(requests).to.be.below(5_000);
    // The budget, not the list, ended it (generous bound for a loaded machine).
    expect(Date.now() - begun).to.be.below(60_000);
  });
});
