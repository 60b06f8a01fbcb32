import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack, type Stack, type StackOptions } from './local-stack.js';

export interface TestStack extends Stack {
  dataDir: string;
  /** Lines every process logged, for diagnosing a failed test. */
  logs: string[];
  /** fetch() against the edge, e.g. api('/v1/down-check?url=...'). */
  api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
}

export interface TestStackOptions {
  /** CIDRs the services may reach; tests of fixture sites pass '127.0.0.0/8'. Default: none. */
  allowTargets?: string;
  env?: Record<string, string>;
  envFor?: StackOptions['envFor'];
}

/**
 * The e2e harness: edge plus every implemented service on free ports, a throw-away data
 * directory, logs kept in memory (printed when WEBUTIL_TEST_LOGS=1).
 */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'webutil-test-'));
  const logs: string[] = [];
  const echo = process.env.WEBUTIL_TEST_LOGS === '1';
  const stack = await startStack({
    edgePort: 0,
    basePort: 0,
    dataDir,
    env: { LOG_LEVEL: echo ? 'debug' : 'info', WEBUTIL_ALLOW_TARGETS: options.allowTargets ?? '', ...options.env },
    envFor: options.envFor,
    onLog: (name, line) => {
      logs.push(`[${name}] ${line}`);
      if (logs.length > 5000) logs.splice(0, 1000);
      if (echo) process.stdout.write(`[${name}] ${line}\n`);
    },
  });
  return {
    ...stack,
    dataDir,
    logs,
    api: (pathAndQuery, init) => fetch(`${stack.edgeUrl}${pathAndQuery}`, init),
    stop: async () => {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
