/** Quota, the bot challenge, sessions and API keys. */
import { z } from 'zod';
import { count, required, timestamp } from './common.js';

const plan = z.enum(['FREE', 'STARTER', 'GROWTH', 'SCALE', 'ENTERPRISE']);

export const Quota = z
  .strictObject({
    callerKind: z.enum(['anonymous', 'session', 'apikey']),
    plan: plan.optional().meta({ description: 'Omitted for anonymous callers.' }),
    limit: count.meta({ description: 'Credits this cycle; per UTC day for anonymous callers.' }),
    remaining: count.meta({ description: 'Cycle credits left plus unused top-ups.' }),
  })
  .meta({ id: 'Quota' });

export const Challenge = z
  .discriminatedUnion('provider', [
    z.strictObject({
      provider: z.literal('altcha'),
      challenge: z
        .strictObject({
          algorithm: z.string(),
          challenge: z.string(),
          maxnumber: z.number().int(),
          salt: z.string(),
          signature: z.string(),
        })
        .meta({ description: 'The ALTCHA widget’s challenge JSON.' }),
    }),
    z.strictObject({ provider: z.literal('turnstile'), siteKey: z.string() }),
  ])
  .meta({ id: 'Challenge' });

/** Passwords are taken as typed: no trimming. */
const password = z
  .string({ error: (issue) => (issue.input === undefined ? 'password is required' : 'password must be a string') })
  .min(1, 'password is required');
/** A solved bot challenge; each is accepted once. */
const solution = {
  payload: z.string().max(8192).optional().meta({ description: 'Base64 JSON of a solved ALTCHA challenge.' }),
  turnstileToken: z.string().max(4096).optional().meta({ description: 'The Turnstile widget’s token.' }),
};
/** Sign-up and sign-in; a solved challenge is required by sign-up, and by sign-in once an account asks. */
export const credentialsInput = z.object({ email: required('email'), password, ...solution });
export const solutionInput = z
  .object(solution)
  .refine((v) => v.payload || v.turnstileToken, 'payload (the solved ALTCHA challenge) or turnstileToken is required');

export const ChallengeCleared = z
  .strictObject({ maxAgeSeconds: count.meta({ description: 'Lifetime of the wu_clearance cookie just set.' }) })
  .meta({ id: 'ChallengeCleared' });

const Account = z
  .strictObject({
    email: z.string(),
    plan,
    createdAt: timestamp,
    cycleEnds: timestamp.meta({ description: 'When the cycle’s credits renew.' }),
    topUpCredits: count.meta({ description: 'Purchased credits left; they outlast the cycle.' }),
  })
  .meta({ id: 'Account' });
export const Session = z
  .strictObject({
    account: Account,
    csrfToken: z.string().meta({
      description: 'Send it as X-CSRF-Token on the session’s state-changing and credit-spending requests.',
    }),
  })
  .meta({ id: 'Session' });
export const SignedOut = z.strictObject({ signedOut: z.literal(true) }).meta({ id: 'SignedOut' });

const apiKeyFields = {
  id: z.string(),
  name: z.string(),
  prefix: z.string().meta({ description: 'The key’s first characters, e.g. wu_live_AbCd.' }),
  createdAt: timestamp,
  lastUsedAt: timestamp.nullable(),
  revokedAt: timestamp.nullable(),
};
export const ApiKey = z.strictObject(apiKeyFields).meta({ id: 'ApiKey' });
export const NewApiKey = z
  .strictObject({ ...apiKeyFields, key: z.string().meta({ description: 'The full key, shown this once.' }) })
  .meta({ id: 'NewApiKey' });
export const ApiKeyList = z.strictObject({ keys: z.array(ApiKey) }).meta({ id: 'ApiKeyList' });

export const UsageList = z
  .strictObject({
    usage: z
      .array(
        z.strictObject({
          operation: z.string().meta({ description: 'The route’s operation, e.g. broken-links.' }),
          credits: count,
          at: timestamp,
        }),
      )
      .meta({ description: 'The account’s 50 most recent spent calls, newest first.' }),
  })
  .meta({ id: 'UsageList' });
