/**
 * Buying by card (Stripe, decision 0381): the deployment's prices with a button that asks the API
 * for a Checkout page and goes there; without Stripe settings, what the operator runs instead.
 */
import { type Account, ApiError, call, currentAccount } from './api.js';
import { h } from './dom.js';

interface Prices {
  configured: boolean;
  currency: string;
  plans: { plan: string; creditsPerCycle: number; amount: number }[];
  packs: { credits: number; amount: number }[];
  operatorCommand: string;
}

export const money = (amount: number, currency: string) =>
  new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).format(amount / 100);
const title = (plan: string) => plan.charAt(0) + plan.slice(1).toLowerCase();
const day = (iso: string) => new Date(iso).toLocaleDateString('en-GB', { dateStyle: 'long' });

/**
 * Where the account's plan stands, in words: renewing, ending (cancelled), or unpaid and held
 * through the grace period; a plan no subscription holds renews its credits at the cycle's end.
 */
export function renewal(account: Account, now = Date.now()): { label: string; text: string; state: string } {
  if (account.paidThrough && account.renews === false)
    return { label: 'Ends', text: `${day(account.paidThrough)}, then Free (it does not renew)`, state: 'ending' };
  if (account.paidThrough && Date.parse(account.cycleEnds) <= now)
    return {
      label: 'Paid through',
      text: `${day(account.paidThrough)}: the renewal payment failed; pay by then to keep the plan`,
      state: 'grace',
    };
  return { label: 'Renews', text: day(account.cycleEnds), state: account.paidThrough ? 'renewing' : 'cycle' };
}

/** Opens Stripe's customer portal (plan changes, cancellation, invoices, cards). */
export async function openPortal(button: HTMLButtonElement, status: HTMLElement): Promise<void> {
  button.disabled = true;
  try {
    location.assign((await call<{ url: string }>('POST', '/billing/portal')).url);
  } catch (err) {
    status.textContent = err instanceof ApiError ? err.message : 'The customer portal could not be opened.';
    button.disabled = false;
  }
}

/** The pricing page's "Buy" section; filled once the prices are read. */
export function paymentsSection(): HTMLElement {
  const section = h('section', { 'aria-labelledby': 'buy-heading', id: 'buy' }, h('h2', { id: 'buy-heading' }, 'Buy'));
  void fill(section);
  return section;
}

async function fill(section: HTMLElement): Promise<void> {
  let prices: Prices;
  try {
    prices = await call<Prices>('GET', '/billing/prices');
  } catch (err) {
    section.append(h('p', { role: 'alert' }, `Prices could not be read: ${(err as Error).message}`));
    return;
  }
  if (!prices.configured) {
    section.append(
      h(
        'p',
        { 'data-payments': 'not-configured' },
        'Card payments are not configured on this deployment: the operator changes your plan or adds a top-up (',
        h('code', {}, prices.operatorCommand),
        '). A plan change starts a fresh monthly cycle at once; unused credits of a cycle lapse, top-ups stay.',
      ),
    );
    return;
  }
  const account = await currentAccount().catch(() => undefined);
  const signedIn = account !== undefined;
  const status = h('p', { role: 'status' });
  const buy = (label: string, item: { plan: string } | { pack: number }) =>
    signedIn
      ? h(
          'button',
          {
            type: 'button',
            onclick: async (event: Event) => {
              const button = event.currentTarget as HTMLButtonElement;
              button.disabled = true;
              status.textContent = 'Opening the payment page…';
              try {
                const { url } = await call<{ url: string }>('POST', '/billing/checkout', item);
                location.assign(url);
              } catch (err) {
                status.textContent = err instanceof ApiError ? err.message : 'The payment page could not be opened.';
                button.disabled = false;
              }
            },
          },
          label,
        )
      : h('a', { href: '/sign-up' }, `Sign up to ${label.toLowerCase()}`);
  if (account?.paidThrough) {
    const { label, text, state } = renewal(account);
    const price =
      account.planPrice !== undefined
        ? `, ${money(account.planPrice, account.currency ?? prices.currency)} a month`
        : '';
    section.append(
      h(
        'p',
        { id: 'your-plan', class: 'notice', 'data-renewal': state },
        h('strong', {}, `Your plan: ${title(account.plan)}${price}. `),
        `${label}: ${text}.`,
      ),
    );
  }
  section.append(
    h('p', {}, 'Pay by card through Stripe; credits are added once Stripe confirms the payment.'),
    h(
      'ul',
      { class: 'prices', 'data-payments': 'configured' },
      prices.plans.map(({ plan, creditsPerCycle, amount }) =>
        h(
          'li',
          {},
          `${title(plan)}: ${creditsPerCycle.toLocaleString('en')} credits a month, `,
          h('strong', {}, `${money(amount, prices.currency)} a month`),
          ' ',
          buy(`Subscribe to ${title(plan)}`, { plan }),
        ),
      ),
      prices.packs.map(({ credits, amount }) =>
        h(
          'li',
          {},
          `Top-up of ${credits.toLocaleString('en')} credits, `,
          h('strong', {}, money(amount, prices.currency)),
          ' ',
          buy(`Buy ${credits.toLocaleString('en')} credits`, { pack: credits }),
        ),
      ),
    ),
    status,
  );
  if (signedIn)
    section.append(
      h('p', {}, 'Plan changes, cancellation, invoices and cards: the customer portal, from your account page.'),
    );
}

/**
 * The account page's billing part: the outcome of a checkout the customer came back from, and the
 * customer portal (plan changes, cancellation, invoices, cards), or the operator's way without Stripe.
 */
export function accountBillingSection(): HTMLElement {
  const section = h('section', { 'aria-labelledby': 'billing-heading', id: 'billing' });
  section.append(h('h2', { id: 'billing-heading' }, 'Plan and payments'));
  const back = new URLSearchParams(location.search).get('checkout');
  if (back === 'success')
    section.append(
      h(
        'p',
        { class: 'notice', role: 'status', 'data-checkout': 'success' },
        'Thank you: the payment went through at Stripe. Credits are added as soon as Stripe confirms it ',
        '(usually within seconds); reload this page to see them.',
      ),
    );
  else if (back === 'cancelled')
    section.append(
      h('p', { class: 'notice', role: 'status', 'data-checkout': 'cancelled' }, 'The payment was cancelled.'),
    );
  void fillAccount(section);
  return section;
}

async function fillAccount(section: HTMLElement): Promise<void> {
  const prices = await call<Prices>('GET', '/billing/prices').catch(() => undefined);
  if (!prices?.configured) {
    section.append(
      h(
        'p',
        { class: 'muted' },
        'Card payments are not configured here: the operator changes the plan or adds a top-up (',
        h('code', {}, prices?.operatorCommand ?? 'npm run admin'),
        '); a plan change starts a fresh cycle at once.',
      ),
    );
    return;
  }
  const status = h('p', { role: 'status' });
  const portal: HTMLButtonElement = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => openPortal(portal, status) },
    'Manage plan, invoices and cards',
  );
  section.append(
    h('p', {}, 'Buy credits or subscribe on the ', h('a', { href: '/pricing#buy' }, 'pricing page'), '.'),
    portal,
    status,
  );
}
