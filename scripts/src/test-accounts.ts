import type { TestStack } from './test-stack.js';

let accounts = 0;

/** A fresh account through the operator CLI, with a test API key (any package's tests). */
export async function account(
  stack: TestStack,
  plan: string,
  ...options: string[]
): Promise<{ email: string; apiKey: string }> {
  const email = `user${++accounts}-${process.pid}-${Date.now()}@example.test`;
  const created = await stack.admin(
    'create-account',
    '--email',
    email,
    '--plan',
    plan,
    '--mint-key',
    'test',
    ...options,
  );
  if (!created.apiKey) throw new Error(`create-account minted no key for ${email}`);
  return { email, apiKey: created.apiKey };
}

/**
 * A fresh Starter account holding exactly `credits`, its rate limit out of the way, and a live key
 * named `name` (the cluster tests' bursts).
 */
export async function fundedKey(stack: TestStack, name: string, credits: number): Promise<string> {
  const email = `funded-${name}-${process.pid}-${Date.now()}@example.test`;
  const created = await stack.admin(
    ...['create-account', '--email', email, '--plan', 'STARTER', '--credits', String(credits)],
    ...['--rate-limit', '1000000', '--mint-key', name],
  );
  if (!created.apiKey) throw new Error(`create-account minted no key for ${email}`);
  return created.apiKey;
}
