/** The landing page, the pricing page and the 404 page. */
import { isUnavailable } from './availability.js';
import { ANONYMOUS, PLANS, TOOLS } from './catalog.js';
import { h, show } from './dom.js';
import { type Document, openApi, operations, priceOf, sizedPriceOf } from './openapi.js';
import { paymentsSection } from './payments.js';

/** Each operation's price in a few words, from the contract's `x-credits` (and `x-credits-per-block`). */
export async function creditCosts(): Promise<Map<string, string>> {
  return new Map(priced(await openApi()).map((op) => [op.operationId, priceOf(op)]));
}

const priced = (doc: Document) => operations(doc).filter((op) => op.path.startsWith('/v1/'));

const plural = (n: number, word: string) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;

/** Shown at once; each tool's cost fills in when the contract arrives. */
export async function home(main: HTMLElement): Promise<void> {
  const costs = new Map<string, string>();
  const costSlots = new Map<string, HTMLElement>();
  show(
    main,
    h(
      'section',
      { class: 'hero' },
      h('h1', {}, 'Web utilities, one API'),
      h(
        'p',
        { class: 'lead' },
        'Screenshots, PDFs, SSL grades, broken links, meta audits and uptime checks: ',
        'try each tool here, then call the same routes from your code with an API key.',
      ),
      h(
        'p',
        { class: 'actions' },
        h('a', { class: 'button', href: '/play/screenshot' }, 'Take a screenshot'),
        h('a', { class: 'button ghost', href: '/pricing' }, 'See pricing'),
        h('a', { class: 'button ghost', href: '/docs' }, 'Read the docs'),
      ),
      h('p', { class: 'muted' }, `No account needed: visitors get ${ANONYMOUS.creditsPerDay} free credits a day.`),
    ),
    h('h2', { id: 'tools' }, 'Tools'),
    h(
      'ul',
      { class: 'tools', 'aria-labelledby': 'tools' },
      TOOLS.map((tool) => {
        const costSlot = h('span', {}, '');
        costSlots.set(tool.id, costSlot);
        return h(
          'li',
          { class: 'tool' },
          h('h3', {}, h('a', { href: `/play/${tool.id}` }, tool.title)),
          h('p', {}, tool.pitch),
          h('p', { class: 'example' }, h('span', { class: 'visually-hidden' }, 'Example result: '), tool.example),
          h(
            'p',
            { class: 'cost' },
            costSlot,
            isUnavailable(tool.id) ? h('span', { class: 'badge', 'data-unavailable': tool.id }, 'unavailable') : null,
          ),
        );
      }),
    ),
  );
  for (const [id, cost] of await creditCosts().catch(() => costs)) {
    const slot = costSlots.get(id);
    if (slot) slot.textContent = cost;
  }
}

export function pricing(main: HTMLElement): void {
  // Filled in from the contract: the operations priced by the size of their input.
  const bySize = h('ul', { class: 'sized-prices' });
  show(
    main,
    h('h1', {}, 'Pricing'),
    h(
      'p',
      { class: 'lead' },
      'Every call costs credits: 1 for a light operation (fetch and parse), 2 for a render or a crawl. ',
      'A failed call costs nothing; polling a crawl, reading your quota and downloading results are free.',
    ),
    h(
      'ul',
      { class: 'plans' },
      h(
        'li',
        { class: 'plan' },
        h('h2', {}, 'Anonymous'),
        h('p', { class: 'amount' }, plural(ANONYMOUS.creditsPerDay, 'credit'), h('span', {}, ' a day')),
        h(
          'ul',
          {},
          h('li', {}, `${ANONYMOUS.requestsPerMinute} requests a minute`),
          h('li', {}, `${ANONYMOUS.renderConcurrency} renders at once`),
          h('li', {}, 'Per IP address (IPv6: per /64), renewed each UTC day'),
          h('li', {}, 'A short in-browser check instead of sign-up'),
        ),
      ),
      PLANS.map((plan) =>
        h(
          'li',
          { class: 'plan' },
          h('h2', {}, plan.name),
          h('p', { class: 'amount' }, plural(plan.creditsPerCycle, 'credit'), h('span', {}, ' a month')),
          h(
            'ul',
            {},
            h('li', {}, `${plan.requestsPerMinute.toLocaleString('en')} requests a minute`),
            h('li', {}, `${plan.renderConcurrency} renders at once`),
            h('li', {}, plan.apiKeys ? 'API keys' : 'Website only (no API keys)'),
          ),
        ),
      ),
    ),
    h('h2', {}, 'Priced by size'),
    h(
      'p',
      {},
      'A job whose work grows with its file is priced by its size, once the file is read and before the ',
      'job starts:',
    ),
    bySize,
    h('h2', {}, 'Top-ups'),
    h(
      'p',
      {},
      'Need more than a month’s credits? A top-up adds credits to your account that do not lapse with the ',
      'cycle: they are spent after the month’s credits run out.',
    ),
    paymentsSection(),
    h('p', {}, h('a', { href: '/sign-up' }, 'Create a free account'), ' to start.'),
  );
  void openApi()
    .then((doc) => {
      for (const op of priced(doc)) {
        const sized = sizedPriceOf(op);
        const title = TOOLS.find((tool) => tool.id === op.operationId)?.title ?? op.operationId;
        if (sized) bySize.append(h('li', { 'data-operation': op.operationId }, h('b', {}, `${title}: `), sized));
      }
    })
    .catch(() => undefined);
}

export function notFound(main: HTMLElement): void {
  show(
    main,
    h('h1', {}, 'Page not found'),
    h('p', {}, `There is no page at ${location.pathname}.`),
    h(
      'p',
      {},
      'Try the ',
      h('a', { href: '/' }, 'tools'),
      ', the ',
      h('a', { href: '/pricing' }, 'pricing'),
      ' or the ',
      h('a', { href: '/docs' }, 'API docs'),
      '.',
    ),
  );
}
