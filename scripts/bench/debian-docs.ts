/**
 * Issue 41 benchmark: a real documentation set, Python's HTML docs from Debian's python3.X-doc
 * package (about 530 pages; pages with thousands of in-page anchors, and a general index of about
 * 17,000 links), served as static files on 127.0.0.1 and crawled by us (the broken-link crawl
 * through the edge, fragments checked, caps lifted so every page is crawled) and by linkinator's
 * CLI (--recurse --check-fragments), both checking the site's own links only (offline, other sites
 * cannot answer), alternating, BENCH_ROUNDS times (medians), with what each
 * found missing compared.
 *
 * The package is fetched with `apt-get download` and unpacked with `dpkg-deb -x` into
 * BENCH_DEBIAN_DOCS (default: a folder under the system's temporary directory), once.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestStack } from '../src/test-stack.js';
import { linkinator, median, ours } from './link-crawls.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CACHE = process.env.BENCH_DEBIAN_DOCS ?? path.join(os.tmpdir(), 'webutil-debian-docs');

/** The unpacked package's HTML root, fetched and unpacked on first use. */
function pythonDocsRoot(): string {
  const find = () =>
    existsSync(path.join(CACHE, 'usr/share/doc'))
      ? readdirSync(path.join(CACHE, 'usr/share/doc'))
          .filter((d) => /^python3\.\d+$/.test(d))
          .map((d) => path.join(CACHE, 'usr/share/doc', d, 'html'))
          .find((d) => existsSync(path.join(d, 'genindex-all.html')))
      : undefined;
  const found = find();
  if (found) return found;
  mkdirSync(CACHE, { recursive: true });
  // python3-doc names the versioned package that holds the HTML.
  const depends = execFileSync('apt-cache', ['depends', 'python3-doc'], { encoding: 'utf8' });
  const pkg = /python3\.\d+-doc/.exec(depends)?.[0];
  if (!pkg) throw new Error('apt-cache names no python3.X-doc package');
  execFileSync('apt-get', ['download', pkg], { cwd: CACHE, stdio: 'ignore' });
  const deb = readdirSync(CACHE).find((f) => f.startsWith(pkg) && f.endsWith('.deb'));
  if (!deb) throw new Error(`apt-get download ${pkg} left no .deb`);
  execFileSync('dpkg-deb', ['-x', path.join(CACHE, deb), CACHE]);
  const unpacked = find();
  if (!unpacked) throw new Error(`${pkg} holds no genindex-all.html`);
  return unpacked;
}

/** Files under root, as a web server would serve them (a folder's index.html; symlinks followed). */
async function serveStatic(root: string): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file = path.join(root, path.normalize(pathname));
    if (!file.startsWith(root)) return void res.writeHead(403).end();
    try {
      if (statSync(file).isDirectory()) file = path.join(file, 'index.html');
      const size = statSync(file).size;
      const type = file.endsWith('.html')
        ? 'text/html; charset=utf-8'
        : file.endsWith('.css')
          ? 'text/css'
          : file.endsWith('.js')
            ? 'text/javascript'
            : 'application/octet-stream';
      res.writeHead(200, { 'content-type': type, 'content-length': size });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const root = pythonDocsRoot();
console.log(`\n== Debian documentation set (issue 41): ${root}, linkinator 7.6.1 CLI on Node ${process.version} ==`);
console.log(
  `load average at the start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')} (${os.cpus().length} cores)`,
);
const site = await serveStatic(root);
const stack = await startTestStack({
  allowTargets: '127.0.0.0/8',
  env: { LOG_LEVEL: 'warn', CRAWL_MAX_PAGES: '100000', CRAWL_MAX_CHECKED_LINKS: '100000' },
});
try {
  const entry = `${site.origin}/`;
  // Offline, every other site is unreachable: both check this site's links only.
  const oursOptions = { checkExternal: false };
  const theirArgs = ['--skip', `^(?!${site.origin.replace(/[.]/g, '\\.')})`];
  const first = await ours(stack, entry, oursOptions);
  const mine: Awaited<ReturnType<typeof ours>>[] = [];
  const theirs: Awaited<ReturnType<typeof linkinator>>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    mine.push(await ours(stack, entry, oursOptions));
    theirs.push(await linkinator(entry, theirArgs));
    process.stderr.write(
      `round ${round + 1}: ours ${fmt(mine.at(-1)!.ms)} ms, linkinator ${fmt(theirs.at(-1)!.ms)} ms\n`,
    );
  }
  const [a, b] = [median(mine.map((m) => m.ms)), median(theirs.map((m) => m.ms))];
  const [last, theirLast] = [mine.at(-1)!, theirs.at(-1)!];
  console.log(
    `python docs: ours ${fmt(a)} ms, linkinator CLI ${fmt(b)} ms: ours ${fmt(b / a, 2)}x as fast ` +
      `(medians of ${ROUNDS}; our first crawl on the fresh service: ${fmt(first.ms)} ms)`,
  );
  console.log(`  pages crawled: ours ${last.pages}, linkinator ${theirLast.pages}`);
  const onlyOurs = [...last.missing].filter((u) => !theirLast.missing.has(u));
  const onlyTheirs = [...theirLast.missing].filter((u) => !last.missing.has(u));
  console.log(
    `  missing URLs: ours ${last.missing.size}, linkinator ${theirLast.missing.size}, ` +
      `only ours ${onlyOurs.length}, only linkinator ${onlyTheirs.length}`,
  );
  for (const u of onlyOurs.slice(0, 10)) console.log(`    only ours: ${u}`);
  for (const u of onlyTheirs.slice(0, 10)) console.log(`    only linkinator: ${u}`);
  console.log(`  missing fragments: ours ${last.fragments.size}, linkinator ${theirLast.fragments.size}`);
  for (const u of [...last.fragments].filter((f) => !theirLast.fragments.has(f)).slice(0, 10))
    console.log(`    fragment only ours: ${u}`);
  for (const u of [...theirLast.fragments].filter((f) => !last.fragments.has(f)).slice(0, 10))
    console.log(
      `    fragment only linkinator: ${u}${u.startsWith(site.origin) ? '' : ' (another site: its --skip passes it)'}`,
    );
} finally {
  await stack.stop();
  await site.close();
}
