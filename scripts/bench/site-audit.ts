/**
 * Issue 41 benchmark: the site audit (POST /v1/site-audit through the edge, resources checked,
 * fragments not) of a generated tree site (fixture-audit-site.ts), in the same run:
 *  1. 1,000 and 10,000 pages, each on a fresh one-replica stack (embedded store): wall time,
 *     pages per second and the crawl process's peak RSS (VmHWM), and the ratio of the two peaks;
 *  2. 10,000 pages on a cluster of two crawl replicas (NATS JetStream, jongodb): the same figures
 *     for each replica, and the pages each fetched (its share of the pages per second);
 *  3. linkinator's CLI (--recurse, its default concurrency of 100, which checks images too) on the
 *     10,000-page site, alternating with ours twice: the best wall time of each, and whether both
 *     found the site's broken set.
 * BENCH_AUDIT_PAGES (default 10000) sets the large site's size. The audits run on the distributed
 * engine (every replica's page workers take pages); SITE_AUDIT_DISTRIBUTED=0 runs the one-worker one.
 * The crawl processes run with the Node options the chart gives them (its heap cap, decision 0496).
 * Each replica's RSS is also sampled while the pages are read and after (the report step), and an
 * audit not done in BENCH_AUDIT_WAIT_S (default 600) is reported as far as it got.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { type AuditSite, auditSitePages, startAuditSite } from '../src/fixture-audit-site.js';
import { REPO_ROOT } from '../src/local-stack.js';
import { startMongo } from '../src/mongo-under-test.js';
import { startOwnNats } from '../src/nats-under-test.js';
import { startTestStack, type TestStack, type TestStackOptions } from '../src/test-stack.js';
import { fmt } from './load.js';

const LARGE = Number(process.env.BENCH_AUDIT_PAGES ?? 10_000);
const SMALL = Math.round(LARGE / 10);
const LINKINATOR_CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('linkinator')), 'cli.js');
const BROKEN_ISSUES = ['broken_link_internal', 'broken_resource'];
const DISTRIBUTED = process.env.SITE_AUDIT_DISTRIBUTED ?? '1';
const WAIT_MS = Number(process.env.BENCH_AUDIT_WAIT_S ?? 600) * 1000;
const chart = parse(readFileSync(path.join(REPO_ROOT, 'helm/webutil/values.yaml'), 'utf8'));
const CRAWL_NODE_OPTIONS: string = chart.services.crawl.env.NODE_OPTIONS ?? '';

interface Audited {
  ms: number;
  pages: number;
  broken: Set<string>;
  /** Not done within WAIT_MS: `pages` is how far it got. */
  cut: boolean;
}

/** The audit's phase as last polled: the RSS samples are split by it. */
let phase = 'starting';

async function json(res: Response): Promise<any> {
  return res.json();
}

/** One audit through the edge, polled every 250 ms; its broken links and resources read through the issue route. */
async function audit(stack: TestStack, site: AuditSite): Promise<Audited> {
  const started = performance.now();
  const res = await stack.api('/v1/site-audit', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // The cap is every page the audit reads: the tree's and the missing pages it links (a 404 is a page).
    body: JSON.stringify({ url: `${site.base}/`, maxPages: auditSitePages(site.pages).length, checkResources: true }),
  });
  const start = await json(res);
  if (res.status !== 202) throw new Error(`audit start: ${res.status} ${JSON.stringify(start.error)}`);
  const jobId = start.data.jobId as string;
  let job: any;
  let said = started;
  for (;;) {
    const poll = await stack.api(`/v1/site-audit/${jobId}`);
    const wait = poll.status === 429 ? Number(poll.headers.get('retry-after') ?? 1) * 1000 : 250;
    job = (await json(poll)).data ?? job;
    phase = job?.progress?.phase ?? phase;
    if (performance.now() - started > WAIT_MS)
      return { ms: performance.now() - started, pages: job?.progress?.pagesAudited ?? 0, broken: new Set(), cut: true };
    if (performance.now() - said > 60_000) {
      // A long audit (the cluster's, on a slow store) says how far it is.
      said = performance.now();
      const at = job?.progress;
      console.log(`  ${fmt((said - started) / 1000)} s: ${at?.pagesAudited} pages audited, phase ${at?.phase}`);
    }
    if (poll.status !== 429 && job.status !== 'crawling') break;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const ms = performance.now() - started;
  if (job.status !== 'done') throw new Error(`audit ended ${job.status}: ${JSON.stringify(job.error)}`);
  const broken = new Set<string>();
  for (const issue of job.result.issues.filter((i: any) => BROKEN_ISSUES.includes(i.id)))
    for (let offset = 0; offset < issue.affectedTotal; offset += 1000) {
      const page = await json(
        await stack.api(`/v1/site-audit/${jobId}/issues/${issue.id}?offset=${offset}&limit=1000`),
      );
      for (const a of page.data.issue.affected) broken.add(a.url);
    }
  return { ms, pages: job.result.pagesAudited, broken, cut: false };
}

/**
 * linkinator's CLI in a process of its own; exit code 1 means it found broken links. Its report
 * goes to a file: read from a pipe, the ~2 MB of JSON came back mangled in some runs.
 */
async function linkinator(url: string): Promise<{ ms: number; broken: Set<string> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'linkinator-'));
  const file = path.join(dir, 'report.json');
  const out = openSync(file, 'w');
  try {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [LINKINATOR_CLI, url, '--recurse', '--format', 'json', '--timeout', '10000'],
      {
        stdio: ['ignore', out, 'inherit'],
      },
    );
    const [code] = (await once(child, 'exit')) as [number | null];
    const ms = performance.now() - started;
    if (code !== 0 && code !== 1) throw new Error(`linkinator exited ${code}`);
    const report = JSON.parse(readFileSync(file, 'utf8')) as { links: { url: string; state: string }[] };
    return { ms, broken: new Set(report.links.filter((l) => l.state === 'BROKEN').map((l) => l.url)) };
  } finally {
    closeSync(out);
    rmSync(dir, { recursive: true, force: true });
  }
}

function statusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
  if (pid === undefined) return Number.NaN;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
}
const peakRssMb = (pid: number | undefined) => statusMb(pid, 'VmHWM');

/** A process's CPU time so far (user and system), in seconds. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));

/**
 * The process holding the client end of each of the site's connections, found in batches: the site
 * hears which connection each page came on, and every 250 ms the connections not yet placed are
 * looked up together (the server sees the client's port as the remote one; the client's row in
 * /proc/net/tcp gives the socket's inode, and the process with that inode open is its owner).
 * Reading the table once per connection, in the site's request handler, blocked the site for
 * 15 ms each once linkinator's run had left ten thousand closed connections listed (TIME_WAIT), and
 * only while our audits ran. A connection closed before it was placed stays unplaced.
 */
class SocketOwners {
  private readonly pages = new Map<Socket, number>();
  private readonly owner = new Map<Socket, number>();
  private unplaced: Socket[] = [];
  private readonly timer = setInterval(() => this.place(), 250);

  constructor(private readonly pids: () => readonly number[]) {}

  /** A page was asked for on this connection. */
  heard(socket: Socket): void {
    const pages = this.pages.get(socket);
    if (pages === undefined) this.unplaced.push(socket);
    this.pages.set(socket, (pages ?? 0) + 1);
  }

  /** Pages asked for per owning process (undefined: connections never placed), once the audit is over. */
  counts(): Map<number | undefined, number> {
    this.place();
    const by = new Map<number | undefined, number>();
    for (const [socket, pages] of this.pages) {
      const pid = this.owner.get(socket);
      by.set(pid, (by.get(pid) ?? 0) + pages);
    }
    return by;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private place(): void {
    const waiting = this.unplaced.filter((socket) => !socket.destroyed);
    this.unplaced = [];
    if (waiting.length === 0) return;
    // The live sockets by local port (a closed one, TIME_WAIT, is listed with inode 0).
    const inodeByPort = new Map<string, string>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6'])
      for (const row of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const fields = row.trim().split(/\s+/);
        const port = fields[1]?.slice(fields[1].lastIndexOf(':') + 1);
        if (port && fields[9] && fields[9] !== '0') inodeByPort.set(port, fields[9]);
      }
    const wanted = new Map<string, Socket>();
    for (const socket of waiting) {
      const port = (socket.remotePort ?? 0).toString(16).toUpperCase().padStart(4, '0');
      const inode = inodeByPort.get(port);
      if (inode) wanted.set(`socket:[${inode}]`, socket);
      else this.unplaced.push(socket);
    }
    for (const pid of this.pids()) {
      let fds: string[] = [];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        let link: string;
        try {
          link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          continue; // closed meanwhile
        }
        const socket = wanted.get(link);
        if (socket) this.owner.set(socket, pid);
      }
    }
  }
}

/** One audit of a fresh site on a fresh stack: its figures, each crawl replica's peak RSS and pages fetched. */
async function measure(pages: number, options: TestStackOptions, replicas: string[]) {
  let pids: number[] = [];
  const owners = new SocketOwners(() => pids);
  const site = await startAuditSite(pages, (socket) => owners.heard(socket));
  const stack = await startTestStack({ allowTargets: '127.0.0.0/8', ...options });
  // Each replica's highest RSS while pages are read, and in the report step after.
  const reading = replicas.map(() => 0);
  const reporting = replicas.map(() => 0);
  const sampler = setInterval(() => {
    const peaks = phase === 'checking' || phase === 'done' ? reporting : phase === 'crawling' ? reading : undefined;
    if (!peaks) return;
    for (const [i, name] of replicas.entries())
      peaks[i] = Math.max(peaks[i] as number, statusMb(stack.pid(name), 'VmRSS'));
  }, 50);
  try {
    phase = 'starting';
    pids = replicas.flatMap((name) => stack.pid(name) ?? []);
    const cpuBefore = replicas.map((name) => cpuSeconds(stack.pid(name)));
    const found = await audit(stack, site);
    const cpu = replicas.map((name, i) => cpuSeconds(stack.pid(name)) - (cpuBefore[i] as number));
    const peaks = replicas.map((name) => peakRssMb(stack.pid(name)));
    const fetched = owners.counts();
    const pagesBy = replicas.map((name) => fetched.get(stack.pid(name)) ?? 0);
    return { site, found, peaks, pagesBy, reading, reporting, cpu };
  } finally {
    clearInterval(sampler);
    owners.stop();
    await stack.stop();
    await site.close();
  }
}

const line = (label: string, m: Awaited<ReturnType<typeof measure>>, replicas: string[]) =>
  `${label}: ${m.found.pages} pages audited ${m.found.cut ? 'when given up after' : 'in'} ` +
  `${fmt(m.found.ms / 1000)} s, ` +
  `${fmt((1000 * m.found.pages) / m.found.ms)} pages/s; ` +
  replicas
    .map(
      (name, i) =>
        `${name}: ${fmt(m.cpu[i] as number)} s of CPU, peak RSS ${fmt(m.peaks[i] as number)} MB ` +
        `(reading pages ${fmt(m.reading[i] as number)}, ` +
        `report step ${fmt(m.reporting[i] as number)}), ${m.pagesBy[i]} pages fetched ` +
        `(${fmt((1000 * (m.pagesBy[i] as number)) / m.found.ms)} pages/s)`,
    )
    .join('; ') +
  `; broken set ${sameSet(m.found.broken, m.site.broken) ? 'as the site defines' : 'DIFFERS from the site'}`;

console.log(`\n== site-audit benchmark (issue 41): linkinator 7.6.1 CLI on Node ${process.version} ==`);
console.log(
  `load average at the start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')} (${os.cpus().length} cores)`,
);
console.log(
  `engine: ${DISTRIBUTED === '1' ? 'distributed (SITE_AUDIT_DISTRIBUTED=1)' : 'one worker per audit'}; ` +
    `crawl NODE_OPTIONS (the chart's): ${CRAWL_NODE_OPTIONS || 'none'}`,
);
const env = { LOG_LEVEL: 'warn', SITE_AUDIT_DISTRIBUTED: DISTRIBUTED };
const envFor = { crawl: { NODE_OPTIONS: CRAWL_NODE_OPTIONS } };
const small = await measure(SMALL, { env, envFor }, ['crawl']);
console.log(line(`one replica, ${SMALL} pages`, small, ['crawl']));
// Ours and linkinator's alternate, twice each, and the best of each is compared: this machine's
// pace drifts between runs (linkinator alone took 12.5-18.2 s in one hour), and alternating keeps a
// slow spell from falling on one tool only.
const runs: { ours: Awaited<ReturnType<typeof measure>>; theirs: Awaited<ReturnType<typeof linkinator>> }[] = [];
for (let round = 1; round <= 2; round++) {
  const ours = await measure(LARGE, { env, envFor }, ['crawl']);
  console.log(line(`one replica, ${LARGE} pages (round ${round})`, ours, ['crawl']));
  const site = await startAuditSite(LARGE);
  try {
    const theirs = await linkinator(`${site.base}/`);
    console.log(
      `linkinator CLI --recurse on the ${LARGE}-page site (round ${round}): ${fmt(theirs.ms / 1000)} s; ` +
        `its broken set ${sameSet(theirs.broken, site.broken) ? 'as the site defines' : 'DIFFERS'} ` +
        `(${theirs.broken.size} URLs, ours ${ours.found.broken.size})`,
    );
    runs.push({ ours, theirs });
  } finally {
    await site.close();
  }
}
const large = runs.map((r) => r.ours).reduce((a, b) => (b.found.ms < a.found.ms ? b : a));
const theirsMs = Math.min(...runs.map((r) => r.theirs.ms));
console.log(
  `best of two: linkinator ${fmt(theirsMs / 1000)} s, ours (one replica) ${fmt(large.found.ms / 1000)} s: ` +
    `ours ${fmt(theirsMs / large.found.ms, 2)}x as fast (goal: 1.5x)`,
);
const growth = Math.max(...runs.map((r) => r.ours.peaks[0] as number)) / (small.peaks[0] as number);
console.log(`peak RSS at ${LARGE} pages (the higher run) / at ${SMALL} pages: ${fmt(growth, 2)}x (goal: at most 1.3x)`);

const nats = await startOwnNats();
const mongo = await startMongo();
try {
  const cluster = await measure(
    LARGE,
    { env: { ...env, NATS_URL: nats.url, MONGO_URL: mongo.url }, envFor, replicas: { crawl: 2 } },
    ['crawl', 'crawl-2'],
  );
  console.log(line(`two replicas (NATS JetStream, ${mongo.label}), ${LARGE} pages`, cluster, ['crawl', 'crawl-2']));
} finally {
  await nats.dispose();
  await mongo.stop();
}

console.log(
  `load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`,
);
