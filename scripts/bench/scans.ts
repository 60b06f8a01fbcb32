/**
 * Issue 10 benchmark, every figure against a baseline measured in the same run:
 *  1. meta scan of a fixture page (a complete head and a 100 KB body) through the edge, against
 *     open-graph-scraper's extraction of the same page in this process: p50 one at a time, and
 *     throughput at 8 concurrent. Ours also fetches robots.txt, the sitemap and the favicon.
 *  2. SSL scan of a local TLS 1.2/1.3 server through the edge: p50 and the handshakes one scan
 *     makes, against testssl.sh-style sequential probing (one handshake per protocol and per
 *     standard cipher category, then HSTS on its own connection) run in this process; at 0 ms
 *     and at 25 ms one-way delay (a server 50 ms away).
 *  3. SSL scan with its extra probes (ALPN, OCSP stapling, CAA: issue 24) against the same scan
 *     with them switched off (SSL_SCAN_EXTRA_PROBES=false) in a second stack, same server, same run:
 *     p50 of each (the median of four alternating runs), at 0 and 25 ms one-way delay, against a
 *     server with ALPN.
 *  4. The full SSL scan (issue 43: every suite per protocol, vulnerabilities, CT, revocation) against
 *     testssl.sh -E -U on the same local server: our p50 of five against one testssl.sh run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import ogs from 'open-graph-scraper';
import { startFixtureDns } from '../src/fixture-dns.js';
import { startFixtureSite } from '../src/fixture-site.js';
import { completeHead, metaPage } from '../src/meta-fixtures.js';
import { startTestStack } from '../src/test-stack.js';
import { startPortSwitch, startTlsScenarios } from '../src/tls-fixtures.js';
import { fmt, load } from './load.js';

const DURATION = Number(process.env.BENCH_DURATION_MS ?? 6000);
/** How long testssl.sh -E -U may run before the comparison is reported as a bound. */
const TESTSSL_BOUND_MS = Number(process.env.BENCH_TESTSSL_BOUND_MS ?? 900_000);
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

/** Closed-loop timing of an in-process task, as load() does for HTTP: p50 and calls per second. */
async function timeLoop(task: () => Promise<unknown>, concurrency: number, durationMs: number) {
  const latencies: number[] = [];
  const run = async (until: number, record: boolean) => {
    while (performance.now() < until) {
      const started = performance.now();
      await task();
      if (record) latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => run(performance.now() + 1000, false)));
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => run(started + durationMs, true)));
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    p50: latencies[Math.floor(latencies.length / 2)] ?? Number.NaN,
    rps: (latencies.length / elapsed) * 1000,
  };
}

/** testssl.sh's standard cipher categories, as OpenSSL cipher strings (TLS 1.2 and older). */
const CIPHER_CATEGORIES = [
  'NULL:eNULL',
  'aNULL',
  'EXPORT',
  'LOW:DES:RC4',
  '3DES:IDEA',
  'AES128-SHA:AES256-SHA:AES128-SHA256:AES256-SHA256:CAMELLIA128-SHA:CAMELLIA256-SHA',
  'ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA',
  'ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM',
];

/** One handshake; true when it completed. Categories this OpenSSL cannot offer are not attempted. */
function handshake(port: number, options: tls.ConnectionOptions): Promise<boolean> | undefined {
  let secureContext: tls.SecureContext;
  try {
    secureContext = tls.createSecureContext({ ...options, ca: [] } as tls.SecureContextOptions);
  } catch {
    return undefined;
  }
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      secureContext,
      rejectUnauthorized: false,
    });
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** The baseline: every probe after the other, then a fresh HTTPS request for the HSTS header. */
async function sequentialProbe(port: number): Promise<void> {
  const all = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:ALL:@SECLEVEL=0';
  await handshake(port, { ciphers: all, minVersion: 'TLSv1' });
  for (const version of ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const) {
    await handshake(port, { ciphers: all, minVersion: version, maxVersion: version });
  }
  for (const category of CIPHER_CATEGORIES) {
    await handshake(port, { ciphers: `${category}:@SECLEVEL=0`, minVersion: 'TLSv1', maxVersion: 'TLSv1.2' });
  }
  await handshake(port, { ciphers: all, minVersion: 'TLSv1.3' });
  await new Promise<void>((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        servername: 'localhost',
        method: 'HEAD',
        path: '/',
        rejectUnauthorized: false,
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', () => resolve());
    req.end();
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-scans-'));
const site = await startFixtureSite();
const tlsFixtures = await startTlsScenarios(path.join(dir, 'root.pem'));
const delayed = await startPortSwitch({ oneWayDelayMs: 25 });
// CAA answers from a local resolver, as a nearby caching resolver gives them.
const dns = await startFixtureDns();
dns.setCaa('localhost', [{ tag: 'issue', value: 'letsencrypt.org' }]);
const scanner = {
  SSL_SCAN_PORT: String(tlsFixtures.portSwitch.port),
  SSL_SCAN_EXTRA_CA_FILE: tlsFixtures.caFile,
  SSL_SCAN_DNS_SERVERS: dns.server,
};
const stack = await startTestStack({
  allowTargets: '127.0.0.0/8',
  env: { LOG_LEVEL: 'warn' },
  envFor: { 'tls-scan': scanner },
});
const specOnly = await startTestStack({
  allowTargets: '127.0.0.0/8',
  env: { LOG_LEVEL: 'warn' },
  envFor: { 'tls-scan': { ...scanner, SSL_SCAN_EXTRA_PROBES: 'false' } },
});
const auth = { authorization: `Bearer ${stack.apiKey}` };
try {
  // 1. Meta scan against open-graph-scraper.
  const body = Array.from(
    { length: 600 },
    (_, i) => `<p>Paragraph ${i} of the fixture body, ${'text '.repeat(25)}</p>`,
  );
  const page = metaPage(completeHead(site.origin), body.join('\n'));
  const serve = (route: string, type: string, content: string | Buffer) =>
    site.route(route, (_req, res) => {
      res.writeHead(200, { 'content-type': type }).end(content);
    });
  serve('/page', 'text/html; charset=utf-8', page);
  serve('/robots.txt', 'text/plain', 'Sitemap: /sitemap.xml\n');
  serve('/sitemap.xml', 'application/xml', '<urlset><url><loc>/page</loc></url></urlset>');
  serve('/icons/icon.png', 'image/png', PNG);
  const metaUrl = `${stack.edgeUrl}/v1/meta-scan?url=${encodeURIComponent(site.url('/page'))}`;
  const check = (await (await fetch(metaUrl, { headers: auth })).json()) as { data?: { finalScore?: number } };
  const extracted = await ogs({ url: site.url('/page') });
  if (check.data?.finalScore !== 100 || extracted.error)
    throw new Error('meta benchmark fixture does not scan cleanly');
  const oursOne = await load(metaUrl, { concurrency: 1, durationMs: DURATION, headers: auth });
  const oursMany = await load(metaUrl, { concurrency: 8, durationMs: DURATION, headers: auth });
  const theirsOne = await timeLoop(() => ogs({ url: site.url('/page') }), 1, DURATION);
  const theirsMany = await timeLoop(() => ogs({ url: site.url('/page') }), 8, DURATION);

  // 2. SSL scan against sequential probing, near and 50 ms away.
  const good = tlsFixtures.servers.good;
  await delayed.route(good.port);
  // Sections 2 and 3 measure the fast scan (issues 10 and 24); section 4 the full one.
  const sslUrl = `${stack.edgeUrl}/v1/ssl-scan?domain=localhost&fast=true`;
  const ssl: string[] = [];
  for (const [label, port] of [
    ['local', good.port],
    ['25 ms one-way delay', delayed.port],
  ] as const) {
    await tlsFixtures.portSwitch.route(port);
    let connections = good.connections;
    const scan = (await (await fetch(sslUrl, { headers: auth })).json()) as { data?: { securityGrade?: string } };
    if (scan.data?.securityGrade !== 'A+') throw new Error(`ssl benchmark fixture grades ${scan.data?.securityGrade}`);
    const ourHandshakes = good.connections - connections;
    connections = good.connections;
    await sequentialProbe(port);
    const baselineHandshakes = good.connections - connections;
    const ours = await load(sslUrl, { concurrency: 1, durationMs: DURATION, headers: auth });
    const baseline = await timeLoop(() => sequentialProbe(port), 1, DURATION);
    ssl.push(
      `ssl scan, ${label}: ours p50 ${fmt(ours.p50)} ms through the edge ` +
        `(${ourHandshakes} connections, errors ${ours.errors}); ` +
        `sequential probing p50 ${fmt(baseline.p50)} ms (${baselineHandshakes} connections) -> ours takes ` +
        `${fmt(ours.p50 / baseline.p50, 2)}x the time ` +
        `with ${fmt(ourHandshakes / baselineHandshakes, 2)}x the connections`,
    );
  }

  // 3. The extra probes against the same scan without them, in turns so both see the same machine load.
  const extras: string[] = [];
  const specOnlyUrl = `${specOnly.edgeUrl}/v1/ssl-scan?domain=localhost&fast=true`;
  const specOnlyAuth = { authorization: `Bearer ${specOnly.apiKey}` };
  // A server with ALPN (h2 and http/1.1), as real ones have: the full scan then makes its ALPN probe too.
  const h2 = tlsFixtures.servers.http2;
  await delayed.route(h2.port);
  for (const [label, port] of [
    ['local', h2.port],
    ['25 ms one-way delay', delayed.port],
  ] as const) {
    await tlsFixtures.portSwitch.route(port);
    const full: number[] = [];
    const spec: number[] = [];
    for (let round = 0; round < 4; round++) {
      full.push((await load(sslUrl, { concurrency: 1, durationMs: DURATION / 4, headers: auth })).p50);
      spec.push((await load(specOnlyUrl, { concurrency: 1, durationMs: DURATION / 4, headers: specOnlyAuth })).p50);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
    extras.push(
      `ssl scan extra probes, ${label}: with ALPN, OCSP and CAA p50 ${fmt(median(full))} ms, ` +
        `without p50 ${fmt(median(spec))} ms -> ${fmt(median(full) / median(spec), 2)}x (goal <= 1.5x)`,
    );
  }

  // 4. The full scan (suites per protocol, vulnerabilities, CT, revocation) against testssl.sh's
  // -E -U (the same: every cipher per protocol, every vulnerability) on the same local server.
  await tlsFixtures.portSwitch.route(good.port);
  const fullUrl = `${stack.edgeUrl}/v1/ssl-scan?domain=localhost`;
  const fullRuns: number[] = [];
  let fullTimings = '';
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    const reply = (await (await fetch(fullUrl, { headers: auth })).json()) as {
      data?: { vulnerabilities?: unknown[]; timings?: Record<string, number> };
    };
    fullRuns.push(performance.now() - started);
    if (!reply.data?.vulnerabilities?.length) throw new Error('the full scan returned no vulnerabilities');
    fullTimings = JSON.stringify(reply.data.timings);
  }
  fullRuns.sort((a, b) => a - b);
  const fullP50 = fullRuns[2] as number;
  const testssl = ['/usr/bin/testssl', '/usr/bin/testssl.sh'].find((p) => existsSync(p));
  const fullLine = `ssl full scan, local: ours p50 ${fmt(fullP50)} ms through the edge ` + `(parts ${fullTimings}); `;
  // Ours is known now: printed at once, so a testssl.sh run that outlasts its bound still leaves it.
  console.log(`${fullLine}testssl.sh -E -U running`);
  let versusTestssl = 'testssl.sh not installed: no ratio';
  if (testssl) {
    const started = performance.now();
    // No reverse DNS: this machine reaches no DNS beyond its own, and the lookups would only wait.
    const args = ['-E', '-U', '--nodns', 'none', '--warnings', 'off', '--quiet', '--color', '0'];
    let finished = true;
    try {
      execFileSync(testssl, [...args, `127.0.0.1:${good.port}`], { stdio: 'ignore', timeout: TESTSSL_BOUND_MS });
    } catch (err) {
      // A non-zero exit is testssl.sh reporting findings; only the bound running out is no figure.
      finished = (err as NodeJS.ErrnoException).code !== 'ETIMEDOUT';
    }
    const theirs = performance.now() - started;
    versusTestssl = finished
      ? `testssl.sh -E -U ${fmt(theirs / 1000, 1)} s -> ours takes ${fmt(fullP50 / theirs, 4)}x the time`
      : `testssl.sh -E -U did not finish within ${TESTSSL_BOUND_MS / 1000} s ` +
        `-> ours takes under ${fmt(fullP50 / TESTSSL_BOUND_MS, 4)}x the time`;
  }

  console.log('\n== scans benchmark (issue 10) ==');
  console.log(
    `meta scan, one at a time: ours p50 ${fmt(oursOne.p50, 2)} ms through the edge ` +
      `(page, robots.txt, sitemap, favicon; errors ${oursOne.errors}), ` +
      `open-graph-scraper p50 ${fmt(theirsOne.p50, 2)} ms (page only, in process) ` +
      `-> ratio ${fmt(oursOne.p50 / theirsOne.p50, 2)}x`,
  );
  console.log(
    `meta scan, 8 concurrent: ours ${fmt(oursMany.rps)} scans/s (errors ${oursMany.errors}), ` +
      `open-graph-scraper ${fmt(theirsMany.rps)} pages/s -> ratio ${fmt(oursMany.rps / theirsMany.rps, 2)}x`,
  );
  for (const line of ssl) console.log(line);
  for (const line of extras) console.log(line);
  console.log(fullLine + versusTestssl);
} finally {
  await Promise.all([stack.stop(), specOnly.stop()]);
  await Promise.all([site.close(), tlsFixtures.close(), delayed.close(), dns.close()]);
  rmSync(dir, { recursive: true, force: true });
}
