/** The site's router: one shell, a view per path, links handled without a reload. */
import { authPage, dashboard } from './account.js';
import { currentAccount, refreshCredits } from './api.js';
import { docs } from './docs.js';
import { h, show } from './dom.js';
import { playground, playgroundIndex, showError } from './playground.js';

const main = document.getElementById('main') as HTMLElement;

function go(path: string): void {
  history.pushState(null, '', path);
  void route();
}

async function navAccount(): Promise<void> {
  const account = await currentAccount().catch(() => undefined);
  const slot = document.getElementById('nav-account');
  if (slot) show(slot, h('a', { href: account ? '/account' : '/sign-in' }, account ? 'Account' : 'Sign in'));
}

async function route(): Promise<void> {
  const path = location.pathname;
  for (const link of document.querySelectorAll('#nav a'))
    link.toggleAttribute('aria-current', link.getAttribute('href') === path);
  try {
    if (path === '/') playgroundIndex(main);
    else if (path.startsWith('/play/')) await playground(main, decodeURIComponent(path.slice(6)));
    else if (path === '/sign-in' || path === '/sign-up') authPage(main, path.slice(1) as 'sign-in' | 'sign-up', go);
    else if (path === '/account') await dashboard(main, go);
    else if (path === '/docs') await docs(main);
    else show(main, h('h1', {}, 'Not found'));
  } catch (err) {
    show(main, h('h1', {}, 'Something went wrong'));
    const box = h('div');
    main.append(box);
    showError(box, err);
  }
  document.title = `${main.querySelector('h1')?.textContent ?? ''} · Web Utility API`;
  await navAccount();
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
    event.ctrlKey ||
    event.metaKey
  )
    return;
  event.preventDefault();
  go(href);
  main.focus();
});
window.addEventListener('popstate', () => void route());
void refreshCredits();
void route();
