/** Sign-up, sign-in and the dashboard: plan, credits and API keys. */

import { noticesSection } from './account-notices.js';
import { usageByDay } from './account-usage.js';
import { type Account, ApiError, call, type Quota, type Solution, setCsrfToken, solvedChallenge } from './api.js';
import { TOOLS } from './catalog.js';
import { h, show } from './dom.js';
import { verificationNotice } from './email-links.js';
import { accountBillingSection, money, openPortal, renewal } from './payments.js';
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

const planTitle = (plan: string) => plan.charAt(0) + plan.slice(1).toLowerCase();

async function recentUsage(container: HTMLElement): Promise<void> {
  const { usage } = await call<{ usage: UsageEntry[] }>('GET', '/account/usage');
  show(
    container,
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

/** The plan's monthly price where it is sold by card; Free costs nothing; otherwise the operator sets it. */
function planPrice(account: Account): string {
  if (account.planPrice !== undefined) return `${money(account.planPrice, account.currency ?? 'eur')} a month`;
  return account.plan === 'FREE' ? 'Free' : 'set by the operator';
}

/** A subscriber manages the plan at Stripe's portal; anyone else upgrades from the pricing page. */
function planAction(account: Account, status: HTMLElement): HTMLElement {
  if (account.paidThrough) {
    const manage: HTMLButtonElement = h(
      'button',
      { type: 'button', id: 'manage-plan', onclick: () => openPortal(manage, status) },
      'Manage or change plan',
    );
    return manage;
  }
  return h('a', { href: '/pricing#buy', id: 'upgrade-plan', class: 'button' }, 'Upgrade or buy credits');
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
  const renewed = renewal(account);
  const status = h('div', { role: 'status', 'aria-live': 'polite' });
  const keys = h('div');
  const usage = h('div');
  const chart = h('div');
  const webhooks = webhooksSection();
  const notices = noticesSection();
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
        h('dt', {}, 'Price'),
        h('dd', { id: 'plan-price' }, planPrice(account)),
        h('dt', {}, renewed.label),
        h('dd', { id: 'renews', 'data-renewal': renewed.state }, renewed.text),
        h('dt', {}, 'Member since'),
        h('dd', {}, when(account.createdAt)),
      ),
      planAction(account, status),
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
    h('h2', {}, 'Usage'),
    chart,
    usage,
    notices.element,
    webhooks.element,
    signOut,
  );
  await Promise.all([
    keyList(keys, status),
    recentUsage(usage),
    usageByDay(chart).catch((err: unknown) => showError(chart, err)),
    notices.load(),
    webhooks.load(),
  ]);
}
