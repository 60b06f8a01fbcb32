/**
 * The fixture site in a process of its own, so a benchmark's load generator has its process to
 * itself: `node --import tsx site-process.ts` prints `ORIGIN=http://127.0.0.1:PORT` once it
 * listens, and closes the site on SIGTERM or when its parent goes away (its stdin ends).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startFixtureSite } from '../src/fixture-site.js';

export interface SiteProcess {
  origin: string;
  pid: number;
  url(path: string): string;
  stop(): Promise<void>;
}

/** Starts this file as a child process and waits for its site to listen. */
export async function startSiteProcess(): Promise<SiteProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const origin = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the fixture site process exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('ORIGIN=')) resolve(line.slice('ORIGIN='.length));
    });
  });
  return {
    origin,
    pid: child.pid as number,
    url: (path) => new URL(path, origin).href,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const site = await startFixtureSite();
  const stop = () => void site.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.stdin.once('end', stop).resume();
  console.log(`ORIGIN=${site.origin}`);
}
