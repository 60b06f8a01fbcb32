/**
 * Buying on the website in Debian's Chromium: pricing page → Stripe's checkout page (the stand-in) →
 * back on the account page → Stripe's signed event → the credits shown.
 */
import { StripeStandIn } from '@webutil/scripts/stripe-stand-in';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import type { Browser, Page } from 'puppeteer-core';
import { json } from './billing-helpers.js';
import { launchChromium } from './browser-helpers.js';

// The page's globals in the callbacks puppeteer runs there (the tests' program has no DOM types).
declare const document: any;

const PASSWORD = 'a long enough password';

describe('website: buying a top-up pack by card (Stripe stand-in)', function () {
  this.timeout(120_000);
  let stripe: StripeStandIn;
  let stack: TestStack;
  let browser: Browser;
  const problems: string[] = [];

  before(async () => {
    stripe = await StripeStandIn.start([
      { id: 'price_starter', unitAmount: 2900, currency: 'eur', recurring: true },
      { id: 'price_pack_1000', unitAmount: 900, currency: 'eur', recurring: false },
    ]);
    stack = await startTestStack({
      env: { CHALLENGE_MAX_NUMBER: '5000' },
      envFor: {
        billing: {
          STRIPE_SECRET_KEY: stripe.secretKey,
          STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
          STRIPE_PRICES: 'STARTER=price_starter:2900,PACK_1000=price_pack_1000:900',
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
    await stripe?.stop();
  });

  async function open(page: Page, pagePath: string): Promise<void> {
    await page.goto(`${stack.edgeUrl}${pagePath}`);
    await ready(page, pagePath.split(/[?#]/)[0] ?? pagePath);
  }
  const ready = (page: Page, pagePath: string) =>
    page.waitForFunction((p) => document.getElementById('main')?.dataset.ready === p, {}, pagePath);

  it('shows prices, sends a signed-in customer to checkout, and shows the credits Stripe’s event adds', async () => {
    const email = `buyer-${Date.now()}@example.test`;
    await stack.admin('create-account', '--email', email, '--password', PASSWORD);
    const page = await browser.newPage();
    page.on('pageerror', (err) => problems.push(`uncaught: ${(err as Error).message}`));
    page.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) problems.push(message.text());
    });

    // A visitor sees the prices in the deployment's currency, and is asked to sign up to buy.
    await open(page, '/pricing');
    await page.waitForSelector('[data-payments=configured]');
    const offer = await page.$eval('#buy', (el) => el.textContent);
    expect(offer).to.include('Starter: 3,000 credits a month, €29.00 a month').and.include('€9.00');
    expect(await page.$$eval('#buy a[href="/sign-up"]', (as) => as.length)).to.equal(2);

    await open(page, '/sign-in');
    await page.type('#f-email', email);
    await page.type('#f-password', PASSWORD);
    await page.click('form.auth button[type=submit]');
    await ready(page, '/account');
    await open(page, '/pricing');
    await page.waitForSelector('[data-payments=configured] button');
    const buttons = await page.$$eval('#buy button', (bs) => bs.map((b) => b.textContent));
    expect(buttons).to.deep.equal(['Subscribe to Starter', 'Buy 1,000 credits']);

    // Stripe's page (the stand-in pays on opening it) sends the customer back to the account page.
    const buy = (await page.$$('#buy button'))[1];
    expect(buy, 'the pack’s button').to.not.equal(undefined);
    await Promise.all([page.waitForNavigation(), buy?.click()]);
    await ready(page, '/account');
    expect(page.url()).to.match(/\/account\?checkout=success&session_id=cs_test_/);
    await page.waitForSelector('[data-checkout=success]');
    expect(await page.$eval('#top-ups', (el) => el.textContent)).to.equal('0');

    // Stripe's event for the paid session: the credits are the account's once it is applied.
    const sessionId = new URL(page.url()).searchParams.get('session_id') ?? '';
    const stored = stripe.sessions.get(sessionId);
    expect(stored?.session.payment_status).to.equal('paid');
    const event = stripe.event('checkout.session.completed', { ...stored!.session });
    const res = await stack.api('/v1/billing/stripe-webhook', {
      method: 'POST',
      anonymous: true,
      headers: { 'content-type': 'application/json', 'stripe-signature': stripe.sign(event) },
      body: event,
    });
    expect((await json(res)).data.outcome).to.equal('applied');
    await open(page, '/account');
    expect(await page.$eval('#top-ups', (el) => el.textContent)).to.equal('1000');
    expect(await page.$eval('#billing button', (el) => el.textContent)).to.equal('Manage plan, invoices and cards');
    await page.close();
    expect(problems).to.deep.equal([]);
  });
});
