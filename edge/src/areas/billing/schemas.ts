/** Quota, the bot challenge, sessions and API keys. */
import * as billing from '@webutil/proto/webutil/billing/v1/billing.fields';
import * as payments from '@webutil/proto/webutil/billing/v1/payments.fields';
import { z } from 'zod';
import { count, queryInteger, required, timestamp } from '../../rest/common.js';
import { reshaped, restObject } from '../../rest/from-proto.js';

const plan = z.enum(['FREE', 'STARTER', 'GROWTH', 'SCALE', 'ENTERPRISE']);
/** A key's mode: live, or test (a sandbox key, docs/decisions/0207-sandbox-keys.md). */
const KEY_MODE = z.enum(['live', 'test'], { error: 'mode must be live or test' });

export const Quota = restObject(billing.Quota, {
  id: 'Quota',
  fields: {
    callerKind: { value: z.enum(['anonymous', 'session', 'apikey']) },
    plan: { value: plan, description: 'Omitted for anonymous callers.' },
    limit: { value: count, description: 'Credits this cycle; per UTC day for anonymous callers.' },
    remaining: { value: count, description: 'Cycle credits left plus unused top-ups.' },
  },
});

const AltchaChallenge = restObject(billing.AltchaChallenge, {
  description: 'The ALTCHA widget’s challenge JSON.',
  fields: { maxNumber: { as: 'maxnumber' } },
});
const TurnstileChallenge = restObject(billing.TurnstileChallenge);
/** The oneof as the spec's tagged union: `provider` names the member (presenters/billing.ts). */
export const Challenge = reshaped(
  billing.CreateChallengeResponse,
  z
    .discriminatedUnion('provider', [
      z.strictObject({
        provider: z.literal('altcha'),
        challenge: AltchaChallenge,
      }),
      z.strictObject({ provider: z.literal('turnstile'), ...TurnstileChallenge.shape }),
    ])
    .meta({ id: 'Challenge' }),
  { altcha: AltchaChallenge, turnstile: TurnstileChallenge },
);

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

export const ChallengeCleared = restObject(billing.SolveChallengeResponse, {
  id: 'ChallengeCleared',
  fields: { maxAgeSeconds: { value: count, description: 'Lifetime of the wu_clearance cookie just set.' } },
  omit: { clearance: 'the wu_clearance cookie' },
});

const Account = restObject(billing.Account, {
  id: 'Account',
  fields: {
    plan: { value: plan },
    createdAt: { value: timestamp },
    cycleEnds: { value: timestamp, description: 'When the cycle’s credits renew.' },
    topUpCredits: { value: count, description: 'Purchased credits left; they outlast the cycle.' },
    emailVerified: {
      description:
        'Whether the address is verified (the link mailed at sign-up). Until it is, the account works on the ' +
        'Free plan but may not create API keys or buy (403 email_not_verified).',
    },
    planPrice: {
      value: count,
      description: 'The plan’s monthly card price in the currency’s smallest unit; absent where not sold by card.',
    },
    currency: { description: 'ISO 4217, lower case, of planPrice; absent with it.' },
    paidThrough: {
      value: timestamp,
      description:
        'Until when a paid subscription holds the plan: its period’s end, plus the grace while a renewal is unpaid; ' +
        'after it, unpaid, the account is on Free. Absent when no subscription holds the plan.',
    },
    renews: { description: 'Whether the plan renews at cycleEnds (false: its subscription ends then).' },
  },
});
export const Session = restObject(billing.Session, {
  id: 'Session',
  fields: {
    account: { value: Account },
    csrfToken: {
      description: 'Send it as X-CSRF-Token on the session’s state-changing and credit-spending requests.',
    },
  },
  omit: { token: 'the wu_session cookie', maxAgeSeconds: 'the wu_session cookie' },
});
export const SignedOut = restObject(billing.SignOutResponse, {
  id: 'SignedOut',
  add: { signedOut: z.literal(true) },
});

export const ApiKey = restObject(billing.ApiKey, {
  id: 'ApiKey',
  fields: {
    prefix: { description: 'The key’s first characters, e.g. wu_live_AbCd (wu_test_ for a test key).' },
    createdAt: { value: timestamp },
    lastUsedAt: { value: timestamp, nullable: true, description: 'Recorded at most once a minute.' },
    revokedAt: { value: timestamp, nullable: true },
    creditLimit: {
      value: count,
      nullable: true,
      description: 'Credits this key may spend per cycle (402 key_credit_limit past it); null: the account’s.',
    },
    expiresAt: { value: timestamp, nullable: true, description: 'From then on the key is refused (401 key_expired).' },
    allowedOperations: {
      description:
        'The credit-spending operations this key may call (403 operation_not_allowed otherwise); empty: all.',
    },
    creditsSpentThisCycle: {
      value: count,
      description: 'Credits this key spent in the account’s current cycle, calls in flight included.',
    },
    mode: {
      value: KEY_MODE,
      description:
        'live, or test: a sandbox key (wu_test_) whose calls are answered from fixed samples, spending nothing.',
    },
  },
});

/**
 * A new key: its name, and optionally its own limits. `operations`: the ids `allowedOperations`
 * may list (the credit-spending routes).
 */
export const newKeyInput = (operations: readonly [string, ...string[]]) =>
  z.object({
    name: required('name'),
    creditLimit: z
      .number({ error: 'creditLimit must be a whole number' })
      .int('creditLimit must be a whole number')
      .min(1, 'creditLimit must be at least 1')
      .max(100_000_000, 'creditLimit must be at most 100000000')
      .optional()
      .meta({ description: 'Credits this key may spend per cycle of the account; past it, 402 key_credit_limit.' }),
    expiresAt: z.iso
      .datetime({ offset: true, error: 'expiresAt must be an ISO 8601 time, e.g. 2026-12-31T00:00:00Z' })
      .optional()
      .meta({ description: 'When the key stops working (401 key_expired); must be in the future.' }),
    allowedOperations: z
      .array(z.enum(operations, { error: `allowedOperations may list: ${operations.join(', ')}` }))
      .min(1, 'allowedOperations must list at least one operation')
      .max(operations.length)
      .optional()
      .meta({
        description:
          'The credit-spending operations this key may call; others answer 403 operation_not_allowed. ' +
          'Free reads (quota, job polls, downloads) stay open.',
      }),
    mode: KEY_MODE.optional().meta({
      description:
        'live (default), or test: a sandbox key (wu_test_) whose credit-spending calls answer fixed sample results ' +
        'in the real shapes, spend nothing and fetch nothing. A test key takes no creditLimit.',
    }),
  });
export const NewApiKey = restObject(billing.CreateApiKeyResponse, {
  id: 'NewApiKey',
  fields: {
    key: { spread: ApiKey },
    secret: { as: 'key', description: 'The full key, shown this once.' },
  },
});
export const ApiKeyList = restObject(billing.ListApiKeysResponse, {
  id: 'ApiKeyList',
  fields: { keys: { value: ApiKey } },
});

/** Billing keeps epoch milliseconds; the spec's times are ISO 8601 (presenters/billing.ts). */
export const UsageList = restObject(billing.ListUsageResponse, {
  id: 'UsageList',
  fields: {
    entries: {
      as: 'usage',
      value: restObject(billing.UsageEntry, {
        fields: {
          operation: { description: 'The route’s operation, e.g. broken-links.' },
          credits: { value: count },
          atMs: { as: 'at', value: timestamp },
          target: {
            nullable: true,
            description:
              'What the call worked on: its url or domain (at most 300 characters); null when it names none.',
            example: 'https://example.com/',
          },
        },
      }),
      description: 'The account’s 50 most recent spent calls, newest first.',
    },
  },
});

export const usageByDayInput = z.object({
  days: queryInteger('days', 1, 90, {
    description: 'How many UTC days to sum, today the last: 1 to 90. Default 30.',
    example: 30,
  }),
});

const OperationUsage = restObject(billing.OperationUsage, {
  fields: {
    operation: { description: 'The route’s operation, e.g. screenshot.' },
    credits: { value: count },
    calls: { value: count },
  },
});

export const DailyUsageList = restObject(billing.UsageByDayResponse, {
  id: 'DailyUsage',
  fields: {
    days: {
      value: restObject(billing.DayUsage, {
        fields: {
          day: { description: 'The UTC day, YYYY-MM-DD.', example: '2026-11-29' },
          credits: { value: count, description: 'Credits the day’s calls spent.' },
          calls: { value: count, description: 'Calls that spent credits that day.' },
          operations: { value: OperationUsage, description: 'The day’s credits and calls by operation.' },
        },
      }),
      description: 'Every day of the range, oldest first; days without calls are zeros (a sandbox key: all zero).',
    },
  },
});

/** The paid plans a card buys, and the top-up packs by their credits (decision 0381). */
const PAID_PLAN = z.enum(['STARTER', 'GROWTH', 'SCALE'], { error: 'plan must be STARTER, GROWTH or SCALE' });
const PACK = z.union([z.literal(1000), z.literal(5000), z.literal(25000)], {
  error: 'pack must be 1000, 5000 or 25000 (credits)',
});
const amount = count.meta({ description: 'In the currency’s smallest unit (cents).', example: 2900 });

export const Prices = restObject(payments.GetPricesResponse, {
  id: 'Prices',
  fields: {
    configured: {
      description: 'Whether this deployment takes card payments (Stripe); else an operator grants credits.',
    },
    currency: { description: 'ISO 4217, lower case; empty when payments are not configured.', example: 'usd' },
    plans: {
      value: restObject(payments.PlanPrice, {
        fields: { plan: { value: PAID_PLAN }, creditsPerCycle: { value: count }, amount: { value: amount } },
      }),
      description: 'Each paid plan’s monthly price.',
    },
    packs: {
      value: restObject(payments.PackPrice, { fields: { credits: { value: count }, amount: { value: amount } } }),
      description: 'Each top-up pack’s price; its credits outlast the cycle.',
    },
    operatorCommand: { description: 'What an operator runs instead of a card payment.' },
  },
});

export const checkoutInput = z
  .object({
    plan: PAID_PLAN.optional().meta({ description: 'A plan’s monthly subscription.' }),
    pack: PACK.optional().meta({ description: 'A top-up pack, by the credits it adds.' }),
  })
  .refine((v) => (v.plan === undefined) !== (v.pack === undefined), 'name either a plan or a pack');

export const Checkout = restObject(payments.CreateCheckoutResponse, {
  id: 'Checkout',
  fields: {
    url: {
      description: 'Stripe’s checkout page; send the customer there.',
      example: 'https://checkout.stripe.com/c/pay/cs_test_a1',
    },
    sessionId: { description: 'The Checkout Session’s id.', example: 'cs_test_a1' },
  },
});

export const Portal = restObject(payments.CreatePortalResponse, {
  id: 'Portal',
  fields: { url: { description: 'Stripe’s customer portal: plan changes, cancellation, invoices and cards.' } },
});

/** The webhook's body as Stripe sent it (the signature covers its bytes) and its Stripe-Signature header. */
export const stripeEventInput = z.object({
  payload: z.string({ error: 'the body is required' }).min(2, 'the body is required'),
  signature: z
    .string({ error: 'the Stripe-Signature header is required' })
    .min(1, 'the Stripe-Signature header is required')
    .max(4096, 'the Stripe-Signature header is too long'),
});

export const StripeEventApplied = restObject(payments.ApplyStripeEventResponse, {
  id: 'StripeEventApplied',
  fields: {
    eventId: { example: 'evt_1' },
    eventType: { example: 'checkout.session.completed' },
    outcome: {
      description:
        'applied: credits or plan changed now; duplicate: this event, or the object it names, was applied before; ' +
        'ignored: a type not acted on, or an object not in a paid state.',
    },
  },
});
