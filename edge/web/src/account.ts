/** Sign-up, sign-in and the dashboard: plan, credits and API keys. */
import { type Account, ApiError, call, type Quota, type Solution, setCsrfToken, solvedChallenge } from './api.js';
import { TOOLS } from './catalog.js';
import { h, show } from './dom.js';
import { verificationNotice } from './email-links.js';
import { accountBillingSection } from './payments.js';
import { showError } from './playground.js';
import { webhooksSection } from './webhooks.js';

/** Billing's password rule (MIN_PASSWORD_LENGTH), shown before the first try. */
const MIN_PASSWORD_LENGTH = 10;

function field(name: string, label: string, type: string, autocomplete: string, hint?: string): HTMLElement {
  return h(
    'div',
    { class: 'field' },
    h('label', { for: `f-${name}` }, label),
    h('input', {
      id: `f-${name}`,
      name,
      type,
      required: true,
      autocomplete,
      minlength: hint ? MIN_PASSWORD_LENGTH : undefined,
      'aria-describedby': hint ? `f-${name}-hint` : undefined,
    }),
    hint ? h('small', { id: `f-${name}-hint` }, hint) : null,
  );
}

export function authPage(main: HTMLElement, mode: 'sign-in' | 'sign-up', go: (path: string) => void): void {
  const message = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'auth' },
    field('email', 'Email', 'email', 'email'),
    mode === 'sign-up'
      ? field(
          'password',
          'Password',
          'password',
          'new-password',
          `At least ${MIN_PASSWORD_LENGTH} characters; a few words make a good one.`,
        )
      : field('password', 'Password', 'password', 'current-password'),
    h('p', { id: 'challenge-status', class: 'muted', role: 'status' }),
    h('button', { type: 'submit' }, mode === 'sign-up' ? 'Create account' : 'Sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form)) as Record<string, string>;
    const attempt = (solution?: Solution) =>
      call<{ csrfToken: string }>('POST', `/auth/${mode}`, { ...values, ...solution });
    try {
      // Sign-up redeems a freshly solved challenge of its own; sign-in asks for one (in the body,
      // not as a clearance) only once the account has had many failed sign-ins.
      const session =
        mode === 'sign-up'
          ? await attempt(await solvedChallenge())
          : await attempt().catch(async (err: unknown) => {
              if (!(err instanceof ApiError && err.code === 'challenge_required')) throw err;
              return attempt(await solvedChallenge());
            });
      setCsrfToken(session.csrfToken);
      go('/account');
    } catch (err) {
      showError(message, err);
    }
  });
  show(
    main,
    h('h1', {}, mode === 'sign-up' ? 'Create an account' : 'Sign in'),
    form,
    message,
    mode === 'sign-up'
      ? h('p', {}, 'Already have an account? ', h('a', { href: '/sign-in' }, 'Sign in'))
      : [
          h('p', {}, 'New here? ', h('a', { href: '/sign-up' }, 'Create an account')),
          h('p', {}, h('a', { href: '/reset-password' }, 'Forgot your password?')),
        ],
  );
}

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  creditLimit: number | null;
  expiresAt: string | null;
  allowedOperations: string[];
  creditsSpentThisCycle: number;
  /** test: a sandbox key, answered from samples, spending nothing. */
  mode: 'live' | 'test';
}

/** A key's own limits in words; none: the account's credits, every operation, no expiry. */
function limitsOf(key: ApiKey): string {
  const limits: string[] = [];
  if (key.allowedOperations.length) limits.push(`only ${key.allowedOperations.join(', ')}`);
  if (key.expiresAt) limits.push(`expires ${when(key.expiresAt)}`);
  return limits.length ? limits.join('; ') : 'none';
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

async function keyList(container: HTMLElement, status: HTMLElement): Promise<void> {
  const { keys } = await call<{ keys: ApiKey[] }>('GET', '/keys');
  const rows = keys.map((key) =>
    h(
      'tr',
      {},
      h('td', {}, key.name),
      h('td', {}, key.mode === 'test' ? 'test (sandbox)' : 'live'),
      h('td', {}, h('code', {}, `${key.prefix}…`)),
      h('td', {}, when(key.createdAt)),
      h('td', {}, when(key.lastUsedAt)),
      h(
        'td',
        {},
        key.creditLimit === null
          ? String(key.creditsSpentThisCycle)
          : `${key.creditsSpentThisCycle} of ${key.creditLimit}`,
      ),
      h('td', {}, limitsOf(key)),
      h(
        'td',
        {},
        key.revokedAt
          ? `revoked ${when(key.revokedAt)}`
          : h(
              'button',
              {
                type: 'button',
                class: 'danger',
                'aria-label': `Revoke ${key.name}`,
                onclick: async () => {
                  if (!window.confirm(`Revoke the key “${key.name}”? Programs using it will get 401.`)) return;
                  try {
                    await call('DELETE', `/keys/${encodeURIComponent(key.id)}`);
                    status.textContent = `Key “${key.name}” revoked.`;
                    await keyList(container, status);
                  } catch (err) {
                    showError(status, err);
                  }
                },
              },
              'Revoke',
            ),
      ),
    ),
  );
  show(
    container,
    keys.length
      ? h(
          'div',
          { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'API keys' },
          h(
            'table',
            { id: 'keys' },
            h('caption', {}, 'Your API keys'),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Name', 'Mode', 'Prefix', 'Created', 'Last used', 'Credits this cycle', 'Limits', 'Status'].map((c) =>
                  h('th', { scope: 'col' }, c),
                ),
              ),
            ),
            h('tbody', {}, rows),
          ),
        )
      : h('p', {}, 'No API keys yet.'),
  );
}

interface UsageEntry {
  operation: string;
  credits: number;
  at: string;
  /** The url or domain the call worked on; null when it names none. */
  target: string | null;
}

/** The account's most recent spent calls. */
const planTitle = (plan: string) => plan.charAt(0) + plan.slice(1).toLowerCase();
const DAY_MS = 86_400_000;

/** Credits spent per day over the last 30 days, of the calls billing keeps (the most recent 50). */
function usageChart(usage: UsageEntry[]): HTMLElement {
  const today = Math.floor(Date.now() / DAY_MS);
  const perDay = new Map<number, number>();
  for (const entry of usage) {
    const day = Math.floor(Date.parse(entry.at) / DAY_MS);
    if (today - day < 30) perDay.set(day, (perDay.get(day) ?? 0) + entry.credits);
  }
  const days = Array.from({ length: 30 }, (_, i) => today - 29 + i);
  const max = Math.max(1, ...perDay.values());
  return h(
    'figure',
    { class: 'usage-chart' },
    h('figcaption', {}, 'Credits spent per day, last 30 days (of your most recent calls)'),
    h(
      'ol',
      {},
      days.map((day) => {
        const credits = perDay.get(day) ?? 0;
        const label = new Date(day * DAY_MS).toLocaleDateString('en-GB', { day: 'numeric', month: 'short' });
        // A height set through the CSSOM, which the CSP allows (it refuses style attributes).
        const bar = h('span', { class: 'bar' });
        bar.style.height = `${Math.round((credits / max) * 100)}%`;
        return h(
          'li',
          { title: `${label}: ${credits}` },
          bar,
          h('span', { class: 'visually-hidden' }, `${label}: ${credits}`),
        );
      }),
    ),
  );
}

async function recentUsage(container: HTMLElement): Promise<void> {
  const { usage } = await call<{ usage: UsageEntry[] }>('GET', '/account/usage');
  show(
    container,
    usage.length ? usageChart(usage) : null,
    usage.length
      ? h(
          'div',
          { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Recent usage' },
          h(
            'table',
            { id: 'usage' },
            h('caption', {}, 'Your most recent calls that spent credits'),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['When', 'Operation', 'URL', 'Credits'].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h(
              'tbody',
              {},
              usage.map((entry) =>
                h(
                  'tr',
                  {},
                  h('td', {}, when(entry.at)),
                  h('td', {}, entry.operation),
                  h('td', { class: 'target' }, entry.target ?? '—'),
                  h('td', {}, entry.credits),
                ),
              ),
            ),
          ),
        )
      : h('p', {}, 'No calls have spent credits yet.'),
  );
}

export async function dashboard(
  main: HTMLElement,
  go: (path: string) => void,
  account: Account | undefined,
  known: Quota | undefined,
): Promise<void> {
  if (!account) return go('/sign-in');
  const quota = known ?? (await call<Quota>('GET', '/quota'));
  // The quota's remaining counts top-ups too; they outlast the cycle, so they are shown apart.
  const cycleLeft = Math.max(0, quota.remaining - account.topUpCredits);
  const status = h('div', { role: 'status', 'aria-live': 'polite' });
  const keys = h('div');
  const usage = h('div');
  const webhooks = webhooksSection();
  const created = h('div', { 'aria-live': 'polite' });
  const name = h('input', { id: 'key-name', name: 'name', required: true, maxlength: 100 });
  const creditLimit = h('input', {
    id: 'key-credit-limit',
    name: 'creditLimit',
    type: 'number',
    min: 1,
    step: 1,
    inputmode: 'numeric',
    'aria-describedby': 'key-credit-limit-hint',
  });
  const expires = h('input', { id: 'key-expires', name: 'expiresOn', type: 'date' });
  // A test key answers fixed samples and spends nothing, so a credit limit means nothing for it.
  const mode = h(
    'select',
    {
      id: 'key-mode',
      name: 'mode',
      'aria-describedby': 'key-mode-hint',
      onchange: () => {
        creditLimit.disabled = mode.value === 'test';
      },
    },
    h('option', { value: 'live' }, 'Live'),
    h('option', { value: 'test' }, 'Test (sandbox)'),
  );
  const operations = TOOLS.map((tool) =>
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'checkbox', name: 'allowedOperations', value: tool.id }),
      ` ${tool.title}`,
    ),
  );
  const form = h(
    'form',
    { class: 'inline-form top' },
    h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'Key name'), name),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'key-mode' }, 'Mode'),
      mode,
      h('small', { id: 'key-mode-hint' }, 'A test key (wu_test_) gets sample results and spends no credits.'),
    ),
    h(
      'details',
      { id: 'key-limits', class: 'advanced' },
      h('summary', {}, 'Limits (optional)'),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'key-credit-limit' }, 'Credits per cycle'),
        creditLimit,
        h('small', { id: 'key-credit-limit-hint' }, 'Past it, the key’s calls get 402 key_credit_limit.'),
      ),
      h('div', { class: 'field' }, h('label', { for: 'key-expires' }, 'Expires on'), expires),
      h(
        'fieldset',
        { id: 'key-operations', class: 'subfields' },
        h('legend', {}, 'Only these operations (none ticked: all)'),
        operations,
      ),
    ),
    h('button', { type: 'submit' }, 'Create key'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const allowed = new FormData(form).getAll('allowedOperations').map(String);
      const key = await call<ApiKey & { key: string }>('POST', '/keys', {
        name: name.value,
        ...(mode.value === 'test' ? { mode: 'test' } : {}),
        ...(creditLimit.value && !creditLimit.disabled ? { creditLimit: Number(creditLimit.value) } : {}),
        // The start of the chosen day, the browser's time zone.
        ...(expires.value ? { expiresAt: new Date(`${expires.value}T00:00:00`).toISOString() } : {}),
        ...(allowed.length ? { allowedOperations: allowed } : {}),
      });
      const value = h('input', { id: 'new-key', readonly: true, value: key.key, 'aria-label': 'The new API key' });
      show(
        created,
        h(
          'div',
          { class: 'card' },
          h('p', {}, h('strong', {}, 'Copy this key now: it is shown only once.')),
          value,
          h(
            'button',
            {
              type: 'button',
              onclick: async () => {
                try {
                  await navigator.clipboard.writeText(key.key);
                  status.textContent = 'Key copied.';
                } catch {
                  value.select();
                  status.textContent = 'Copying was refused: the key is selected, copy it with Ctrl+C.';
                }
              },
            },
            'Copy',
          ),
        ),
      );
      form.reset();
      creditLimit.disabled = false;
      await keyList(keys, status);
    } catch (err) {
      showError(status, err);
    }
  });
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out');
  signOut.addEventListener('click', async () => {
    try {
      await call('POST', '/auth/sign-out', {});
      setCsrfToken(undefined);
      go('/');
    } catch (err) {
      showError(status, err);
    }
  });
  show(
    main,
    h('h1', {}, 'Your account'),
    account.emailVerified === false ? verificationNotice(account.email) : null,
    h(
      'div',
      { class: 'card plan-card' },
      h('p', { class: 'plan-name' }, `${planTitle(account.plan)} plan`),
      h(
        'label',
        { for: 'cycle-meter' },
        `${cycleLeft.toLocaleString('en')} of ${quota.limit.toLocaleString('en')} credits left this cycle`,
      ),
      h('meter', { id: 'cycle-meter', min: 0, max: Math.max(1, quota.limit), value: cycleLeft }),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Email'),
        h('dd', {}, account.email),
        h('dt', {}, 'Plan'),
        h('dd', { id: 'plan' }, account.plan),
        h('dt', {}, 'Credits left this cycle'),
        h('dd', { id: 'cycle-credits' }, `${cycleLeft} of ${quota.limit}`),
        h('dt', {}, 'Top-up credits'),
        h('dd', { id: 'top-ups' }, account.topUpCredits),
        h('dt', {}, 'Credits left in all'),
        h('dd', { id: 'credits-left' }, quota.remaining),
        h('dt', {}, 'Renews'),
        h('dd', { id: 'renews' }, when(account.cycleEnds)),
        h('dt', {}, 'Member since'),
        h('dd', {}, when(account.createdAt)),
      ),
    ),
    accountBillingSection(),
    h('h2', {}, 'API keys'),
    account.plan === 'FREE'
      ? h(
          'p',
          { class: 'notice', id: 'keys-need-plan' },
          'API keys call the API from your own code without the browser check. They need the Starter plan or ',
          'higher; your plan is Free: subscribe to a plan on the pricing page (or ask the operator). Until then the ' +
            'tools work here in the browser.',
        )
      : [
          h(
            'p',
            {},
            'An API key goes in the Authorization header: ',
            h('code', {}, 'Authorization: Bearer wu_live_…'),
            '.',
          ),
          form,
        ],
    created,
    status,
    keys,
    h('h2', {}, 'Recent usage'),
    usage,
    webhooks.element,
    signOut,
  );
  await Promise.all([keyList(keys, status), recentUsage(usage), webhooks.load()]);
}
