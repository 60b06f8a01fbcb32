/**
 * The SDK (@webutil/client) and the CLI (webutil) against a running stack through the REST edge:
 * every subcommand once on fixture sites, the exit codes, the progress bar on a pseudo-terminal,
 * `--json` parsed back, retries of a 429 and a 503 through a proxy, an idempotent retry after a
 * lost answer spending once, and one clear line for a bad key, an unreachable API, a missing file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { OPERATIONS, Webutil, WebutilError } from '@webutil/client';
import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { account } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { issue, startTlsServer, type TlsServer } from '@webutil/scripts/tls-fixtures';
import { bookmark, floccusEncrypt, xbelOf } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';

/** What a one-page link check spends, from the contract. */
const LINK_CHECK_CREDITS = OPERATIONS['broken-links']?.credits ?? Number.NaN;
const CLI = new URL('../dist/main.js', import.meta.url).pathname;

/** The key's remaining credits, read over plain HTTP rather than through the client under test. */
async function remaining(stack: TestStack, apiKey: string): Promise<number> {
  const res = await stack.api('/v1/quota', { apiKey });
  const body = (await res.json()) as { data: { remaining: number } };
  expect(res.status, JSON.stringify(body)).to.equal(200);
  return body.data.remaining;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A proxy in front of the edge whose answers a test may replace, request by request. */
interface Proxy {
  url: string;
  /** Requests seen: method, path and Idempotency-Key. */
  seen: { method: string; path: string; key: string | undefined }[];
  /** Answers the next requests to `path` with these statuses (429/503 with Retry-After: 1) before forwarding. */
  refuse(path: string, ...statuses: number[]): void;
  /** Forwards the next request to `path`, waits for the edge's whole answer, then drops the connection. */
  loseAnswer(path: string): void;
  close(): Promise<void>;
}

async function startProxy(target: string): Promise<Proxy> {
  const refusals = new Map<string, number[]>();
  const lost = new Set<string>();
  const seen: Proxy['seen'] = [];
  const server = http.createServer(async (req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://proxy').pathname;
    const key = req.headers['idempotency-key'];
    seen.push({ method: req.method ?? '', path: pathname, key: Array.isArray(key) ? key[0] : key });
    const status = refusals.get(pathname)?.shift();
    if (status) {
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1', 'x-request-id': 'proxy' });
      res.end(JSON.stringify({ success: false, error: { code: 'rate_limited', message: `proxy says ${status}` } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
    ) as Record<string, string>;
    const answer = await fetch(`${target}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await answer.arrayBuffer());
    if (lost.delete(pathname)) {
      req.socket.destroy();
      return;
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)) out[name] = value;
    });
    res.writeHead(answer.status, out);
    res.end(body);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    refuse: (path, ...statuses) => refusals.set(path, statuses),
    loseAnswer: (path) => lost.add(path),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('the SDK and the webutil CLI, against a running stack', function () {
  this.timeout(300_000);
  let stack: TestStack;
  let site: FixtureSite;
  let dns: FixtureDns;
  let tls: TlsServer;
  let proxy: Proxy;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'webutil-cli-'));
    const self = await issue({ commonName: 'localhost', altNames: ['localhost'] });
    [site, dns, tls] = await Promise.all([
      startFixtureSite(),
      startFixtureDns(),
      startTlsServer({ key: self.keyPem, chain: [self.pem] }),
    ]);
    // A page with a broken link and a working one, a second page, and a page with nothing broken.
    const page = (body: string) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><head><title>Fixture</title></head><body>${body}</body></html>`);
    };
    site.route('/home', page('<a href="/ok">ok</a> <a href="/status/404">gone</a> <a href="/second">second</a>'));
    site.route('/second', page('<a href="/ok">ok</a> <a href="/home">home</a>'));
    site.route('/clean', page('<a href="/ok">ok</a>'));
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: {
        'tls-scan': {
          SSL_SCAN_DNS_SERVERS: dns.server,
          SSL_SCAN_HANDSHAKE_TIMEOUT_MS: '2000',
          SSL_SCAN_PROBE_TIMEOUT_MS: '2000',
        },
      },
    });
    proxy = await startProxy(stack.edgeUrl);
  });
  after(async () => {
    await proxy?.close();
    await stack?.stop();
    await Promise.all([site?.close(), dns?.close(), tls?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the CLI with the stack's key and URL from the environment (stdout piped: no colour, no bar). */
  const cli = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { env: { ...process.env, WEBUTIL_BASE_URL: stack.edgeUrl, WEBUTIL_API_KEY: stack.apiKey, ...env } },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const file = (name: string) => path.join(dir, name);

  describe('every subcommand once', () => {
    it('links: a page with a broken link exits 1 with a table and a summary; --json parses back', async () => {
      const run = await cli(['links', site.url('/home')]);
      expect(run.code, run.stderr).to.equal(1);
      expect(run.stdout).to.match(/broken\t404\t.*\/status\/404/);
      expect(run.stdout).to.match(/✖ 1 broken, 0 warnings, \d+ ok · grade \w/);
      const clean = await cli(['links', site.url('/clean'), '--json']);
      expect(clean.code, clean.stderr).to.equal(0);
      const result = JSON.parse(clean.stdout);
      expect(result.summary.broken).to.equal(0);
      expect(result.links.map((l: { url: string }) => l.url)).to.include(site.url('/ok'));
      expect(clean.stderr).to.match(/^✔ 0 broken/);
    });

    it('links --format junit: the export on stdout from one check, spending its credits once', async () => {
      const { apiKey } = await account(stack, 'STARTER', '--credits', '100');
      const run = await cli(['links', site.url('/home'), '--format', 'junit'], { WEBUTIL_API_KEY: apiKey });
      expect(run.code, run.stderr).to.equal(1);
      expect(run.stdout).to.include('<testsuite').and.include('/status/404');
      expect(await remaining(stack, apiKey)).to.equal(100 - LINK_CHECK_CREDITS);
    });

    it('links --crawl: a live progress bar on a pseudo-terminal, the SARIF export to -o', async () => {
      const sarif = file('links.sarif');
      const command = [process.execPath, CLI, 'links', site.url('/home'), '--crawl', '--format', 'sarif', '-o', sarif]
        .map((arg) => `'${arg}'`)
        .join(' ');
      const run = await new Promise<Run>((resolve) => {
        execFile(
          'script',
          ['-q', '-e', '-c', command, '/dev/null'],
          { env: { ...process.env, WEBUTIL_BASE_URL: stack.edgeUrl, WEBUTIL_API_KEY: stack.apiKey, TERM: 'xterm' } },
          (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
        );
      });
      expect(run.code, run.stdout + run.stderr).to.equal(1);
      // The bar, its counts, then the summary, in colour on a terminal.
      expect(run.stdout).to.match(/crawling \[[^\]]+\] \d+\/\d+ pages \d+\/\d+ · links checked \d+\/\d+ \| \d+s/);
      expect(run.stdout).to.match(/✖.* 1 broken, 0 warnings, \d+ ok on \d+ pages/);
      expect(run.stdout).to.include('\u001b[31m✖\u001b[39m 1 broken');
      const report = JSON.parse(readFileSync(sarif, 'utf8'));
      expect(report.version).to.equal('2.1.0');
      expect(JSON.stringify(report.runs[0].results)).to.include('/status/404');
    });

    it('extract, meta, down, quota: each answers and exits 0', async () => {
      const extract = await cli(['extract', site.url('/home'), '--include-resources', '--json']);
      expect(extract.code, extract.stderr).to.equal(0);
      expect(JSON.parse(extract.stdout).totalLinks).to.equal(3);
      const meta = await cli(['meta', site.url('/home'), '--json']);
      expect(meta.code, meta.stderr).to.equal(0);
      expect(JSON.parse(meta.stdout).url).to.equal(site.url('/home'));
      const down = await cli(['down', site.url('/ok'), '--expect-status', '200-299', '--method', 'HEAD']);
      expect(down.code, down.stderr).to.equal(0);
      expect(down.stdout).to.match(/verdict\s+up/);
      const gone = await cli(['down', site.url('/status/503')]);
      expect(gone.code, gone.stderr).to.equal(1);
      const credits = await cli(['quota', '--json']);
      expect(credits.code, credits.stderr).to.equal(0);
      expect(JSON.parse(credits.stdout).remaining).to.be.a('number');
    });

    it('ssl: a self-signed certificate is not valid, exit 1', async () => {
      const run = await cli(['ssl', 'localhost', '--port', String(tls.port), '--json']);
      expect(run.code, run.stderr).to.equal(1);
      const result = JSON.parse(run.stdout);
      expect(result).to.include({ domain: 'localhost', port: tls.port, isValid: false });
    });

    it('screenshot and pdf: the files saved with -o', async () => {
      const shot = await cli(['screenshot', site.url('/home'), '-o', file('page.png'), '--viewport', '800x600']);
      expect(shot.code, shot.stderr).to.equal(0);
      expect(readFileSync(file('page.png')).subarray(1, 4).toString()).to.equal('PNG');
      const pdf = await cli(['pdf', site.url('/home'), '-o', file('page.pdf')]);
      expect(pdf.code, pdf.stderr).to.equal(0);
      expect(readFileSync(file('page.pdf')).subarray(0, 5).toString()).to.equal('%PDF-');
    });

    it('bookmarks check, to-html, to-xbel, decrypt', async () => {
      const xbel = xbelOf([bookmark(site.url('/ok'), 'fine'), bookmark(site.url('/status/404'), 'gone')]);
      writeFileSync(file('marks.xbel'), xbel);
      const check = await cli(['bookmarks', 'check', file('marks.xbel'), '--json']);
      expect(check.code, check.stderr).to.equal(1);
      expect(JSON.parse(check.stdout).summary).to.include({ broken: 1 });

      const html = await cli(['bookmarks', 'to-html', file('marks.xbel'), '-o', file('marks.html')]);
      expect(html.code, html.stderr).to.equal(0);
      expect(readFileSync(file('marks.html'), 'utf8')).to.include(site.url('/status/404'));
      const back = await cli(['bookmarks', 'to-xbel', file('marks.html'), '-o', file('back.xbel')]);
      expect(back.code, back.stderr).to.equal(0);
      expect(readFileSync(file('back.xbel'), 'utf8'))
        .to.include('<xbel')
        .and.include(site.url('/ok'));

      writeFileSync(file('locked.xbel'), await floccusEncrypt(xbel, 'secret words'));
      const plain = await cli(['bookmarks', 'decrypt', file('locked.xbel'), '--key', 'secret words', '-o', '-']);
      expect(plain.code, plain.stderr).to.equal(0);
      expect(plain.stdout).to.include(site.url('/status/404'));
    });
  });

  describe('failures: one clear line and their exit code', () => {
    const oneLine = (run: Run) => {
      expect(run.stdout).to.equal('');
      expect(run.stderr.trimEnd().split('\n')).to.have.length(1);
      return run.stderr.trim();
    };

    it('a bad key exits 3', async () => {
      const run = await cli(['quota'], { WEBUTIL_API_KEY: `wu_live_${'x'.repeat(32)}` });
      expect(run.code).to.equal(3);
      expect(oneLine(run)).to.match(/^webutil: .+ \(invalid_api_key, 401, request [\w-]+\)$/);
    });

    it('an unreachable base URL exits 3', async () => {
      const closed = http.createServer();
      closed.listen(0, '127.0.0.1');
      await new Promise((resolve) => closed.once('listening', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise((resolve) => closed.close(resolve));
      const run = await cli(['quota', '--retries', '0'], { WEBUTIL_BASE_URL: `http://127.0.0.1:${port}` });
      expect(run.code).to.equal(3);
      expect(oneLine(run)).to.equal(`webutil: cannot reach http://127.0.0.1:${port} (ECONNREFUSED)`);
    });

    it('a missing file exits 2, an unknown option 2, out of credits 4', async () => {
      const missing = await cli(['bookmarks', 'check', file('nope.xbel')]);
      expect(missing.code).to.equal(2);
      expect(oneLine(missing)).to.equal(`webutil: cannot read ${file('nope.xbel')}: no such file`);
      const usage = await cli(['links', site.url('/home'), '--no-such-option']);
      expect(usage.code).to.equal(2);
      expect(usage.stderr).to.include("unknown option '--no-such-option'");
      const { apiKey } = await account(stack, 'STARTER', '--credits', '0');
      const broke = await cli(['meta', site.url('/home')], { WEBUTIL_API_KEY: apiKey });
      expect(broke.code).to.equal(4);
      expect(oneLine(broke)).to.match(/\(insufficient_credits, 402, request [\w-]+\)$/);
    });
  });

  describe('the SDK', () => {
    it('retries a 429 and a 503 after their Retry-After, then answers', async () => {
      const retries: number[] = [];
      const client = new Webutil({
        apiKey: stack.apiKey,
        baseUrl: proxy.url,
        onRetry: ({ status, delayMs }) => {
          retries.push(status);
          expect(delayMs).to.equal(1000);
        },
      });
      proxy.refuse('/v1/quota', 429, 503);
      const before = proxy.seen.length;
      expect((await client.quota()).remaining).to.be.a('number');
      expect(retries).to.deep.equal([429, 503]);
      expect(proxy.seen.length - before).to.equal(3);
      // Out of retries, the last refusal is the typed error.
      proxy.refuse('/v1/quota', 503, 503);
      const error = await new Webutil({ apiKey: stack.apiKey, baseUrl: proxy.url, retries: 1 })
        .quota()
        .catch((err: unknown) => err);
      expect(error).to.be.instanceOf(WebutilError);
      expect(error).to.include({ status: 503, code: 'rate_limited', requestId: 'proxy', retryAfter: 1 });
    });

    it('retries a credit-spending call whose answer was lost with its Idempotency-Key: spent once', async () => {
      const { apiKey } = await account(stack, 'STARTER', '--credits', '100');
      const client = new Webutil({ apiKey, baseUrl: proxy.url, maxRetryDelayMs: 100 });
      proxy.loseAnswer('/v1/broken-links');
      const before = proxy.seen.length;
      const result = await client.brokenLinks({ url: site.url('/home') });
      expect(result.summary.broken).to.equal(1);
      const calls = proxy.seen.slice(before).filter((r) => r.path === '/v1/broken-links');
      expect(calls).to.have.length(2);
      expect(calls[0]?.key).to.be.a('string').and.equal(calls[1]?.key);
      expect(await remaining(stack, apiKey)).to.equal(100 - LINK_CHECK_CREDITS);
    });

    it('waits for a crawl with progress, and stops waiting on abort', async () => {
      const client = new Webutil({ apiKey: stack.apiKey, baseUrl: stack.edgeUrl });
      const { jobId } = await client.startBrokenLinksCrawl({ url: site.url('/home') });
      const aborted = await client
        .waitForJob('broken-links', jobId, { signal: AbortSignal.abort(new Error('stop')) })
        .catch((err: Error) => err.message);
      expect(aborted).to.equal('stop');
      const phases: string[] = [];
      const job = await client.waitForJob('broken-links', jobId, {
        intervalMs: 200,
        onProgress: (j) => phases.push(j.progress.phase),
      });
      expect(job.status).to.equal('done');
      expect(phases.at(-1)).to.equal('done');
      expect(job.result?.pagesCrawled).to.be.at.least(2);
      const csv = await (await client.exportBrokenLinksCrawl(jobId, 'csv')).text();
      expect(csv).to.include('/status/404');
    });
  });
});
