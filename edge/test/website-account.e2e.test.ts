import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { StripeStandIn } from '@webutil/scripts/stripe-stand-in';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import type { Browser, Page } from 'puppeteer-core';
import { Browser as ApiBrowser, eventually, json } from './billing-helpers.js';
import { launchChromium, seriousViolations } from './browser-helpers.js';
import { delivered, PRICES, STRIPE_PRICES } from './payments-helpers.js';

// The page's globals in the callbacks puppeteer runs there (the tests' program has no DOM types).
declare const document: any;
declare const window: any;

const PASSWORD = 'a long enough password';

describe('website: the account page of a subscriber (Stripe stand-in)', function () {
  this.timeout(180_000);
  let stripe: StripeStandIn;
  let site: FixtureSite;
  let stack: TestStack;
  let browser: Browser;
  const problems: string[] = [];

  before(async () => {
    [stripe, site] = await Promise.all([StripeStandIn.start(PRICES), startFixtureSite()]);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { CHALLENGE_MAX_NUMBER: '5000' },
      envFor: {
        billing: {
          STRIPE_SECRET_KEY: stripe.secretKey,
          STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
          STRIPE_PRICES,
          STRIPE_CURRENCY: 'eur',
          STRIPE_API_URL: stripe.url,
        },
      },
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await Promise.all([stripe?.stop(), site?.close()]);
  });

  async function open(page: Page, pagePath: string): Promise<void> {
    await page.goto(`${stack.edgeUrl}${pagePath}`);
    await page.waitForFunction(
      (p) => document.getElementById('main')?.dataset.ready === p,
      {},
      pagePath.split(/[?#]/)[0] ?? pagePath,
    );
  }
  const text = (page: Page, selector: string) => page.$eval(selector, (el) => el.textContent);

  it('plan, price, renewal, manage button, usage chart and notices form; at 390 px too, axe 0', async () => {
    const email = `subscriber-${Date.now()}@example.test`;
    await stack.admin('create-account', '--email', email, '--password', PASSWORD);
    const page = await browser.newPage();
    page.on('pageerror', (err) => problems.push(`uncaught: ${(err as Error).message}`));
    page.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
    await open(page, '/sign-in');
    await page.type('#f-email', email);
    await page.type('#f-password', PASSWORD);
    await page.click('form.auth button[type=submit]');
    await page.waitForFunction(() => document.getElementById('main')?.dataset.ready === '/account');
    // Free: no price to pay, and the way to upgrade.
    expect(await text(page, '#plan-price')).to.equal('Free');
    expect(await page.$eval('#upgrade-plan', (el) => el.getAttribute('href'))).to.equal('/pricing#buy');

    // Subscribed through the pricing page and Stripe's (stand-in) checkout; Stripe's invoice event.
    await open(page, '/pricing');
    await page.waitForSelector('[data-payments=configured] button');
    const subscribe = (await page.$$('#buy button'))[0];
    await Promise.all([page.waitForNavigation(), subscribe?.click()]);
    await page.waitForFunction(() => document.getElementById('main')?.dataset.ready === '/account');
    const sessionId = new URL(page.url()).searchParams.get('session_id') ?? '';
    const subscription = stripe.subscriptionOf(sessionId);
    const invoice = stripe.invoices.get(String(subscription.latest_invoice))!;
    expect(await delivered(stack, stripe, stripe.event('invoice.paid', invoice as never))).to.equal('applied');
    const periodEnd = (subscription.items as { data: { current_period_end: number }[] }).data[0]!.current_period_end;
    const longDate = (seconds: number) =>
      new Date(seconds * 1000).toLocaleDateString('en-GB', { dateStyle: 'long', timeZone: 'UTC' });

    // A call spent with a key of the account, for the chart.
    const api = new ApiBrowser(stack);
    expect((await api.signIn(email, PASSWORD)).status).to.equal(200);
    const key = (await json(await api.post('/v1/keys', { name: 'chart' }))).data.key as string;
    const spent = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey: key });
    expect(spent.status).to.equal(200);

    await eventually(async () => {
      await open(page, '/account');
      expect(await text(page, '#plan')).to.equal('STARTER');
      await page.waitForSelector('#usage-chart svg');
      expect(await text(page, '.usage-legend')).to.equal('down-check: 1');
    });
    expect(await text(page, '#plan-price')).to.equal('€29.00 a month');
    expect(await page.$eval('#renews', (el) => el.dataset.renewal)).to.equal('renewing');
    expect(await text(page, '#renews')).to.equal(longDate(periodEnd));
    expect(await text(page, '#manage-plan')).to.equal('Manage or change plan');
    expect(await page.$$eval('#usage-chart svg rect', (rects) => rects.length)).to.equal(1);
    expect(await page.$eval('#usage-chart svg', (el) => el.getAttribute('aria-label'))).to.include(
      'last 30 days: 1 in all',
    );

    // The notices form: all on, one turned off and saved, kept on reload.
    await page.waitForFunction(() => document.getElementById('notice-credits')?.checked === true);
    await page.click('#notice-credits');
    await page.click('#notices-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('notices-status')?.textContent === 'Notices saved.');
    expect((await json(await api.fetch('/v1/account/notices'))).data.notices).to.deep.equal({
      receipts: true,
      renewals: true,
      credits: false,
    });
    await open(page, '/account');
    await page.waitForFunction(() => document.getElementById('notice-receipts')?.checked === true);
    expect(await page.$eval('#notice-credits', (el) => el.checked)).to.equal(false);

    await page.waitForSelector('#usage-chart svg');
    expect(await seriousViolations(page), 'axe on the account page').to.deep.equal([]);
    await page.setViewport({ width: 390, height: 800 });
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, 'wider than 390 px').to.be.at.most(0);
    expect(await seriousViolations(page), 'axe on the account page at 390 px').to.deep.equal([]);
    await page.setViewport({ width: 1366, height: 900 });

    // The pricing page names the subscriber's plan and its renewal.
    await open(page, '/pricing');
    await page.waitForSelector('#your-plan');
    expect(await text(page, '#your-plan')).to.equal(
      `Your plan: Starter, €29.00 a month. Renews: ${longDate(periodEnd)}.`,
    );

    // Cancelled at the period's end: the page says when the plan ends instead of a renewal.
    const cancelled = stripe.event('customer.subscription.updated', stripe.cancel(subscription.id, 'period_end'));
    expect(await delivered(stack, stripe, cancelled)).to.equal('applied');
    await eventually(async () => {
      await open(page, '/account');
      expect(await page.$eval('#renews', (el) => el.dataset.renewal)).to.equal('ending');
    });
    expect(await text(page, '#renews')).to.include('then Free');
    await page.close();
    expect(problems).to.deep.equal([]);
  });
});
