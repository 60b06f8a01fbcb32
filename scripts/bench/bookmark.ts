/**
 * Issue 11 benchmark: bookmark files through the edge, against floors measured in the same run.
 *  1. A 10 MB XBEL generated here (tens of thousands of bookmarks in nested folders). Floor: a
 *     plain htmlparser2 parse (xmlMode) of it in a fresh Node process: time, MB/s, peak RSS.
 *     Then POST /v1/xbel-to-html with it: round-trip time, the service's own time (its log),
 *     MB/s, and the bookmark service's peak RSS during the call (VmHWM, reset before).
 *  2. Decrypt: the same file, plain (checked and passed through), and a file of the same kind
 *     whose Floccus-encrypted form fits the 10 MB upload limit (base64 adds a third).
 *  3. p99 of GET /v1/quota at QUOTA_CONNECTIONS connections with nothing else running, then
 *     while 20 decrypts run back to back (each a 250,000-round PBKDF2).
 *  4. The edge's peak RSS (VmHWM, reset before) while 16 clients without a credential each send a
 *     9 MB upload at once, against the edge's idle RSS just before (issue 22: refused from the
 *     headers, the bodies are never held).
 *  5. Bookmark health (issue 27): 2,000 bookmarks over 50 fixture hosts (127.0.0.1-50, 15 ms per
 *     answer, some dead, some moved), POST /v1/bookmarks/check then polls every 50 ms to done: wall
 *     time, against linkinator 7.6 run on the same URLs written into one HTML page of links, in a
 *     fresh process (as its CLI) and a second, warm run, in the same run. `BENCH_BOOKMARK_PARTS=health`
 *     runs this part alone.
 *  6. Hostile bookmark HTML (issue 36): 10 MB files shaped to cost the reader most (99 folders deep,
 *     a flat list, long attributes; over and under the 50,000-item bound) through POST
 *     /v1/html-to-xbel, one at a time: the bookmark service's peak RSS growth (VmHWM, reset before)
 *     and CPU (utime + stime) per MB, against the goal (+128 MB, 1 s per MB) and against the floor,
 *     htmlparser2 over the same file in a fresh process. `BENCH_BOOKMARK_PARTS=hostile` alone.
 */

import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { hostileBookmarkHtml } from '../src/bookmark-html-fixtures.js';
import { REPO_ROOT } from '../src/local-stack.js';
import { startTestStack, type TestStack } from '../src/test-stack.js';
import { floccusEncrypt, largeXbel } from '../src/xbel-fixtures.js';
import { fmt, load } from './load.js';

const MAX_UPLOAD = 10 * 1024 * 1024;
const QUOTA_CONNECTIONS = 8;
const WINDOW_MS = Number(process.env.BENCH_DURATION_MS ?? 8_000);
const DECRYPTS = 20;
const BURST_UPLOADS = 16;
const BURST_BYTES = 9 * 1024 * 1024;
const run = promisify(execFile);

/** The floor: htmlparser2 over the whole file in its own process; peak RSS counted from after the read. */
const FLOOR = `
import { readFileSync, writeFileSync } from 'node:fs';
import { Parser } from 'htmlparser2';
const cpu = process.cpuUsage();
const status = () => readFileSync('/proc/self/status', 'utf8').split('\\n');
const kb = (field) => Number(/\\d+/.exec(status().find((line) => line.startsWith(field)))[0]);
const text = readFileSync(process.argv[1], 'utf8');
writeFileSync('/proc/self/clear_refs', '5');
const before = kb('VmRSS');
const started = performance.now();
let elements = 0;
const parser = new Parser({ onopentag() { elements++; } }, { xmlMode: process.argv[2] !== 'html' });
parser.end(text);
const ms = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
const cpuMs = (user + system) / 1000;
process.stdout.write(JSON.stringify({ ms, cpuMs, elements, beforeMb: before / 1024, peakMb: kb('VmHWM') / 1024 }));
`;

/** A process's CPU time so far (user + system), ms. */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks (USER_HZ 100)
}

function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(/\d+/.exec(status.split('\n').find((l) => l.startsWith(field)) ?? '')?.[0]);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

async function upload(stack: TestStack, route: string, bytes: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.set('file', new Blob([bytes], { type: 'application/octet-stream' }), 'bench.xbel');
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  const started = performance.now();
  const res = await stack.api(route, { method: 'POST', body: form });
  const body = (await res.json()) as { success: boolean; error?: unknown };
  if (!res.ok) throw new Error(`${route}: ${res.status} ${JSON.stringify(body.error)}`);
  return performance.now() - started;
}

/**
 * A 9 MB multipart upload without a credential over a raw socket, its body sent without waiting
 * for an answer; resolves with the answer's status once the edge closes the connection.
 */
function anonymousUpload(port: number): Promise<number> {
  const boundary = 'bench-burst';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="burst.xbel"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  const tail = `\r\n--${boundary}--\r\n`;
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1', 0, 64)));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? 0)));
    socket.write(
      `POST /v1/xbel-to-html HTTP/1.1\r\nHost: edge\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
        `Content-Length: ${Buffer.byteLength(head) + BURST_BYTES + Buffer.byteLength(tail)}\r\n\r\n${head}`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let left = BURST_BYTES;
    const pump = () => {
      while (left > 0 && !socket.destroyed) {
        left -= chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      if (!socket.destroyed) socket.write(tail);
    };
    pump();
  });
}

/** The service's own time for its last call of `rpc`, from its log. */
function serviceMs(stack: TestStack, rpc: string): number {
  for (let i = stack.logs.length - 1; i >= 0; i--) {
    const line = stack.logs[i] ?? '';
    if (line.startsWith('[bookmark]') && line.includes(`"rpc":"${rpc}"`) && line.includes('"ms"'))
      return Number(/"ms":(\d+)/.exec(line)?.[1]);
  }
  return Number.NaN;
}

async function filesBench(): Promise<void> {
  const file = largeXbel(MAX_UPLOAD - 64 * 1024);
  const bytes = Buffer.byteLength(file.text);
  const mb = bytes / (1024 * 1024);
  const xbelPath = path.join(os.tmpdir(), `bench-${process.pid}.xbel`);
  writeFileSync(xbelPath, file.text);

  // Every upload here comes from one address: the per-client bound of uploads in flight is raised above the decrypts.
  const stack = await startTestStack({
    env: { LOG_LEVEL: 'info' },
    envFor: { edge: { MAX_UPLOADS_PER_CLIENT: String(DECRYPTS + BURST_UPLOADS) } },
  });
  try {
    const pid = stack.pid('bookmark');
    if (pid === undefined) throw new Error('no bookmark process');
    const floor = JSON.parse(
      (await run(process.execPath, ['--input-type=module', '-e', FLOOR, xbelPath], { cwd: REPO_ROOT })).stdout,
    ) as {
      ms: number;
      beforeMb: number;
      peakMb: number;
    };

    await upload(stack, '/v1/xbel-to-html', file.text); // warm-up: JIT, store directories

    const edgePid = stack.pid('edge');
    if (edgePid === undefined) throw new Error('no edge process');
    writeFileSync(`/proc/${edgePid}/clear_refs`, '5');
    const edgeIdle = memoryOf(edgePid).rssMb;
    const burstStatuses = await Promise.all(
      Array.from({ length: BURST_UPLOADS }, () => anonymousUpload(Number(new URL(stack.edgeUrl).port))),
    );
    const edgePeak = memoryOf(edgePid).peakMb;
    const statusCounts = [...new Set(burstStatuses)]
      .map((status) => `${burstStatuses.filter((s) => s === status).length}x ${status}`)
      .join(', ');

    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = memoryOf(pid).rssMb;
    const htmlMs = await upload(stack, '/v1/xbel-to-html', file.text);
    const htmlServiceMs = serviceMs(stack, 'ConvertXbelToHtml');
    const peak = memoryOf(pid).peakMb;

    const plainMs = await upload(stack, '/v1/xbel-decrypt', file.text, { key: 'bench' });
    // Encrypted JSON is 4/3 of the XBEL (base64): the same generator makes a file that fits the limit.
    const prefix = largeXbel(Math.floor((MAX_UPLOAD - 64 * 1024) * 0.74)).text;
    const encrypted = await floccusEncrypt(prefix, 'correct horse battery staple');
    const decryptMs = await upload(stack, '/v1/xbel-decrypt', encrypted, { key: 'correct horse battery staple' });
    const decryptServiceMs = serviceMs(stack, 'DecryptXbel');

    const auth = { authorization: `Bearer ${stack.apiKey}` };
    const quotaUrl = `${stack.edgeUrl}/v1/quota`;
    const idle = await load(quotaUrl, { concurrency: QUOTA_CONNECTIONS, durationMs: WINDOW_MS, headers: auth });
    const small = await floccusEncrypt('<xbel version="1.0"/>', 'k');
    let decrypts = 0;
    let stop = false;
    const decrypting = Array.from({ length: DECRYPTS }, async () => {
      while (!stop) {
        await upload(stack, '/v1/xbel-decrypt', small, { key: 'k' });
        decrypts++;
      }
    });
    const busy = await load(quotaUrl, { concurrency: QUOTA_CONNECTIONS, durationMs: WINDOW_MS, headers: auth });
    stop = true;
    await Promise.all(decrypting);

    const rate = (ms: number, size = mb) => `${fmt(size / (ms / 1000), 1)} MB/s`;
    const mib = (text: string) => fmt(Buffer.byteLength(text) / (1024 * 1024), 2);
    const growth = peak - before;
    const floorGrowth = floor.peakMb - floor.beforeMb;
    const lines = [
      `\n== bookmark benchmark (issue 11): ${fmt(mb, 2)} MB XBEL, ` +
        `${file.bookmarks} bookmarks in ${file.folders} folders`,
      `floor, htmlparser2 xmlMode parse: ${fmt(floor.ms, 0)} ms, ${rate(floor.ms)}, ` +
        `peak RSS ${fmt(floor.peakMb)} MB (+${fmt(floorGrowth)} MB over the loaded file)`,
      `POST /v1/xbel-to-html: ${fmt(htmlMs, 0)} ms round trip (${rate(htmlMs)}), ` +
        `service ${htmlServiceMs} ms (${rate(htmlServiceMs)}); ` +
        `bookmark service peak RSS ${fmt(peak)} MB (+${fmt(growth)} MB over idle)`,
      `to-HTML / floor: time ${fmt(htmlMs / floor.ms, 2)}x round trip, ${fmt(htmlServiceMs / floor.ms, 2)}x service; ` +
        `peak RSS growth ${fmt(growth / Math.max(floorGrowth, 1), 2)}x`,
      `POST /v1/xbel-decrypt, the plain ${fmt(mb, 2)} MB file (checked, passed through): ${fmt(plainMs, 0)} ms`,
      `POST /v1/xbel-decrypt, encrypted (${mib(encrypted)} MB JSON of ${mib(prefix)} MB XBEL): ` +
        `${fmt(decryptMs, 0)} ms round trip, service ${decryptServiceMs} ms`,
      `GET /v1/quota p99 at ${QUOTA_CONNECTIONS} connections: ${fmt(idle.p99)} ms alone (${fmt(idle.rps, 0)} req/s), ` +
        `${fmt(busy.p99)} ms while ${DECRYPTS} decrypts run (${fmt(busy.rps, 0)} req/s; ${decrypts} decrypts done): ` +
        `${fmt(busy.p99 / idle.p99, 2)}x`,
      `edge during ${BURST_UPLOADS} concurrent ${fmt(BURST_BYTES / (1024 * 1024), 0)} MB uploads ` +
        'without a credential ' +
        `(${statusCounts}): peak RSS ${fmt(edgePeak)} MB (+${fmt(edgePeak - edgeIdle)} MB), ` +
        `${fmt(edgePeak / edgeIdle, 2)}x its idle ${fmt(edgeIdle)} MB`,
    ];
    for (const line of lines) console.log(line);
    if (idle.errors || busy.errors) console.log(`quota errors: ${idle.errors} alone, ${busy.errors} under decrypts`);
  } finally {
    await stack.stop();
    rmSync(xbelPath, { force: true });
  }
}

const HEALTH_HOSTS = 50;
const HEALTH_BOOKMARKS = 2_000;
const HEALTH_DELAY_MS = 15;

/** linkinator with its defaults (concurrency 100) and a 10 s time-out, twice in one fresh process. */
const LINKINATOR = `
import { LinkChecker } from 'linkinator';
const runs = [];
for (let i = 0; i < 2; i++) {
  const started = performance.now();
  const result = await new LinkChecker().check({ path: process.argv[1], concurrency: 100, timeout: 10000 });
  const broken = new Set(result.links.filter((l) => l.state === 'BROKEN').map((l) => l.url));
  runs.push({ ms: performance.now() - started, broken: broken.size, links: result.links.length });
}
process.stdout.write(JSON.stringify(runs));
`;

/** One fixture host: /b/<n> answers 200 after 15 ms, except every 13th (404) and every 17th (301 to /b/0). */
function healthHost(address: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const n = Number(/^\/b\/(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
    setTimeout(() => {
      if (n >= 0 && n % 13 === 5) res.writeHead(404, { 'content-type': 'text/html' }).end('<p>gone</p>');
      else if (n >= 0 && n % 17 === 3) res.writeHead(301, { location: '/b/0' }).end();
      else if (n >= 0) res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>page ${n}</p>`);
      else res.writeHead(404, { 'content-type': 'text/html' }).end('<p>not found</p>');
    }, HEALTH_DELAY_MS);
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve) => server.listen(0, address, () => resolve(server)));
}

async function healthBench(): Promise<void> {
  const hosts = await Promise.all(Array.from({ length: HEALTH_HOSTS }, (_, i) => healthHost(`127.0.0.${i + 1}`)));
  const urls = Array.from({ length: HEALTH_BOOKMARKS }, (_, i) => {
    const server = hosts[i % HEALTH_HOSTS] as http.Server;
    const { address, port } = server.address() as { address: string; port: number };
    return `http://${address}:${port}/b/${Math.floor(i / HEALTH_HOSTS)}`;
  });
  const xbel = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<xbel version="1.0">',
    ...urls.map((url, i) => `<bookmark href="${url}"><title>Bookmark ${i}</title></bookmark>`),
    '</xbel>',
  ].join('\n');
  const page = `<!doctype html><title>links</title>${urls.map((u) => `<a href="${u}">x</a>`).join('\n')}`;
  const pageServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(pageServer.address() as { port: number }).port}/`;
  const stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { LOG_LEVEL: 'warn' } });
  try {
    const check = async () => {
      const form = new FormData();
      form.set('file', new Blob([xbel], { type: 'application/octet-stream' }), 'bench.xbel');
      const started = performance.now();
      const res = await stack.api('/v1/bookmarks/check', { method: 'POST', body: form });
      const body = (await res.json()) as { data: { jobId: string } };
      if (res.status !== 202) throw new Error(`bookmarks/check: ${res.status} ${JSON.stringify(body)}`);
      for (;;) {
        const poll = (await (await stack.api(`/v1/bookmarks/check/${body.data.jobId}`)).json()) as any;
        if (poll.data.status !== 'crawling') {
          if (poll.data.status !== 'done') throw new Error(JSON.stringify(poll.data.error));
          return { ms: performance.now() - started, result: poll.data.result };
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const first = await check();
    const second = await check();
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', LINKINATOR, pageUrl], {
      cwd: path.join(REPO_ROOT, 'scripts'),
      maxBuffer: 64 * 1024 * 1024,
    });
    const [cold, warm] = JSON.parse(stdout) as { ms: number; broken: number; links: number }[];
    if (!cold || !warm) throw new Error('linkinator gave no result');
    const s = second.result.summary;
    const lines = [
      `\n== bookmark health (issue 27): ${HEALTH_BOOKMARKS} bookmarks over ${HEALTH_HOSTS} hosts, ` +
        `${HEALTH_DELAY_MS} ms per answer (load ${os.loadavg()[0]?.toFixed(1)})`,
      `our check (POST, polls every 50 ms to done): first ${fmt(first.ms, 0)} ms, second ${fmt(second.ms, 0)} ms; ` +
        `${s.ok} ok, ${s.redirected} redirected, ${s.broken} broken, ${s.unchecked} unchecked`,
      `linkinator 7.6 on one page of the same links: CLI ${fmt(cold.ms, 0)} ms, warm ${fmt(warm.ms, 0)} ms ` +
        `(${warm.broken} broken of ${warm.links} links)`,
      `linkinator / ours (second check): CLI ${fmt(cold.ms / second.ms, 2)}x, warm ${fmt(warm.ms / second.ms, 2)}x`,
    ];
    for (const line of lines) console.log(line);
  } finally {
    await stack.stop();
    pageServer.close();
    for (const server of hosts) server.close();
  }
}

const HOSTILE_GOAL_MB = 128;

async function hostileBench(): Promise<void> {
  const size = MAX_UPLOAD - 64 * 1024;
  const files: [string, string][] = [
    ['99 deep, over 50,000 items (refused)', hostileBookmarkHtml('deep', size)],
    ['flat, over 50,000 items (refused)', hostileBookmarkHtml('flat', size)],
    ['99 deep, 49,000 items', hostileBookmarkHtml('deep', size, { items: 49_000 })],
    ['flat, 49,000 items', hostileBookmarkHtml('flat', size, { items: 49_000 })],
    ['3 bookmarks of 3 MB attributes', hostileBookmarkHtml('attributes', size)],
  ];
  const stack = await startTestStack({ env: { LOG_LEVEL: 'info' } });
  const htmlPath = path.join(os.tmpdir(), `bench-${process.pid}.html`);
  try {
    const pid = stack.pid('bookmark');
    if (pid === undefined) throw new Error('no bookmark process');
    await uploadHtml(stack, hostileBookmarkHtml('flat', 64 * 1024, { items: 100 })); // warm-up
    const lines = [`\n== hostile bookmark HTML (issue 36): POST /v1/html-to-xbel, one file at a time`];
    for (const [name, text] of files) {
      writeFileSync(htmlPath, text);
      const floor = JSON.parse(
        (await run(process.execPath, ['--input-type=module', '-e', FLOOR, htmlPath, 'html'], { cwd: REPO_ROOT }))
          .stdout,
      ) as { cpuMs: number; beforeMb: number; peakMb: number };
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const before = memoryOf(pid).rssMb;
      const cpuBefore = cpuMsOf(pid);
      const status = await uploadHtml(stack, text);
      const growth = memoryOf(pid).peakMb - before;
      const cpuMs = cpuMsOf(pid) - cpuBefore;
      const mb = Buffer.byteLength(text) / (1024 * 1024);
      const floorGrowth = Math.max(1, floor.peakMb - floor.beforeMb);
      lines.push(
        `${name} (${fmt(mb, 1)} MB, ${status}): peak RSS +${fmt(growth, 0)} MB ` +
          `(${fmt(growth / HOSTILE_GOAL_MB, 2)}x the ${HOSTILE_GOAL_MB} MB goal, ` +
          `${fmt(growth / floorGrowth, 2)}x the floor's ` +
          `+${fmt(floorGrowth, 0)} MB); CPU ${fmt(cpuMs / mb / 1000, 3)} s per MB ` +
          `(${fmt(cpuMs / mb / 1000, 2)}x the 1 s goal, ${fmt(cpuMs / Math.max(1, floor.cpuMs), 2)}x the floor's ` +
          `${fmt(floor.cpuMs, 0)} ms)`,
      );
    }
    for (const line of lines) console.log(line);
  } finally {
    rmSync(htmlPath, { force: true });
    await stack.stop();
  }
}

/** POST /v1/html-to-xbel; the answer's status (a refusal is an expected outcome here). */
async function uploadHtml(stack: TestStack, text: string): Promise<number> {
  const form = new FormData();
  form.set('file', new Blob([text], { type: 'application/octet-stream' }), 'bench.html');
  const res = await stack.api('/v1/html-to-xbel', { method: 'POST', body: form });
  await res.arrayBuffer();
  return res.status;
}

const parts = process.env.BENCH_BOOKMARK_PARTS ?? 'files,health,hostile';
if (parts.includes('files')) await filesBench();
if (parts.includes('health')) await healthBench();
if (parts.includes('hostile')) await hostileBench();
