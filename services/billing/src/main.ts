import { randomBytes } from 'node:crypto';
import { createLogger, exitOnFatalErrors, processOptions, runService } from '@webutil/kit';
import { createMailer } from '@webutil/kit/mail';
import { Accounts } from './accounts.js';
import { ApiKeys } from './api-keys.js';
import { Challenges } from './challenge.js';
import { clockFrom } from './clock.js';
import { readConfig } from './config.js';
import { Gate } from './gate.js';
import { IdempotencyKeys } from './idempotency.js';
import { Ledger } from './ledger.js';
import { EmailVerification } from './mail/email-verification.js';
import { AccountNotices } from './mail/notices.js';
import { PasswordReset } from './mail/password-reset.js';
import { accountMailService } from './mail/server.js';
import { openMailStore } from './mail/store.js';
import { Payments } from './payments/payments.js';
import { paymentService } from './payments/server.js';
import { paymentSettings } from './payments/settings.js';
import { DEFAULT_ANONYMOUS } from './plans.js';
import { RateLimiter } from './rate-limit.js';
import { RevocationNotices } from './revocation-notices.js';
import { billingService } from './server.js';
import { Sessions } from './sessions.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { openStore } from './stores/open.js';
import { webhookService } from './webhooks/server.js';
import { openWebhookStore } from './webhooks/store.js';
import { Webhooks } from './webhooks/webhooks.js';

const config = readConfig();

const log = createLogger('billing', config.LOG_LEVEL);
exitOnFatalErrors(log);
const clock = clockFrom(config.CLOCK_OFFSET_FILE);
const store = await openStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL });
const anonymous = {
  creditsPerDay: config.ANONYMOUS_DAILY_CREDITS,
  requestsPerMinute: config.ANONYMOUS_REQUESTS_PER_MINUTE,
  rendersInFlight: DEFAULT_ANONYMOUS.rendersInFlight,
};
const ledger = new Ledger(store, clock, { anonymous, reservationGraceMs: config.RESERVATION_GRACE_MS });
const accounts = new Accounts(store, clock);
const apiKeys = new ApiKeys(store, clock);
const challenges = new Challenges(
  {
    secret: config.CHALLENGE_SECRET ?? (await store.secret('challenge', randomBytes(32).toString('hex'))),
    maxNumber: config.CHALLENGE_MAX_NUMBER,
    challengeTtlMs: config.CHALLENGE_TTL_MS,
    clearanceTtlMs: config.CLEARANCE_TTL_MS,
    turnstile:
      config.TURNSTILE_SECRET && config.TURNSTILE_SITE_KEY
        ? {
            secret: config.TURNSTILE_SECRET,
            siteKey: config.TURNSTILE_SITE_KEY,
            verifyUrl: config.TURNSTILE_VERIFY_URL,
          }
        : undefined,
  },
  store,
  clock,
  log,
);
const mailStore = await openMailStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL });
const mailLog = log.child({ part: 'mail' });
const mailer = createMailer({
  smtpUrl: config.SMTP_URL,
  from: config.MAIL_FROM,
  dataDir: config.DATA_DIR,
  log: mailLog,
});
const publicBaseUrl = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
const mailDeps = { mail: mailStore, billing: store, mailer, clock, log: mailLog, publicBaseUrl };
const verification = new EmailVerification(mailDeps);
const passwordReset = new PasswordReset({ ...mailDeps, accounts, verification });
const accountNotices = new AccountNotices({
  ...mailDeps,
  accountUrl: `${publicBaseUrl}/account`,
  monitorsUrl: `${publicBaseUrl}/monitors`,
});
const sessions = new Sessions({
  store,
  accounts,
  challenges,
  verification,
  throttle: new SignInThrottle(store, challenges, clock),
  clock,
  signUpsPerNetworkPerDay: config.SIGN_UPS_PER_NETWORK_PER_DAY,
});
const limiter = new RateLimiter(store, clock);
const notices = await RevocationNotices.connect(config.NATS_URL, log);
const gate = new Gate({ ledger, apiKeys, sessions, challenges, limiter, anonymous, accounts: store });
const idempotencyKeys = new IdempotencyKeys(store, clock);
const payments = new Payments(paymentSettings(config), store, clock, log.child({ part: 'payments' }), accountNotices);
const webhookStore = await openWebhookStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL });
const webhooks = new Webhooks(webhookStore, clock);

// Holds nobody settled (an edge died mid-call) return their credits; expired rows go away.
const every = (ms: number, task: () => Promise<unknown>, what: string) =>
  setInterval(() => void task().catch((err: unknown) => log.error({ err }, `${what} failed`)), ms).unref();
const timers = [
  every(
    config.RESERVATION_SWEEP_MS,
    async () => {
      const refunded = await ledger.expireHolds();
      if (refunded.holds > 0) log.warn(refunded, 'refunded holds that expired unsettled');
    },
    'reservation expiry',
  ),
  every(60_000, () => store.sweep(clock()), 'store sweep'),
  every(60_000, () => webhookStore.sweep(clock()), 'webhook store sweep'),
  every(60_000, () => mailStore.sweep(clock()), 'mail store sweep'),
];

await runService({
  name: 'billing',
  ...processOptions(config),
  protoFiles: [
    'webutil/billing/v1/billing.proto',
    'webutil/billing/v1/webhooks.proto',
    'webutil/billing/v1/payments.proto',
    'webutil/billing/v1/account_mail.proto',
  ],
  bindings: [
    billingService(
      {
        gate,
        ledger,
        sessions,
        apiKeys,
        challenges,
        limiter,
        notices,
        idempotencyKeys,
        payments,
        verification,
        accountNotices,
      },
      log,
    ),
    webhookService(webhooks, log),
    paymentService(payments, gate, log, verification),
    accountMailService({ gate, verification, passwordReset, notices: accountNotices }, log),
  ],
  log,
  onShutdown: async () => {
    for (const timer of timers) clearInterval(timer);
    await notices.close();
    await webhookStore.close();
    mailer.close();
    await mailStore.close();
    await store.close();
  },
});
