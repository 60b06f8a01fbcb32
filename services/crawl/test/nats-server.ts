import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { natsResourceNames } from '../src/nats-transport.js';

/** The shared NATS the test suite uses (scripts/ensure-nats.sh starts it). */
export const SHARED_NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** A prefix no other test run uses, so parallel runs never see each other's jobs. */
export function uniquePrefix(): string {
  return `t${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
}

/** Deletes the streams (and so the consumers and the result bucket) a prefix created. */
export async function removeCrawlStreams(url: string, prefix: string): Promise<void> {
  const names = natsResourceNames(prefix);
  const nc = await connect({ servers: url });
  try {
    const jsm = await nc.jetstreamManager();
    for (const stream of [names.jobsStream, names.eventsStream, `OBJ_${names.resultsBucket}`]) {
      await jsm.streams.delete(stream).catch(() => false);
    }
  } finally {
    await nc.close();
  }
}

/** A private nats-server (JetStream, file store) that a test may stop and start again on the same port. */
export interface OwnNats {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its store. */
  dispose(): Promise<void>;
}

export async function startOwnNats(): Promise<OwnNats> {
  const store = mkdtempSync(path.join(os.tmpdir(), 'crawl-nats-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if (await accepts(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('nats-server did not start');
  };
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    start,
    stop,
    dispose: async () => {
      await stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
