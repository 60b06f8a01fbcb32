import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { freePort } from './local-stack.js';

/** The shared NATS the test suite uses (scripts/ensure-nats.sh starts it). */
export const SHARED_NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

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
    child = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], {
      stdio: 'ignore',
    });
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

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** A subject and stream prefix no other test run uses, so parallel runs never see each other's work. */
export function uniquePrefix(): string {
  return `t${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Deletes the JetStream streams a prefix created (their consumers and object-store buckets go
 * with them). Services name their streams after the prefix, upper-cased, object stores
 * `OBJ_<prefix>_...` and key-value buckets `KV_<prefix>_...`; what follows the prefix is the service's business.
 */
export async function removeStreams(url: string, prefix: string): Promise<void> {
  const base = prefix.replace(/[^A-Za-z0-9]/g, '_').toUpperCase();
  const nc = await connect({ servers: url });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const name of jsm.streams.names()) {
      const owner = name.replace(/^(OBJ|KV)_/, '');
      if (owner.toUpperCase().startsWith(`${base}_`)) await jsm.streams.delete(name).catch(() => false);
    }
  } finally {
    await nc.close();
  }
}
