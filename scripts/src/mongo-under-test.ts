import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface MongoUnderTest {
  url: string;
  /** What the results are reported against: jongodb, or the server MONGO_URL names. */
  label: string;
  stop(): Promise<void>;
}

/**
 * The MongoDB-wire server the mongoose adapter is tested against: MONGO_URL when set, else a
 * jongodb process (shipped in an npm package) on a free port, whose URI it prints on stdout.
 */
export async function startMongo(): Promise<MongoUnderTest> {
  if (process.env.MONGO_URL) return { url: process.env.MONGO_URL, label: 'MONGO_URL', stop: async () => undefined };
  const require = createRequire(import.meta.url);
  const bin = path.join(
    path.dirname(require.resolve('@jongodb/memory-server-bin-linux-x64-gnu/package.json')),
    'bin/jongodb',
  );
  const child = spawn(bin, ['--host=127.0.0.1', '--port=0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.resume();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('jongodb printed no JONGODB_URI within 20 s')), 20_000);
    child.once('exit', (code) => reject(new Error(`jongodb exited with code ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('JONGODB_URI=')) return;
      clearTimeout(timer);
      resolve(line.slice('JONGODB_URI='.length).trim());
    });
  });
  return {
    url,
    label: 'jongodb',
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
