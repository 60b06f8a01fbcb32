import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts worker threads on a module of a service, `name` beside `importMetaUrl` (the caller's
 * `import.meta.url`): its .js when built, its .ts under tsx (the tests), where the thread registers
 * tsx itself before loading the TypeScript. The entry is looked up once, when first started.
 */
export function moduleWorker(importMetaUrl: string, name: string): (options?: WorkerOptions) => Worker {
  let entry: URL | undefined;
  return (options = {}) => {
    entry ??= ['js', 'ts']
      .map((extension) => new URL(`./${name}.${extension}`, importMetaUrl))
      .find((url) => existsSync(fileURLToPath(url)));
    if (!entry) throw new Error(`${name} not found beside ${fileURLToPath(importMetaUrl)}`);
    if (entry.pathname.endsWith('.js')) return new Worker(entry, options);
    return new Worker(
      `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`,
      { ...options, eval: true },
    );
  };
}
