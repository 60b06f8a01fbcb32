/**
 * The account page's notices settings (GET and POST /account/notices): which mails the account is
 * sent besides the ones it cannot do without (verification, password reset).
 */
import { call } from './api.js';
import { h } from './dom.js';
import { showError } from './playground.js';

interface NoticeSettings {
  receipts: boolean;
  renewals: boolean;
  credits: boolean;
}

const CHOICES: { name: keyof NoticeSettings; label: string }[] = [
  { name: 'receipts', label: 'A receipt for each payment' },
  { name: 'renewals', label: 'When a renewal payment fails (and how long the plan holds)' },
  { name: 'credits', label: 'When 80% and 100% of a cycle’s credits are spent' },
];

/** The section, filled once the settings are read. */
export function noticesSection(): { element: HTMLElement; load: () => Promise<void> } {
  const status = h('p', { role: 'status', id: 'notices-status' });
  const boxes = CHOICES.map(({ name }) => h('input', { type: 'checkbox', id: `notice-${name}`, name }));
  const save = h('button', { type: 'submit' }, 'Save notices');
  const form = h(
    'form',
    { id: 'notices-form' },
    h(
      'fieldset',
      { class: 'subfields' },
      h('legend', {}, 'Mail me'),
      CHOICES.map(({ label }, i) => h('label', { class: 'check' }, boxes[i] as HTMLInputElement, ` ${label}`)),
    ),
    save,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    save.disabled = true;
    try {
      const change = Object.fromEntries(CHOICES.map(({ name }, i) => [name, (boxes[i] as HTMLInputElement).checked]));
      const { notices } = await call<{ notices: NoticeSettings }>('POST', '/account/notices', change);
      fill(notices);
      status.textContent = 'Notices saved.';
    } catch (err) {
      showError(status, err);
    } finally {
      save.disabled = false;
    }
  });
  const fill = (notices: NoticeSettings) =>
    CHOICES.forEach(({ name }, i) => {
      (boxes[i] as HTMLInputElement).checked = notices[name];
    });
  const element = h(
    'section',
    { 'aria-labelledby': 'notices-heading', id: 'notices' },
    h('h2', { id: 'notices-heading' }, 'Email notices'),
    form,
    status,
  );
  return {
    element,
    load: async () => {
      try {
        fill((await call<{ notices: NoticeSettings }>('GET', '/account/notices')).notices);
      } catch (err) {
        showError(status, err);
      }
    },
  };
}
