import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A backing service the runner starts, and the edge variable that holds its address. */
export interface ServiceEntry {
  name: string;
  dir: string;
  /** Offset from the base port in the default layout. */
  portOffset: number;
  addressEnv: string;
}

/** The implemented services. A new service is one row here (and one in the Helm chart). */
export const SERVICES: ServiceEntry[] = [
  { name: 'billing', dir: 'services/billing', portOffset: 1, addressEnv: 'BILLING_ADDR' },
  { name: 'render', dir: 'services/render', portOffset: 2, addressEnv: 'RENDER_ADDR' },
  { name: 'crawl', dir: 'services/crawl', portOffset: 3, addressEnv: 'CRAWL_ADDR' },
  { name: 'tls-scan', dir: 'services/tls-scan', portOffset: 4, addressEnv: 'TLS_SCAN_ADDR' },
  { name: 'meta-scan', dir: 'services/meta-scan', portOffset: 5, addressEnv: 'META_SCAN_ADDR' },
  { name: 'bookmark', dir: 'services/bookmark', portOffset: 6, addressEnv: 'BOOKMARK_ADDR' },
  { name: 'monitor', dir: 'services/monitor', portOffset: 7, addressEnv: 'MONITOR_ADDR' },
];

/**
 * How the runner restarts a process that exits on its own (a crash, a kill from outside), as
 * Kubernetes restarts a container: after a delay that doubles with each restart in a row, up to a
 * cap; a process that then served for `resetAfterMs` starts the next count over.
 * docs/decisions/0101-local-runner-restarts.md.
 */
export interface RestartBackoff {
  firstDelayMs: number;
  maxDelayMs: number;
  resetAfterMs: number;
}

/** `npm start`'s restart policy. */
export const RESTART_BACKOFF: RestartBackoff = { firstDelayMs: 1_000, maxDelayMs: 30_000, resetAfterMs: 60_000 };

export interface StackOptions {
  edgePort: number;
  /** Service ports are basePort + portOffset; 0 picks free ports. */
  basePort: number;
  dataDir: string;
  /** Extra environment for every process (LOG_LEVEL, WEBUTIL_ALLOW_TARGETS, NATS_URL, ...). */
  env?: Record<string, string>;
  /** Per-process extra environment. */
  envFor?: Record<string, Record<string, string>>;
  /**
   * Per-process start-up: Node flags (--cpu-prof, which NODE_OPTIONS refuses) and another build's
   * dist/main.js (a benchmark's "before"). Default: this checkout's entry, no flags.
   */
  processFor?: Record<string, { entry?: string; nodeArgs?: string[] }>;
  /** Where prefixed log lines go; defaults to stdout. */
  onLog?: (name: string, line: string) => void;
  /** Milliseconds to wait for each health check. */
  readyTimeoutMs?: number;
  /** Restart processes that exit on their own, with this back-off; unset: a process that exits stays down. */
  supervise?: RestartBackoff;
  /**
   * Processes per service (default 1), e.g. `{ billing: 2, crawl: 2 }`: the second is named
   * `billing-2`, and every edge reaches all of them through one `ipv4:` address list that grpc-js
   * balances round robin (docs/decisions/0254-every-edge-reaches-every-replica.md).
   */
  replicas?: Record<string, number>;
  /** Edges (default 1): `edge`, `edge-2`, ... all with the same service addresses. */
  edges?: number;
}

export interface Stack {
  edgeUrl: string;
  /** Every edge's URL (the first is `edgeUrl`). */
  edgeUrls: string[];
  /** By process name; `<service>-connect` is a service's Connect (HTTP/1.1) port. */
  ports: Record<string, number>;
  /** Kills one process (SIGKILL), as a crash would; a supervised stack leaves it down until start(). */
  kill(name: string): Promise<void>;
  /** Starts a killed process again on the same port and waits for it to be healthy. */
  start(name: string): Promise<void>;
  /** OS process id of a running process (to read its memory use, say). */
  pid(name: string): number | undefined;
  stop(): Promise<void>;
}

interface Proc {
  name: string;
  entry: string;
  nodeArgs?: string[];
  port: number;
  env: Record<string, string>;
  child?: ChildProcess;
  health: () => Promise<boolean>;
  /** Ended on purpose (kill(), stop()): not restarted. */
  stopped?: boolean;
  /** Restarts in a row, for the back-off. */
  restarts: number;
  readyAt?: number;
  restartTimer?: NodeJS.Timeout;
}

const handedOut = new Set<number>();

/**
 * A port that is free now and stays free until a child binds it: chosen below the kernel's
 * ephemeral range (32768+ on Linux), where outbound connections and other port-0 binds take
 * their ports, so nothing else in the suite can grab it in between.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    // Two picks before either is bound would both find the port free: hand each out once.
    if (handedOut.has(port)) continue;
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    server.close();
    await once(server, 'close');
    handedOut.add(port);
    return port;
  }
}

const require = createRequire(import.meta.url);
const healthProto = grpc.loadPackageDefinition(
  protoLoader.loadSync(
    path.join(path.dirname(require.resolve('grpc-health-check/package.json')), 'proto/health/v1/health.proto'),
    { enums: String },
  ),
) as unknown as { grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } } };

/** True when the service's `readiness` health entry is SERVING. */
function grpcReady(port: number): () => Promise<boolean> {
  return () =>
    new Promise((resolve) => {
      const client = new healthProto.grpc.health.v1.Health(
        `127.0.0.1:${port}`,
        grpc.credentials.createInsecure(),
      ) as unknown as grpc.Client & {
        check: (req: object, opts: grpc.CallOptions, cb: (err: Error | null, res: { status: string }) => void) => void;
      };
      client.check(
        { service: 'readiness' },
        { deadline: Date.now() + 1000 },
        (err: Error | null, res: { status: string }) => {
          client.close();
          resolve(!err && res.status === 'SERVING');
        },
      );
    });
}

function httpReady(port: number): () => Promise<boolean> {
  return async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
      return res.ok;
    } catch {
      return false;
    }
  };
}

/**
 * Every service process this process started and that is still running. They go with it when it
 * exits, however it exits: a test runner that gives up on a stack still starting (a hook's time
 * out, a failed before-all) would otherwise leave the whole stack running behind it.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts every implemented service and then the edge as separate Node processes, each from its
 * compiled dist/main.js, waits for their health checks, and prefixes their log lines. With
 * `supervise`, a process that exits on its own afterwards is restarted (a line from "runner" says so).
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  mkdirSync(options.dataDir, { recursive: true });
  const onLog = options.onLog ?? ((name, line) => process.stdout.write(`[${name.padEnd(9)}] ${line}\n`));
  const common = { ...process.env, DATA_DIR: options.dataDir, ...options.env } as Record<string, string>;
  const ports: Record<string, number> = {};
  const procs: Proc[] = [];
  const replicaPorts: Record<string, number[]> = {};
  for (const service of SERVICES) {
    const count = options.replicas?.[service.name] ?? 1;
    if (count > 1 && options.basePort !== 0) throw new Error('replicas need free ports (basePort 0)');
    replicaPorts[service.name] = [];
    for (let i = 1; i <= count; i++) {
      const name = i === 1 ? service.name : `${service.name}-${i}`;
      const port = options.basePort === 0 ? await freePort() : options.basePort + service.portOffset;
      // The Connect protocol for internal tools: the gRPC port + 1000 in the fixed layout.
      const connectPort = options.basePort === 0 ? await freePort() : port + 1000;
      ports[name] = port;
      ports[`${name}-connect`] = connectPort;
      replicaPorts[service.name]?.push(port);
      procs.push({
        name,
        entry: options.processFor?.[service.name]?.entry ?? path.join(REPO_ROOT, service.dir, 'dist/main.js'),
        nodeArgs: options.processFor?.[service.name]?.nodeArgs,
        port,
        env: {
          ...common,
          ...options.envFor?.[service.name],
          ...options.envFor?.[name],
          HOST: '127.0.0.1',
          PORT: String(port),
          CONNECT_PORT: String(connectPort),
        },
        health: grpcReady(port),
        restarts: 0,
      });
    }
  }
  // One replica: host:port, as before; several: grpc-js's static list, balanced round robin.
  const addressOf = (list: number[]) =>
    list.length === 1 ? `127.0.0.1:${list[0]}` : `ipv4:${list.map((p) => `127.0.0.1:${p}`).join(',')}`;
  const addresses = Object.fromEntries(SERVICES.map((s) => [s.addressEnv, addressOf(replicaPorts[s.name] ?? [])]));
  // The monitor service calls the others (each run's operation and its billing), as the edge does;
  // the crawl service calls tls-scan, meta-scan and render for a site audit's site-level checks.
  for (const proc of procs)
    if (proc.name.startsWith('monitor') || proc.name.startsWith('crawl')) proc.env = { ...addresses, ...proc.env };
  const edges: Proc[] = [];
  for (let i = 1; i <= (options.edges ?? 1); i++) {
    const name = i === 1 ? 'edge' : `edge-${i}`;
    const edgePort = options.edgePort === 0 || i > 1 ? await freePort() : options.edgePort;
    ports[name] = edgePort;
    edges.push({
      name,
      // `edge-2` may run another build than `edge` (a benchmark's "before"); unnamed, each runs edge's.
      entry:
        (options.processFor?.[name] ?? options.processFor?.edge)?.entry ?? path.join(REPO_ROOT, 'edge/dist/main.js'),
      nodeArgs: (options.processFor?.[name] ?? options.processFor?.edge)?.nodeArgs,
      port: edgePort,
      env: { ...common, ...addresses, ...options.envFor?.edge, ...options.envFor?.[name], PORT: String(edgePort) },
      health: httpReady(edgePort),
      restarts: 0,
    });
  }
  // A liveness bound, not a speed check: on a shared, loaded machine a cold start has taken 35 s.
  const readyTimeout = options.readyTimeoutMs ?? 90_000;

  let stopping = false;
  const supervise = options.supervise;

  /** A supervised process that died: started again after its back-off, and again if that start fails. */
  const restartLater = (proc: Proc, why: string) => {
    if (!supervise || stopping || proc.stopped) return;
    if (proc.readyAt !== undefined && Date.now() - proc.readyAt >= supervise.resetAfterMs) proc.restarts = 0;
    const delay = Math.min(supervise.maxDelayMs, supervise.firstDelayMs * 2 ** proc.restarts);
    proc.restarts++;
    onLog('runner', `${proc.name} ${why}; restarting it in ${delay / 1000} s (restart ${proc.restarts} in a row)`);
    proc.restartTimer = setTimeout(() => {
      proc.restartTimer = undefined;
      if (stopping || proc.stopped) return;
      launch(proc).then(
        () => onLog('runner', `${proc.name} restarted and ready`),
        (err: Error) => restartLater(proc, `did not become ready (${err.message})`),
      );
    }, delay);
    // The children keep the runner alive; a pending restart alone must not.
    proc.restartTimer.unref();
  };

  const launch = async (proc: Proc) => {
    const child = spawn(process.execPath, ['--enable-source-maps', ...(proc.nodeArgs ?? []), proc.entry], {
      env: proc.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.child = child;
    running.add(child);
    let ready = false;
    child.once('exit', (code, signal) => {
      running.delete(child);
      // Before it was ready, the launch itself reports the failure.
      if (ready && proc.child === child) restartLater(proc, `exited (${signal ?? `status ${code}`})`);
    });
    // A process that exits before it is ready says why in its last lines: the launch's error carries them.
    const lastLines: string[] = [];
    const closed = new Promise((resolve) => child.once('close', resolve));
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        onLog(proc.name, line);
        if (lastLines.push(line) > 5) lastLines.shift();
      });
    }
    const deadline = Date.now() + readyTimeout;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        await Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]);
        const status = child.signalCode ?? `code ${child.exitCode}`;
        throw new Error(
          `${proc.name} exited (${status}) before it was ready; its last lines:\n${lastLines.join('\n')}`,
        );
      }
      if (await proc.health()) {
        ready = true;
        proc.readyAt = Date.now();
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGKILL');
    throw new Error(`${proc.name} was not healthy within ${readyTimeout} ms`);
  };

  const terminate = async (proc: Proc, signal: NodeJS.Signals) => {
    proc.stopped = true;
    clearTimeout(proc.restartTimer);
    const child = proc.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };

  const all = [...procs, ...edges];
  try {
    await Promise.all(procs.map(launch));
    await Promise.all(edges.map(launch));
  } catch (err) {
    stopping = true;
    await Promise.all(all.map((p) => terminate(p, 'SIGKILL')));
    throw err;
  }
  const byName = (name: string) => {
    const proc = all.find((p) => p.name === name);
    if (!proc) throw new Error(`no process named ${name}`);
    return proc;
  };
  return {
    edgeUrl: `http://127.0.0.1:${ports.edge}`,
    edgeUrls: edges.map((e) => `http://127.0.0.1:${e.port}`),
    ports,
    kill: (name) => terminate(byName(name), 'SIGKILL'),
    start: (name) => {
      const proc = byName(name);
      proc.stopped = false;
      proc.restarts = 0;
      return launch(proc);
    },
    pid: (name) => byName(name).child?.pid,
    // The edge first, so no new calls reach services that are draining.
    stop: async () => {
      stopping = true;
      await Promise.all(edges.map((e) => terminate(e, 'SIGTERM')));
      await Promise.all(procs.map((p) => terminate(p, 'SIGTERM')));
    },
  };
}
