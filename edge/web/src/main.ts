/** The site's router: one shell, a view per path, links handled without a reload. */
import { authPage, dashboard } from './account.js';
import { type Account, currentAccount, refreshCredits } from './api.js';
import { docs } from './docs.js';
import { h, show } from './dom.js';
import { resetPasswordPage, verifyEmailPage } from './email-links.js';
import { monitorsPage } from './monitors.js';
import { home, notFound, pricing } from './pages.js';
import { playground, showError } from './playground.js';
import { siteAuditReportPage } from './site-audit-report.js';
import { statusPage } from './status-page.js';

const main = document.getElementById('main') as HTMLElement;

/** Set by a navigation inside the site: the new page's heading then takes the focus. */
let moveFocus = false;

function go(path: string): void {
  history.pushState(null, '', path);
  moveFocus = true;
  void route();
}

/**
 * The header's account link. Only a 401 means signed out: any other failure (a busy server)
 * leaves the link as it was.
 */
function navAccount(account: Account | undefined): void {
  const slot = document.getElementById('nav-account');
  const href = account ? '/account' : '/sign-in';
  if (slot)
    show(
      slot,
      h(
        'a',
        { href, 'aria-current': location.pathname === href ? 'page' : undefined },
        account ? 'Account' : 'Sign in',
      ),
    );
}

async function route(): Promise<void> {
  // "/account/" is "/account".
  if (location.pathname.length > 1 && location.pathname.endsWith('/'))
    history.replaceState(null, '', `${location.pathname.replace(/\/+$/, '')}${location.search}`);
  const path = location.pathname;
  for (const link of document.querySelectorAll('#nav a')) {
    if (link.getAttribute('href') === path) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // One read of the quota per page view, and of the session when the quota says there is one
  // (the edge bounds these reads apart from the caller's rate).
  const quota = refreshCredits();
  const session =
    path === '/account'
      ? currentAccount()
      : quota.then((q) => {
          // Unknown (a busy server): the header's link stays as it is.
          if (!q) throw new Error('the quota could not be read');
          return q.callerKind === 'session' ? currentAccount() : undefined;
        });
  const account = session.catch(() => undefined);
  try {
    if (path === '/') await home(main);
    else if (path === '/pricing') pricing(main);
    else if (path.startsWith('/play/')) await playground(main, decodeURIComponent(path.slice(6)));
    else if (path === '/sign-in' || path === '/sign-up') authPage(main, path.slice(1) as 'sign-in' | 'sign-up', go);
    else if (path === '/account') await dashboard(main, go, await account, await quota);
    else if (path === '/docs') await docs(main);
    else if (path === '/verify-email') await verifyEmailPage(main);
    else if (path === '/reset-password') resetPasswordPage(main);
    else if (path === '/monitors') await monitorsPage(main, await account);
    else if (path.startsWith('/status/')) await statusPage(main, decodeURIComponent(path.slice(8)));
    else if (path.startsWith('/site-audit/')) await siteAuditReportPage(main, decodeURIComponent(path.slice(12)));
    else notFound(main);
  } catch (err) {
    show(main, h('h1', {}, 'Something went wrong'));
    const box = h('div');
    main.append(box);
    showError(box, err);
  }
  document.title = `${main.querySelector('h1')?.textContent ?? ''} · Web Utility API`;
  await session.then(navAccount, () => undefined);
  const heading = main.querySelector('h1');
  if (moveFocus && heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus();
  }
  moveFocus = false;
  main.dataset.ready = path;
}

document.addEventListener('click', (event) => {
  const link = (event.target as Element).closest('a');
  const href = link?.getAttribute('href');
  if (
    !link ||
    !href?.startsWith('/') ||
    href.startsWith('/v1/') ||
    href.startsWith('/api/') ||
    link.hasAttribute('download') ||
    link.target ||
    event.ctrlKey ||
    event.metaKey
  )
    return;
  event.preventDefault();
  go(href);
});
window.addEventListener('popstate', () => void route());
void route();
