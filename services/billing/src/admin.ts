/**
 * Operator CLI, run from the repository root as `npm run admin -- <command> [options]`. It opens
 * the same store as the billing service (DATA_DIR, or MONGO_URL), so it works with the service
 * running or stopped.
 *
 *   create-account --email E [--plan P] [--password W|-] [--credits N] [--rate-limit N] [--top-up N] [--mint-key NAME]
 *   set-plan       --email E --plan P [--credits N|plan] [--rate-limit N|plan]
 *   add-top-up     --email E --credits N
 *   mint-key       --email E [--name NAME]
 *   set-password   --email E --password W|-
 *   show           --email E
 *
 * Plans: FREE STARTER GROWTH SCALE ENTERPRISE. --credits and --rate-limit override the plan
 * table for this account (credits per cycle, requests per minute); "plan" removes the override.
 * --password - reads the password from stdin. --json prints one JSON object for scripts.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { loadConfig } from '@webutil/kit';
import { Accounts, type PlanOverrides } from './accounts.js';
import { ApiKeys } from './api-keys.js';
import { clockEnv, clockFrom } from './clock.js';
import { Ledger } from './ledger.js';
import { DEFAULT_ANONYMOUS, isPlanName, PLAN_NAMES, type PlanName } from './plans.js';
import { noticeEnv, RevocationNotices } from './revocation-notices.js';
import { openStore, SQLITE_FILE, storeEnv } from './stores/open.js';
import type { Account } from './stores/store.js';

const USAGE =
  'usage: npm run admin -- <create-account|set-plan|add-top-up|mint-key|set-password|show> ' +
  `--email E [options] [--json]
  create-account --email E [--plan P] [--password W|-] [--credits N] [--rate-limit N] [--top-up N] [--mint-key NAME]
  set-plan       --email E --plan P [--credits N|plan] [--rate-limit N|plan]
  add-top-up     --email E --credits N
  mint-key       --email E [--name NAME]
  set-password   --email E --password W|-
  show           --email E
plans: ${PLAN_NAMES.join(' ')}`;

class UsageError extends Error {}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    email: { type: 'string' },
    plan: { type: 'string' },
    password: { type: 'string' },
    credits: { type: 'string' },
    'rate-limit': { type: 'string' },
    'top-up': { type: 'string' },
    'mint-key': { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

function count(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`--${option} must be a whole number`);
  return n;
}

/** A number, or "plan" to drop the account's override of the plan table. */
function override(option: string, value: string | undefined): number | null | undefined {
  return value === 'plan' ? null : count(option, value);
}

function plan(value: string | undefined, fallback?: PlanName): PlanName {
  const name = value?.toUpperCase() ?? fallback;
  if (!name || !isPlanName(name)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
  return name;
}

/** A MongoDB URL without its password, for printing. */
function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}

function required(option: 'email', value: string | undefined): string {
  if (!value) throw new UsageError(`--${option} is required`);
  return value;
}

async function password(value: string | undefined): Promise<string | undefined> {
  return value === '-' ? (await text(process.stdin)).replace(/\r?\n$/, '') : value;
}

async function main(): Promise<Record<string, unknown>> {
  const command = positionals[0];
  if (!command) throw new UsageError('');
  const config = loadConfig({ ...storeEnv, ...clockEnv, ...noticeEnv });
  const clock = clockFrom(config.CLOCK_OFFSET_FILE);
  if (config.MONGO_URL) {
    process.stderr.write(`admin: store: MongoDB at ${redacted(config.MONGO_URL)} (MONGO_URL)\n`);
  } else {
    const file = path.resolve(config.DATA_DIR, SQLITE_FILE);
    process.stderr.write(`admin: store: SQLite at ${file} (DATA_DIR=${config.DATA_DIR})\n`);
    // Only create-account may start a store; anything else in an empty place is a mistaken DATA_DIR.
    if (command !== 'create-account' && !existsSync(file))
      throw new Error(`no billing database at ${file}: is DATA_DIR right? (the service and create-account make it)`);
  }
  const store = await openStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL });
  const accounts = new Accounts(store, clock);
  const apiKeys = new ApiKeys(store, clock);
  const ledger = new Ledger(store, clock, { anonymous: DEFAULT_ANONYMOUS, reservationGraceMs: 0 });
  const email = required('email', values.email);
  const overrides: PlanOverrides = {
    creditsPerCycle: override('credits', values.credits),
    requestsPerMinute: override('rate-limit', values['rate-limit']),
  };

  // The edges drop what they keep of the account (views, credit leases) as soon as they hear this.
  const tellEdges = async (account: Account) => {
    const notices = await RevocationNotices.connect(config.NATS_URL, {
      warn: (details, message) => process.stderr.write(`admin: ${message} ${JSON.stringify(details)}\n`),
    });
    await notices.announce(account.id);
    await notices.close();
    return account;
  };
  const describe = async (account: Account, extra: Record<string, unknown> = {}) => {
    const current = await ledger.current((await store.accountById(account.id)) ?? account);
    const keys = await apiKeys.list(current);
    return {
      id: current.id,
      email: current.email,
      plan: current.plan,
      creditsPerCycle: ledger.creditsPerCycle(current),
      requestsPerMinute: current.requestsPerMinute ?? undefined,
      cycleCredits: current.cycleCredits,
      topUpCredits: current.topUpCredits,
      cycleEnds: new Date(current.cycleEnd).toISOString(),
      paidThrough: current.paidThrough === null ? undefined : new Date(current.paidThrough).toISOString(),
      keys: keys.map((k) => `${k.prefix}… ${k.name}${k.revokedAt === null ? '' : ' (revoked)'}`),
      ...extra,
    };
  };

  try {
    switch (command) {
      case 'create-account': {
        let account = await accounts.create({
          email,
          password: await password(values.password),
          plan: plan(values.plan, 'FREE'),
        });
        if (overrides.creditsPerCycle !== undefined || overrides.requestsPerMinute !== undefined)
          account = await accounts.changePlan(account, account.plan, overrides);
        const topUp = count('top-up', values['top-up']);
        if (topUp) account = await accounts.addTopUp(account, topUp);
        const minted = values['mint-key'] === undefined ? undefined : await apiKeys.mint(account, values['mint-key']);
        return await describe(account, minted ? { apiKey: minted.secret } : {});
      }
      case 'set-plan':
        if (!values.plan) throw new UsageError('--plan is required');
        return await describe(
          await tellEdges(await accounts.changePlan(await accounts.byEmail(email), plan(values.plan), overrides)),
        );
      case 'add-top-up': {
        const credits = count('credits', values.credits);
        if (!credits) throw new UsageError('--credits is required (a positive number)');
        return await describe(await accounts.addTopUp(await accounts.byEmail(email), credits));
      }
      case 'mint-key': {
        const account = await accounts.byEmail(email);
        const { secret } = await apiKeys.mint(account, values.name ?? 'default');
        return await describe(account, { apiKey: secret });
      }
      case 'set-password': {
        const given = await password(values.password);
        if (!given) throw new UsageError('--password is required');
        return await describe(await tellEdges(await accounts.setPassword(await accounts.byEmail(email), given)));
      }
      case 'show':
        return await describe(await accounts.byEmail(email));
      default:
        throw new UsageError(`unknown command: ${command}`);
    }
  } finally {
    await store.close();
  }
}

if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

try {
  const result = await main();
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    for (const [field, value] of Object.entries(result)) {
      if (value === undefined) continue;
      process.stdout.write(
        `${field.padEnd(18)} ${Array.isArray(value) ? value.join('\n'.padEnd(20)) || '-' : String(value)}\n`,
      );
    }
    if (result.apiKey) process.stdout.write('\nThe API key is shown only this once; store it now.\n');
  }
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message ? `${err.message}\n\n` : ''}${USAGE}\n`);
    process.exit(64); // EX_USAGE
  }
  process.stderr.write(`admin: ${(err as Error).message}\n`);
  process.exit(1);
}
