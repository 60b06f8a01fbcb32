import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * Reads and validates environment variables against a zod shape. A bad value stops the
 * process with one line naming the variable, so a misconfigured pod fails at start, not later.
 * An empty variable counts as unset (its default, or absent): `NAME=` is how env files, compose
 * and Helm values write "not configured", and the shell's `${NAME:-default}` reads it the same way.
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<z.ZodObject<S>> {
  const parsed = z.object(shape).safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const name = issue ? String(issue.path[0] ?? '?') : '?';
  const value = env[name];
  process.stderr.write(
    `config error: ${name}${value === undefined ? '' : `=${JSON.stringify(value)}`}: ${issue?.message ?? 'invalid'}\n`,
  );
  process.exit(78); // EX_CONFIG
}

/** Env helpers: every variable is optional with a default, so `npm start` needs no setup. */
export const env = {
  port: (fallback: number) => wholeNumber(0, 65535).default(fallback),
  int: (fallback: number, min = 0) => wholeNumber(min).default(fallback),
  string: (fallback: string) => z.string().min(1).default(fallback),
  optionalString: () => z.string().min(1).optional(),
  /** A whole number when set; unset, the caller picks (a default that depends on other settings). */
  optionalInt: (min = 0) => wholeNumber(min).optional(),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  /** Comma-separated list (white space around items and empty items dropped). */
  list: () => z.string().default('').transform(splitList),
  /** Comma-separated CIDR list, validated here so a typo stops the process at start. */
  cidrList: () =>
    z
      .string()
      .default('')
      .transform((value, ctx) => {
        const list = splitList(value);
        for (const cidr of list) {
          if (!isCidr(cidr)) ctx.addIssue({ code: 'custom', message: `not a CIDR: ${cidr}` });
        }
        return list;
      }),
};

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * A whole number written in decimal. White space alone is an error: z.coerce.number() would read
 * it as 0 and start on a random port (an empty value never gets here: it is unset).
 */
function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

function isCidr(text: string): boolean {
  try {
    ipaddr.parseCIDR(text);
    return true;
  } catch {
    return false;
  }
}

/** Settings every service process reads. */
export const serviceEnv = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  METRICS_PORT: wholeNumber(0, 65535).optional(),
  /** The Connect protocol (JSON over HTTP/1.1) for internal tools; unset: gRPC only. */
  CONNECT_PORT: wholeNumber(0, 65535).optional(),
  SHUTDOWN_GRACE_MS: env.int(10_000),
};
