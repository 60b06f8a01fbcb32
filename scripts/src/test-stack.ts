import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Contract } from './contract.js';
import { REPO_ROOT, type Stack, type StackOptions, startStack } from './local-stack.js';

/** fetch() options plus the credential to send: the stack's API key unless told otherwise. */
export interface ApiInit extends RequestInit {
  /** Send no Authorization header (an anonymous or cookie-authenticated caller). */
  anonymous?: boolean;
  /** Send this API key instead of the stack's. */
  apiKey?: string;
  /** Which edge to ask (an index into `edgeUrls`; default the first). */
  edge?: number;
}

/** What the admin CLI prints with --json: the account, and a new key when one was minted. */
export interface AdminAccount {
  id: string;
  email: string;
  plan: string;
  creditsPerCycle: number;
  cycleCredits: number;
  topUpCredits: number;
  cycleEnds: string;
  keys: string[];
  apiKey?: string;
}

export interface TestStack extends Stack {
  dataDir: string;
  /** Lines every process logged, for diagnosing a failed test. */
  logs: string[];
  /** The stack's ENTERPRISE account: a large balance, a rate limit no test reaches. */
  account: AdminAccount;
  /** Its API key, which api() sends by default. */
  apiKey: string;
  /** The OpenAPI document the edge serves, which every api() response is checked against. */
  contract: Contract;
  /**
   * fetch() against the edge, e.g. api('/v1/down-check?url=...'), as the stack's API key unless
   * the caller passes its own Authorization header, `apiKey`, or `anonymous: true`. A response the
   * contract does not allow (status, body or headers) throws a ContractViolation.
   */
  api(pathAndQuery: string, init?: ApiInit): Promise<Response>;
  /** Runs the operator CLI on this stack's store, e.g. admin('create-account', '--email', e). */
  admin(...args: string[]): Promise<AdminAccount>;
  /** Moves the billing service's clock forward (only with the `clock` option). */
  advanceClock(ms: number): void;
}

export interface TestStackOptions {
  /** CIDRs the services may reach; tests of fixture sites pass '127.0.0.0/8'. Default: none. */
  allowTargets?: string;
  env?: Record<string, string>;
  envFor?: StackOptions['envFor'];
  processFor?: StackOptions['processFor'];
  /** Give billing a clock tests can move (day and cycle rollovers, expiries). */
  clock?: boolean;
  /** Restart processes that die, as `npm start` does (local-stack.ts); unset: a dead process stays down. */
  supervise?: StackOptions['supervise'];
  /** Processes per service and edges (local-stack.ts), for failover tests. */
  replicas?: StackOptions['replicas'];
  edges?: StackOptions['edges'];
}

const run = promisify(execFile);

/**
 * The e2e harness: edge plus every implemented service on free ports, a throw-away data
 * directory, logs kept in memory (printed when WEBUTIL_TEST_LOGS=1), and an ENTERPRISE account
 * with an API key provisioned through the operator CLI before the services start.
 */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'webutil-test-'));
  try {
    return await startIn(dataDir, options);
  } catch (err) {
    // A stack that never came up leaves nothing behind either.
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function startIn(dataDir: string, options: TestStackOptions): Promise<TestStack> {
  const logs: string[] = [];
  const echo = process.env.WEBUTIL_TEST_LOGS === '1';
  const clockFile = path.join(dataDir, 'clock-offset-ms');
  const clockEnv: Record<string, string> = options.clock ? { CLOCK_OFFSET_FILE: clockFile } : {};
  let offset = 0;
  if (options.clock) writeFileSync(clockFile, '0');

  const admin = async (...args: string[]): Promise<AdminAccount> => {
    const env = {
      ...process.env,
      ...options.env,
      ...options.envFor?.billing,
      ...clockEnv,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
    const { stdout } = await run(
      process.execPath,
      [path.join(REPO_ROOT, 'services/billing/dist/admin.js'), ...args, '--json'],
      { env },
    );
    return JSON.parse(stdout) as AdminAccount;
  };
  const account = await admin(
    'create-account',
    '--email',
    `test-stack-${randomUUID()}@webutil.test`,
    '--plan',
    'ENTERPRISE',
    '--top-up',
    '100000000',
    '--rate-limit',
    '1000000000',
    '--mint-key',
    'test-stack',
  );
  const apiKey = account.apiKey;
  if (!apiKey) throw new Error('the operator CLI minted no key for the test stack');

  const stack = await startStack({
    edgePort: 0,
    basePort: 0,
    dataDir,
    env: { LOG_LEVEL: echo ? 'debug' : 'info', WEBUTIL_ALLOW_TARGETS: options.allowTargets ?? '', ...options.env },
    envFor: { ...options.envFor, billing: { ...options.envFor?.billing, ...clockEnv } },
    supervise: options.supervise,
    processFor: options.processFor,
    replicas: options.replicas,
    edges: options.edges,
    onLog: (name, line) => {
      logs.push(`[${name}] ${line}`);
      if (logs.length > 5000) logs.splice(0, 1000);
      if (echo) process.stdout.write(`[${name}] ${line}\n`);
    },
  });
  const contract = await Contract.load(stack.edgeUrl).catch(async (err) => {
    await stack.stop();
    throw err;
  });
  return {
    ...stack,
    dataDir,
    logs,
    account,
    apiKey,
    contract,
    api: async (pathAndQuery, { anonymous, apiKey: key, edge = 0, ...init } = {}) => {
      const headers = new Headers(init.headers);
      if (!anonymous && !headers.has('authorization')) headers.set('authorization', `Bearer ${key ?? apiKey}`);
      const edgeUrl = stack.edgeUrls[edge];
      if (!edgeUrl) throw new Error(`the stack has no edge ${edge}`);
      return contract.fetch(`${edgeUrl}${pathAndQuery}`, { ...init, headers });
    },
    admin,
    advanceClock: (ms) => {
      if (!options.clock) throw new Error('startTestStack({ clock: true }) gives billing a movable clock');
      offset += ms;
      writeFileSync(clockFile, String(offset));
    },
    stop: async () => {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
