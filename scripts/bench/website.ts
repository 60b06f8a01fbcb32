/**
 * Issue 25: Lighthouse (run here against Debian's Chromium, no network beyond this machine) on the
 * website's home, pricing and docs pages and a crawl's result view, and (issues 39 and 40) the
 * account and monitors pages of a signed-in customer, mobile and desktop. Prints the
 * Performance, Accessibility, Best Practices and SEO scores of each; the goals are 95, 100, 95, 95.
 */
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { startFixtureSite } from '../src/fixture-site.js';
import { startTestStack } from '../src/test-stack.js';

const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;
const GOALS: Record<(typeof CATEGORIES)[number], number> = {
  performance: 95,
  accessibility: 100,
  'best-practices': 95,
  seo: 95,
};

/** An audit's displayed value, e.g. "1.2 s". */
const metric = (result: Awaited<ReturnType<typeof lighthouse>>, audit: string) =>
  result?.lhr.audits[audit]?.displayValue ?? '?';

const site = await startFixtureSite();
site.route('/links', (_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end('<a href="/ok">fine</a> <a href="/missing-page">gone</a> <a href="/links">self</a>');
});
const stack = await startTestStack({ allowTargets: '127.0.0.0/8' });
const chrome = await chromeLauncher.launch({
  chromePath: '/usr/bin/chromium',
  chromeFlags: ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage'],
});
try {
  // A finished crawl, so its page opens on the result view.
  const started = await fetch(`${stack.edgeUrl}/v1/broken-links/crawl`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: site.url('/links') }),
  });
  const { data } = (await started.json()) as { data: { jobId: string } };
  for (let i = 0; i < 120; i++) {
    const job = (await (await fetch(`${stack.edgeUrl}/v1/broken-links/crawl/${data.jobId}`)).json()) as {
      data: { status: string };
    };
    if (job.data.status !== 'crawling') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  // A signed-in customer (a session cookie Lighthouse sends) for the account and monitors pages.
  const email = `lighthouse-${process.pid}@example.test`;
  const password = 'lighthouse-bench-password';
  await stack.admin('create-account', '--email', email, '--plan', 'STARTER', '--password', password);
  const signedIn = await fetch(`${stack.edgeUrl}/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (signedIn.status !== 200) throw new Error(`sign-in answered ${signedIn.status}`);
  const cookie = signedIn.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const signedInPages = new Set(['/account', '/monitors']);
  const pages = ['/', '/pricing', '/docs', `/play/broken-links-crawl?job=${data.jobId}`, ...signedInPages];
  const below: string[] = [];
  for (const [form, config] of [
    ['mobile', undefined],
    ['desktop', desktopConfig],
  ] as const) {
    for (const page of pages) {
      // A trace Lighthouse failed to record (NO_NAVSTART on a busy machine) is run again, twice at most.
      let result: Awaited<ReturnType<typeof lighthouse>>;
      for (let attempt = 1; ; attempt++) {
        result = await lighthouse(
          `${stack.edgeUrl}${page}`,
          {
            port: chrome.port,
            output: 'json',
            logLevel: 'error',
            onlyCategories: [...CATEGORIES],
            ...(signedInPages.has(page) ? { extraHeaders: { Cookie: cookie } } : {}),
          },
          config,
        );
        const failure = result?.lhr.runtimeError;
        if (!failure || attempt === 3) break;
        console.log(`website ${form} ${page}: ${failure.message}; again`);
      }
      const scores = CATEGORIES.map((c) => [c, Math.round((result?.lhr.categories[c]?.score ?? 0) * 100)] as const);
      for (const [c, score] of scores) if (score < GOALS[c]) below.push(`${form} ${page} ${c} ${score}`);
      console.log(
        `website ${form.padEnd(7)} ${page.replace(/\?job=.*/, '?job=…').padEnd(30)} ` +
          scores.map(([c, s]) => `${c} ${s}`).join('  ') +
          `  (FCP ${metric(result, 'first-contentful-paint')}, LCP ${metric(result, 'largest-contentful-paint')}, ` +
          `TBT ${metric(result, 'total-blocking-time')}, CLS ${metric(result, 'cumulative-layout-shift')})`,
      );
    }
  }
  console.log(below.length ? `website: below the goals: ${below.join('; ')}` : 'website: every goal met');
} finally {
  chrome.kill();
  await stack.stop();
  await site.close();
}
