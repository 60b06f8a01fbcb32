import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
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

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
