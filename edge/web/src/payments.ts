/**
 * Buying by card (Stripe, decision 0381): the deployment's prices with a button that asks the API
 * for a Checkout page and goes there; without Stripe settings, what the operator runs instead.
 */
import { ApiError, call, currentAccount } from './api.js';
import { h } from './dom.js';

interface Prices {
  configured: boolean;
  currency: string;
  plans: { plan: string; creditsPerCycle: number; amount: number }[];
  packs: { credits: number; amount: number }[];
  operatorCommand: string;
}

const money = (amount: number, currency: string) =>
  new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).format(amount / 100);
const title = (plan: string) => plan.charAt(0) + plan.slice(1).toLowerCase();

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
  const signedIn = (await currentAccount().catch(() => undefined)) !== undefined;
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
  const portal = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: async () => {
        portal.disabled = true;
        try {
          location.assign((await call<{ url: string }>('POST', '/billing/portal')).url);
        } catch (err) {
          status.textContent = err instanceof ApiError ? err.message : 'The customer portal could not be opened.';
          portal.disabled = false;
        }
      },
    },
    'Manage plan, invoices and cards',
  );
  section.append(
    h('p', {}, 'Buy credits or subscribe on the ', h('a', { href: '/pricing#buy' }, 'pricing page'), '.'),
    portal,
    status,
  );
}
