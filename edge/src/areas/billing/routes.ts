/** Quota, the bot challenge, sessions, API keys and usage: free, rate-limited like every route. */
import { z } from 'zod';
import { BILLING_TIMEOUT_MS } from '../../billing-client.js';
import { challengeSolution } from '../../caller.js';
import { noStore } from '../../envelope.js';
import type { CallOptions } from '../../grpc-clients.js';
import { noInput, required } from '../../rest/common.js';
import { type Caller, type RouteSpec, route } from '../../route-spec.js';
import {
  clearanceHeaders,
  presentChallenge,
  presentNewKey,
  presentRevokedKey,
  presentSignedOut,
  presentStripeEvent,
  presentUsage,
  signedIn,
  signedInHeaders,
  signedOutHeaders,
} from './presenters.js';
import {
  ApiKey,
  ApiKeyList,
  Challenge,
  ChallengeCleared,
  Checkout,
  checkoutInput,
  credentialsInput,
  DailyUsageList,
  NewApiKey,
  newKeyInput,
  Portal,
  Prices,
  Quota,
  Session,
  SignedOut,
  StripeEventApplied,
  solutionInput,
  stripeEventInput,
  UsageList,
  usageByDayInput,
} from './schemas.js';

/** What sign-up and sign-in send billing: the credentials, the client and any solved challenge. */
const signInput = (input: z.output<typeof credentialsInput>, caller: Caller) => ({
  email: input.email,
  password: input.password,
  clientIp: caller.credential.clientIp,
  solution: challengeSolution(input),
});

/** The caller's quota, the challenge, sign-up, sign-in and sign-out. */
export const sessionRoutes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/quota',
    operation: 'quota',
    summary: 'The caller’s credits: limit of the cycle (or day) and remaining.',
    credits: 0,
    input: noInput,
    output: Quota,
    timeoutMs: BILLING_TIMEOUT_MS,
    fromCallerView: true,
    freeRead: 'site-read',
    // Billing's Authorize (or the edge's view of the caller) already read the quota, counting this request.
    call: async (_c, _input, _options, caller) => caller.quota,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/challenge',
    operation: 'challenge',
    summary: 'A bot challenge for browser callers: an ALTCHA proof of work, or the Turnstile site key.',
    credits: 0,
    callers: 'ip',
    input: noInput,
    output: Challenge,
    errors: { challenge_unavailable: 503 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.createChallenge({ clientIp: caller.credential.clientIp }, options),
    present: presentChallenge,
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/challenge',
    operation: 'challenge-solve',
    summary: 'Submits a solved challenge; sets the wu_clearance cookie.',
    credits: 0,
    callers: 'ip',
    input: solutionInput,
    output: ChallengeCleared,
    errors: { challenge_failed: 401, challenge_expired: 401, challenge_unavailable: 503 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.solveChallenge({ clientIp: caller.credential.clientIp, solution: challengeSolution(input) }, options),
    headers: clearanceHeaders,
  }),
  route({
    method: 'POST',
    path: '/auth/sign-up',
    operation: 'sign-up',
    summary:
      'Creates a Free account and signs it in (sets wu_session), and mails a link verifying the address ' +
      '(POST /v1/auth/verify-email). Each sign-up redeems a freshly solved challenge (payload or ' +
      'turnstileToken), not the clearance; a client network opens 3 accounts a day.',
    credits: 0,
    callers: 'ip',
    input: credentialsInput,
    output: Session,
    status: 201,
    errors: {
      invalid_email: 400,
      weak_password: 400,
      invalid_password: 400,
      challenge_required: 401,
      challenge_failed: 401,
      email_taken: 409,
      sign_up_limit: 429,
      challenge_unavailable: 503,
    },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.signUp({ ...signInput(input, caller), linkBase: options.publicBaseUrl ?? '' }, options),
    present: signedIn,
    headers: signedInHeaders,
  }),
  route({
    method: 'POST',
    path: '/auth/sign-in',
    operation: 'sign-in',
    summary:
      'Signs in with email and password (sets wu_session). An account that has had many failed sign-ins ' +
      'asks for a freshly solved challenge (payload or turnstileToken) with each attempt.',
    credits: 0,
    callers: 'ip',
    input: credentialsInput,
    output: Session,
    errors: {
      invalid_credentials: 401,
      challenge_required: 401,
      challenge_failed: 401,
      sign_in_limit: 429,
      challenge_unavailable: 503,
    },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) => c.billing.signIn(signInput(input, caller), options),
    present: signedIn,
    headers: signedInHeaders,
  }),
  route({
    method: 'POST',
    path: '/auth/sign-out',
    operation: 'sign-out',
    summary: 'Ends the session (clears wu_session).',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: SignedOut,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.signOut({ credential: caller.credential }, options),
    present: presentSignedOut,
    headers: signedOutHeaders,
  }),
];

/**
 * The account, its API keys and its usage. `keyOperations`: the operations a key may be limited to
 * (`allowedOperations`), which the index derives from the route table.
 */
export const accountRoutes = (keyOperations: readonly [string, ...string[]]): RouteSpec[] => [
  route({
    method: 'GET',
    path: '/auth/me',
    operation: 'account',
    summary: 'The signed-in account and its CSRF token.',
    freeRead: 'site-read',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: Session,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.getAccount({ credential: caller.credential }, options),
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/keys',
    operation: 'list-keys',
    summary: 'The account’s API keys (never the keys themselves).',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: ApiKeyList,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.listApiKeys({ credential: caller.credential }, options),
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/account/usage',
    operation: 'account-usage',
    summary: 'The account’s most recent spent calls (operation, credits, time), newest first.',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: UsageList,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.listUsage({ credential: caller.credential }, options),
    present: presentUsage,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/account/usage/daily',
    operation: 'account-usage-daily',
    summary:
      'The account’s spent credits and calls per UTC day and operation over its last days (30 unless told), ' +
      'today the last. A session or an API key without limits.',
    credits: 0,
    callers: 'owner',
    input: usageByDayInput,
    output: DailyUsageList,
    errors: { account_required: 401, owner_required: 403 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.usageByDay(
        { subject: caller.subject, days: input.days ?? 30, sandbox: caller.sandbox === true },
        options,
      ),
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/keys',
    operation: 'create-key',
    summary:
      'Creates an API key (Starter plan or higher); the full key is shown this once. With mode test, a sandbox ' +
      'key: its calls answer fixed samples and spend nothing.',
    credits: 0,
    callers: 'session',
    input: newKeyInput(keyOperations),
    output: NewApiKey,
    status: 201,
    errors: {
      invalid_name: 400,
      invalid_credit_limit: 400,
      invalid_expires_at: 400,
      invalid_allowed_operations: 400,
      invalid_mode: 400,
      plan_required: 403,
      email_not_verified: 403,
    },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.createApiKey(
        {
          credential: caller.credential,
          name: input.name,
          creditLimit: input.creditLimit,
          expiresAt: input.expiresAt,
          allowedOperations: input.allowedOperations ?? [],
          mode: input.mode,
        },
        options,
      ),
    present: presentNewKey,
    headers: noStore,
  }),
  route({
    method: 'DELETE',
    path: '/keys/:key_id',
    operation: 'revoke-key',
    summary: 'Revokes an API key.',
    credits: 0,
    callers: 'session',
    input: z.object({ key_id: required('key_id') }),
    output: ApiKey,
    errors: { api_key_not_found: 404 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.revokeApiKey({ credential: caller.credential, keyId: input.key_id }, options),
    present: presentRevokedKey,
  }),
];

/** The website's pages come back here from Stripe's checkout and portal. */
const RETURN_PATH = '/account';
/** A Stripe event is a few KB; Stripe caps a webhook's body well below this. */
const STRIPE_EVENT_MAX_BYTES = 256 * 1024;
const PAYMENT_ERRORS = { payments_not_configured: 503, payment_provider_failed: 503 };

const returnUrl = (options: CallOptions) => `${options.publicBaseUrl ?? ''}${RETURN_PATH}`;

/** Card payments through Stripe (decision 0381): prices, checkout, the customer portal, Stripe's events. */
export const paymentRoutes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/billing/prices',
    operation: 'billing-prices',
    summary:
      'The plans’ monthly prices and the top-up packs’ prices this deployment sells by card, in its currency; ' +
      'configured false (and the operator’s command) when it sells none.',
    credits: 0,
    input: noInput,
    output: Prices,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options) => c.payments.getPrices({}, options),
  }),
  route({
    method: 'POST',
    path: '/billing/checkout',
    operation: 'billing-checkout',
    summary:
      'A Stripe Checkout page for a plan (a monthly subscription) or a top-up pack (a one-time payment); ' +
      'credits move when Stripe says it is paid. Back at /account?checkout=success or cancelled.',
    credits: 0,
    callers: 'session',
    input: checkoutInput,
    output: Checkout,
    errors: { ...PAYMENT_ERRORS, price_not_configured: 409, subscription_exists: 409, email_not_verified: 403 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.payments.createCheckout(
        {
          credential: caller.credential,
          item:
            input.plan !== undefined ? { $case: 'plan', plan: input.plan } : { $case: 'pack', pack: input.pack ?? 0 },
          returnUrl: returnUrl(options),
        },
        options,
      ),
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/billing/portal',
    operation: 'billing-portal',
    summary: 'A Stripe customer-portal page: plan changes, cancellation, invoices and cards.',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: Portal,
    errors: PAYMENT_ERRORS,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) =>
      c.payments.createPortal({ credential: caller.credential, returnUrl: returnUrl(options) }, options),
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/billing/stripe-webhook',
    operation: 'stripe-webhook',
    summary:
      'Stripe’s events (configure this URL in Stripe): each verified by its Stripe-Signature (at most 5 minutes ' +
      'old) and applied once per event id, from the object as Stripe tells it when asked again: a paid pack, a ' +
      'plan’s paid invoice (its cycle), plan changes and cancellations, a failed renewal (grace), a refund.',
    credits: 0,
    callers: 'ip',
    input: stripeEventInput,
    rawBody: {
      contentType: 'application/json',
      maxBytes: STRIPE_EVENT_MAX_BYTES,
      headers: { signature: 'Stripe-Signature' },
      description: 'The Stripe event exactly as Stripe sent it.',
    },
    output: StripeEventApplied,
    errors: {
      ...PAYMENT_ERRORS,
      invalid_signature: 400,
      invalid_event: 400,
      payment_customer_unknown: 404,
      price_unknown: 422,
    },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options) =>
      c.payments.applyStripeEvent({ payload: input.payload, signature: input.signature }, options),
    present: presentStripeEvent,
  }),
];
