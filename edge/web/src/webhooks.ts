/**
 * The account page's webhooks section (docs/decisions/0206-webhooks.md): the signing secret, made
 * or replaced here and shown once, and the most recent delivery attempts.
 */
import { call } from './api.js';
import { h, show } from './dom.js';
import { showError } from './playground.js';

interface Attempt {
  webhookId: string;
  jobId: string;
  url: string;
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  outcome: 'delivered' | 'retrying' | 'failed';
  nextAttemptAt: string | null;
}

interface Deliveries {
  secretCreatedAt: string | null;
  attempts: Attempt[];
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '');

function attemptTable(attempts: Attempt[]): HTMLElement {
  if (!attempts.length)
    return h(
      'p',
      {},
      'No deliveries yet. Start a crawl or a bookmark check with a webhook URL (under Advanced) to get one.',
    );
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Webhook deliveries' },
    h(
      'table',
      { id: 'webhook-deliveries' },
      h('caption', {}, 'Your most recent webhook delivery attempts, newest first'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['When', 'URL', 'Attempt', 'Answer', 'Outcome', 'Next attempt'].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        attempts.map((a) =>
          h(
            'tr',
            {},
            h('td', {}, when(a.attemptedAt)),
            h('td', {}, h('code', { title: `job ${a.jobId}, ${a.webhookId}` }, a.url)),
            h('td', {}, String(a.attempt)),
            h('td', {}, a.statusCode === null ? (a.error ?? '') : `${a.statusCode}${a.error ? ` (${a.error})` : ''}`),
            h('td', {}, a.outcome),
            h('td', {}, when(a.nextAttemptAt)),
          ),
        ),
      ),
    ),
  );
}

/** The section, filled once loaded; the secret is shown only right after it is made. */
export function webhooksSection(): { element: HTMLElement; load: () => Promise<void> } {
  const status = h('div', { role: 'status', 'aria-live': 'polite' });
  const secretBox = h('div', { 'aria-live': 'polite' });
  const facts = h('p', { id: 'webhook-secret-made' });
  const list = h('div');
  const rotate = h('button', { type: 'button', id: 'rotate-webhook-secret' }, 'Create signing secret');
  const load = async () => {
    try {
      const deliveries = await call<Deliveries>('GET', '/webhooks/deliveries');
      facts.textContent = deliveries.secretCreatedAt
        ? `Signing secret made ${when(deliveries.secretCreatedAt)}.`
        : 'No signing secret yet: a crawl or bookmark check with a webhook URL needs one.';
      rotate.textContent = deliveries.secretCreatedAt ? 'Rotate signing secret' : 'Create signing secret';
      show(list, attemptTable(deliveries.attempts));
    } catch (err) {
      showError(status, err);
    }
  };
  rotate.addEventListener('click', async () => {
    if (
      rotate.textContent?.startsWith('Rotate') &&
      !window.confirm('Replace the signing secret? The old one keeps signing beside the new one for 24 hours.')
    )
      return;
    try {
      const made = await call<{ secret: string; createdAt: string }>('POST', '/webhooks/secret', {});
      const value = h('input', {
        id: 'webhook-secret',
        readonly: true,
        value: made.secret,
        'aria-label': 'The new signing secret',
      });
      show(
        secretBox,
        h(
          'div',
          { class: 'card' },
          h('p', {}, h('strong', {}, 'Copy this secret now: it is shown only once.')),
          value,
          h(
            'button',
            {
              type: 'button',
              onclick: async () => {
                try {
                  await navigator.clipboard.writeText(made.secret);
                  status.textContent = 'Secret copied.';
                } catch {
                  value.select();
                  status.textContent = 'Copying was refused: the secret is selected, copy it with Ctrl+C.';
                }
              },
            },
            'Copy',
          ),
        ),
      );
      await load();
    } catch (err) {
      showError(status, err);
    }
  });
  const element = h(
    'section',
    { 'aria-labelledby': 'webhooks-heading' },
    h('h2', { id: 'webhooks-heading' }, 'Webhooks'),
    h(
      'p',
      {},
      'A crawl or bookmark check started with a webhook URL POSTs its result there when it ends, signed per ',
      h('a', { href: 'https://www.standardwebhooks.com/' }, 'Standard Webhooks'),
      ' with this secret (headers webhook-id, webhook-timestamp, webhook-signature); failed deliveries are ',
      'retried for 30 minutes.',
    ),
    facts,
    rotate,
    secretBox,
    status,
    list,
  );
  return { element, load };
}
