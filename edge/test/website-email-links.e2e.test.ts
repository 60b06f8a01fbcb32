import { linkIn, SmtpUnderTest } from '@webutil/scripts/mail-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import type { Browser, Page } from 'puppeteer-core';
import { Browser as ApiBrowser, json } from './billing-helpers.js';
import { launchChromium, seriousViolations } from './browser-helpers.js';

// The page's globals in the callbacks puppeteer runs there (the tests' program has no DOM types).
declare const document: any;
declare const window: any;

const PASSWORD = 'a long enough password';
const NEW_PASSWORD = 'another long password';

describe('website: the pages mailed links open (verification, password reset)', function () {
  this.timeout(120_000);
  let smtp: SmtpUnderTest;
  let stack: TestStack;
  let browser: Browser;

  before(async () => {
    smtp = await SmtpUnderTest.start();
    stack = await startTestStack({ env: { SMTP_URL: smtp.url, CHALLENGE_MAX_NUMBER: '5000' } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await smtp?.close();
  });

  const ready = (page: Page, pagePath: string) =>
    page.waitForFunction((p) => document.getElementById('main')?.dataset.ready === p, {}, pagePath);
  /** Opens a mailed link's page and query on the stack's edge (wherever PUBLIC_BASE_URL points). */
  async function open(page: Page, link: URL | string): Promise<void> {
    const url = typeof link === 'string' ? new URL(link, stack.edgeUrl) : link;
    await page.goto(`${stack.edgeUrl}${url.pathname}${url.search}`);
    await ready(page, url.pathname);
  }
  const textOf = (page: Page, selector: string) =>
    page.waitForSelector(selector).then(() => page.$eval(selector, (e: any) => e.textContent as string));
  /** The newest link to `page` mailed to `to`, among mails received after the first `after`. */
  const mailedLink = async (to: string, page: string, after = 0): Promise<URL> => {
    const mail = await smtp.waitFor(to, (m) => smtp.received.indexOf(m) >= after && linkIn(m, page) !== undefined);
    return linkIn(mail, page) as URL;
  };

  it('the verification link verifies; the account page offers a new link until then', async () => {
    const email = `verify-${Date.now()}@example.test`;
    const api = new ApiBrowser(stack);
    expect((await api.signUp(email, PASSWORD)).status).to.equal(201);
    const first = await mailedLink(email, 'verify-email');

    const page = await browser.newPage();
    try {
      await page.setViewport({ width: 390, height: 844 });
      // Signed in on the site, not yet verified: the account page says what waits, and mails a new link.
      await open(page, '/sign-in');
      await page.type('#f-email', email);
      await page.type('#f-password', PASSWORD);
      await Promise.all([ready(page, '/account'), page.click('form.auth button[type=submit]')]);
      expect(await textOf(page, '#verify-notice')).to.contain('cannot create API keys');
      expect(await seriousViolations(page), 'axe on the account page with its notice').to.deep.equal([]);
      const mailsBefore = smtp.received.length;
      await page.click('#resend-verification');
      await page.waitForFunction(() =>
        document.querySelector('#verify-notice [role=status]')?.textContent.includes('on its way'),
      );
      const second = await mailedLink(email, 'verify-email', mailsBefore);
      expect(second.searchParams.get('token')).to.not.equal(first.searchParams.get('token'));

      // The newest link verifies; the page says so, and the account's notice is gone.
      await open(page, second);
      expect(await textOf(page, '#verified')).to.contain('Your address is verified');
      expect(await seriousViolations(page), 'axe on the verified page').to.deep.equal([]);
      expect((await json(await api.fetch('/v1/auth/me'))).data.account.emailVerified).to.equal(true);
      await open(page, '/account');
      expect(await page.$('#verify-notice')).to.equal(null);

      // A link works once: opened again, the page names the error and where to get a new one.
      await open(page, second);
      expect(await textOf(page, '#main [role=status]')).to.contain('your account');
    } finally {
      await page.close();
    }
  });

  it('"forgot password" mails a link whose page sets the new password and signs every session out', async () => {
    const email = `reset-${Date.now()}@example.test`;
    const api = new ApiBrowser(stack);
    expect((await api.signUp(email, PASSWORD)).status).to.equal(201);

    const page = await browser.newPage();
    try {
      await open(page, '/sign-in');
      await Promise.all([ready(page, '/reset-password'), page.click('a[href="/reset-password"]')]);
      await page.type('#f-reset-email', email);
      const mailsBefore = smtp.received.length;
      await page.click('form.auth button[type=submit]');
      expect(await textOf(page, '#reset-requested')).to.contain('a link is on its way');
      expect(await seriousViolations(page), 'axe on the reset request').to.deep.equal([]);
      const link = await mailedLink(email, 'reset-password', mailsBefore);

      await open(page, link);
      await page.type('#f-new-password', NEW_PASSWORD);
      await page.click('form.auth button[type=submit]');
      expect(await textOf(page, '#password-set')).to.contain('Your password is set');
      expect(await seriousViolations(page), 'axe on the new password page').to.deep.equal([]);

      // The API session from sign-up ended; the new password signs in, the old one does not.
      expect((await api.fetch('/v1/auth/me')).status).to.equal(401);
      expect((await new ApiBrowser(stack).signIn(email, PASSWORD)).status).to.equal(401);
      expect((await new ApiBrowser(stack).signIn(email, NEW_PASSWORD)).status).to.equal(200);
    } finally {
      await page.close();
    }
  });
});
