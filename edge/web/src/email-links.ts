/**
 * The pages mailed links open (decisions 0422, 0423): verifying the address, setting a new
 * password, and asking for a reset link. Each is one call to its REST route.
 */
import { ApiError, call, setCsrfToken } from './api.js';
import { h, show } from './dom.js';
import { showError } from './playground.js';

/** Billing's password rule (MIN_PASSWORD_LENGTH), shown before the first try. */
const MIN_PASSWORD_LENGTH = 10;

const tokenOf = () => new URLSearchParams(location.search).get('token') ?? '';

/** `/verify-email?token=…`: verifies at once; the token is single use, so a reload says it is spent. */
export async function verifyEmailPage(main: HTMLElement): Promise<void> {
  const token = tokenOf();
  const message = h('div', { role: 'status', 'aria-live': 'polite' });
  show(main, h('h1', {}, 'Verify your address'), message);
  if (!token) {
    show(message, h('p', {}, 'This link has no token. Open the link from the mail as it was sent.'));
    return;
  }
  try {
    await call('POST', '/auth/verify-email', { token });
    show(
      message,
      h('p', { id: 'verified' }, 'Your address is verified. You may now create API keys and buy credits.'),
      h('p', {}, h('a', { href: '/account' }, 'Go to your account')),
    );
  } catch (err) {
    showError(message, err);
    if (err instanceof ApiError && err.code === 'invalid_token')
      message.append(
        h('p', {}, 'A link works once and for 48 hours. Your account page can mail a new one: ', accountLink()),
      );
  }
}

const accountLink = () => h('a', { href: '/account' }, 'your account');

/** `/reset-password`: without a token, asks for a link; with one, sets the new password. */
export function resetPasswordPage(main: HTMLElement): void {
  const token = tokenOf();
  const message = h('div', { role: 'status', 'aria-live': 'polite' });
  if (!token) {
    const form = h(
      'form',
      { class: 'auth' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'f-reset-email' }, 'Email'),
        h('input', { id: 'f-reset-email', name: 'email', type: 'email', required: true, autocomplete: 'email' }),
      ),
      h('button', { type: 'submit' }, 'Mail me a link'),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await call('POST', '/auth/password-reset', Object.fromEntries(new FormData(form)));
        show(
          message,
          h(
            'p',
            { id: 'reset-requested' },
            'If the address has an account, a link is on its way. It works once, for 30 minutes.',
          ),
        );
      } catch (err) {
        showError(message, err);
      }
    });
    show(main, h('h1', {}, 'Forgot your password?'), form, message);
    return;
  }
  const form = h(
    'form',
    { class: 'auth' },
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'f-new-password' }, 'New password'),
      h('input', {
        id: 'f-new-password',
        name: 'password',
        type: 'password',
        required: true,
        autocomplete: 'new-password',
        minlength: MIN_PASSWORD_LENGTH,
        'aria-describedby': 'f-new-password-hint',
      }),
      h('small', { id: 'f-new-password-hint' }, `At least ${MIN_PASSWORD_LENGTH} characters.`),
    ),
    h('button', { type: 'submit' }, 'Set the new password'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const { password } = Object.fromEntries(new FormData(form)) as Record<string, string>;
    try {
      await call('POST', '/auth/password-reset/confirm', { token, password });
      // Every session of the account ended, this one's too.
      setCsrfToken(undefined);
      form.remove();
      show(
        message,
        h('p', { id: 'password-set' }, 'Your password is set, and every session was signed out. '),
        h('p', {}, h('a', { href: '/sign-in' }, 'Sign in with the new password')),
      );
    } catch (err) {
      showError(message, err);
    }
  });
  show(main, h('h1', {}, 'Set a new password'), form, message);
}

/** On the account page while the address is not verified: what it blocks, and a new link. */
export function verificationNotice(email: string): HTMLElement {
  const status = h('span', { role: 'status', 'aria-live': 'polite' });
  const resend = h('button', { type: 'button', class: 'secondary', id: 'resend-verification' }, 'Mail a new link');
  resend.addEventListener('click', async () => {
    try {
      await call('POST', '/auth/verify-email/resend', {});
      show(status, ` A new link is on its way to ${email}.`);
    } catch (err) {
      showError(status, err);
    }
  });
  return h(
    'div',
    { class: 'notice', id: 'verify-notice' },
    h('p', {}, `Verify ${email} with the link we mailed you: until then you cannot create API keys or buy.`),
    resend,
    status,
  );
}
