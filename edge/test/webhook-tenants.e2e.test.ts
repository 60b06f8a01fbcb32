import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { account, Browser, eventually, expectFailure, json } from './billing-helpers.js';
import { post } from './crawl-helpers.js';

const PASSWORD = 'a long enough password';

interface Hit {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Webhooks isolate tenants, through the REST edge. Issue 36, item 1 (decision 0281): the account's webhook secret and
 * delivery log belong to its owner (a session, or an API key without limits). A test key works in
 * its sandbox's own books (secret and deliveries), a key with limits gets 403 owner_required, and a
 * rotation keeps the replaced secret signing beside the new one. Item 7: sandbox starts send at most
 * 10 real webhooks per account per minute. Item 4 (decision 0282): a receiver that never answers
 * does not hold back another account's deliveries.
 */
describe('webhooks isolate tenants', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  let receiver: http.Server;
  let receiverUrl: (path: string) => string;
  const hits: Hit[] = [];
  let liveKey: string;
  let testKey: string;
  let browser: Browser;
  let liveSecret: string;
  let sandboxSecret: string;

  const as = (apiKey: string, init: RequestInit = {}) => ({ ...init, apiKey });
  const hitsAt = (path: string) => hits.filter((h) => h.path === path);
  const awaitHit = (path: string) =>
    eventually(async () => {
      const [hit] = hitsAt(path);
      expect(hit, `a delivery to ${path}`).to.not.equal(undefined);
      return hit!;
    }, 60_000);
  /** A crawl started with `apiKey`, its webhook to `path` on the receiver; the job id. */
  const crawlWithWebhook = async (apiKey: string, path: string) => {
    const res = await stack.api(
      '/v1/link-extract/crawl',
      as(apiKey, post({ url: site.url('/ok'), webhookUrl: receiverUrl(path) })),
    );
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(202);
    return body.data.jobId as string;
  };
  const verifies = (secret: string, hit: Hit) => {
    try {
      new Webhook(secret).verify(hit.body, hit.headers);
      return true;
    } catch {
      return false;
    }
  };

  before(async () => {
    site = await startFixtureSite();
    receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        hits.push({ path: req.url ?? '/', headers: req.headers as Record<string, string>, body });
        if (req.url?.startsWith('/hang')) return; // never answers
        res.writeHead(204).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const { port } = receiver.address() as AddressInfo;
    receiverUrl = (path) => `http://127.0.0.1:${port}${path}`;
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32', WEBHOOK_POLL_MS: '200', WEBHOOK_TICK_MS: '100' } },
    });
    const owner = await account(stack, 'STARTER', '--password', PASSWORD, '--credits', '100', '--rate-limit', '100000');
    liveKey = owner.apiKey;
    browser = new Browser(stack, '192.0.2.71');
    expect((await browser.signIn(owner.email, PASSWORD)).status).to.equal(200);
    testKey = (await json(await browser.post('/v1/keys', { name: 'sandbox', mode: 'test' }))).data.key;
    const rotated = await stack.api('/v1/webhooks/secret', as(liveKey, post({})));
    expect(rotated.status).to.equal(201);
    liveSecret = (await json(rotated)).data.secret;
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
    receiver?.closeAllConnections();
    receiver?.close();
  });

  it('a test key rotates and lists its sandbox’s books: the live secret and log are untouched', async () => {
    const rotated = await stack.api('/v1/webhooks/secret', as(testKey, post({})));
    const made = await json(rotated);
    expect(rotated.status, JSON.stringify(made)).to.equal(201);
    sandboxSecret = made.data.secret;
    expect(sandboxSecret).to.not.equal(liveSecret);

    // The next live job's webhook is signed with the live secret only: the test key's does not verify it.
    const jobId = await crawlWithWebhook(liveKey, '/live');
    const hit = await awaitHit('/live');
    expect(hit.headers['x-webutil-job-id']).to.equal(jobId);
    expect(verifies(liveSecret, hit)).to.equal(true);
    expect(verifies(sandboxSecret, hit)).to.equal(false);

    // The live log lists the delivery; the sandbox's does not, and names its own secret's age.
    const live = await eventually(async () => {
      const listed = (await json(await stack.api('/v1/webhooks/deliveries', as(liveKey)))).data;
      expect(listed.attempts.map((a: any) => a.jobId)).to.include(jobId);
      return listed;
    });
    const sandbox = await json(await stack.api('/v1/webhooks/deliveries', as(testKey)));
    expect(sandbox.data.attempts).to.deep.equal([]);
    expect(sandbox.data.secretCreatedAt).to.equal(made.data.createdAt);
    expect(sandbox.data.secretCreatedAt).to.not.equal(live.secretCreatedAt);
    // The session (the account page) sees the live books too.
    const seen = await json(await browser.fetch('/v1/webhooks/deliveries'));
    expect(seen.data.attempts.map((a: any) => a.jobId)).to.include(jobId);

    // A sandbox start's webhook is signed with the sandbox's secret and listed in its log only.
    const sampleJob = await crawlWithWebhook(testKey, '/sandbox');
    const sampleHit = await awaitHit('/sandbox');
    expect(sampleHit.headers['x-webutil-job-id']).to.equal(sampleJob);
    expect(verifies(sandboxSecret, sampleHit)).to.equal(true);
    expect(verifies(liveSecret, sampleHit)).to.equal(false);
    await eventually(async () => {
      const listed = (await json(await stack.api('/v1/webhooks/deliveries', as(testKey)))).data.attempts;
      expect(listed.map((a: any) => a.jobId)).to.deep.equal([sampleJob]);
    });
    const liveNow = (await json(await stack.api('/v1/webhooks/deliveries', as(liveKey)))).data.attempts;
    expect(liveNow.map((a: any) => a.jobId)).to.not.include(sampleJob);
  });

  it('a key with limits may neither rotate nor list: 403 owner_required, and the secret stands', async () => {
    const limits = [
      { allowedOperations: ['link-extract-crawl'] },
      { creditLimit: 10 },
      { mode: 'test', allowedOperations: ['down-check'] },
    ];
    for (const limit of limits) {
      const created = await json(await browser.post('/v1/keys', { name: 'narrow', ...limit }));
      const apiKey = created.data.key as string;
      await expectFailure(await stack.api('/v1/webhooks/secret', as(apiKey, post({}))), 403, 'owner_required');
      await expectFailure(await stack.api('/v1/webhooks/deliveries', as(apiKey)), 403, 'owner_required');
    }
    // Nothing changed: the next live delivery still verifies with the live secret.
    await crawlWithWebhook(liveKey, '/after-refusals');
    expect(verifies(liveSecret, await awaitHit('/after-refusals'))).to.equal(true);
    // An anonymous caller has no account.
    await expectFailure(
      await stack.api('/v1/webhooks/secret', { ...post({}), anonymous: true }),
      401,
      'account_required',
    );
  });

  it('a rotation keeps the replaced secret signing beside the new one', async () => {
    const fresh = (await json(await stack.api('/v1/webhooks/secret', as(liveKey, post({}))))).data.secret as string;
    expect(fresh).to.not.equal(liveSecret);
    await crawlWithWebhook(liveKey, '/rotated');
    const hit = await awaitHit('/rotated');
    expect(hit.headers['webhook-signature']?.split(' ')).to.have.length(2);
    expect(verifies(fresh, hit)).to.equal(true);
    expect(verifies(liveSecret, hit)).to.equal(true);
    // Rotated again: the first secret is two back and signs no more.
    const third = (await json(await stack.api('/v1/webhooks/secret', as(liveKey, post({}))))).data.secret as string;
    await crawlWithWebhook(liveKey, '/rotated-twice');
    const later = await awaitHit('/rotated-twice');
    expect([verifies(third, later), verifies(fresh, later), verifies(liveSecret, later)]).to.deep.equal([
      true,
      true,
      false,
    ]);
  });

  it('sandbox starts send at most 10 webhooks per account a minute (429 too_many_webhooks)', async () => {
    // An account of its own, so that no earlier start counts toward its minute.
    const other = await account(stack, 'STARTER', '--password', PASSWORD, '--rate-limit', '100000');
    const signedIn = new Browser(stack, '192.0.2.72');
    expect((await signedIn.signIn(other.email, PASSWORD)).status).to.equal(200);
    const apiKey = (await json(await signedIn.post('/v1/keys', { name: 'sandbox', mode: 'test' }))).data.key;
    expect((await stack.api('/v1/webhooks/secret', as(apiKey, post({})))).status).to.equal(201);
    const answers: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await stack.api(
        '/v1/link-extract/crawl',
        as(apiKey, post({ url: site.url('/ok'), webhookUrl: receiverUrl(`/burst-${i}`) })),
      );
      answers.push(res.status);
      if (res.status === 429) expect((await json(res)).error?.code).to.equal('too_many_webhooks');
    }
    expect(answers).to.deep.equal([...Array(10).fill(202), 429]);
    // Without a webhookUrl the sandbox answers as before.
    const plain = await stack.api('/v1/link-extract/crawl', as(apiKey, post({ url: site.url('/ok') })));
    expect(plain.status).to.equal(202);
  });

  it('a receiver that never answers holds back no other account’s deliveries', async () => {
    // The first account's receiver never answers: 8 deliveries, each attempt waiting out its timeout.
    for (let i = 0; i < 8; i++) await crawlWithWebhook(liveKey, `/hang-${i}`);
    const hanging = () => hits.filter((h) => h.path.startsWith('/hang'));
    await eventually(async () => expect(hanging()).to.have.length.of.at.least(4), 60_000);
    // At most 4 of one account's deliveries are worked on at once (the rest wait out the 10 s timeouts).
    expect(hanging()).to.have.length(4);
    // Another account's deliveries, to another receiver, arrive as their jobs end, one after another
    // (a batch waited for whole held them up to 15 s each).
    const other = await account(stack, 'STARTER', '--password', PASSWORD, '--rate-limit', '100000');
    expect((await stack.api('/v1/webhooks/secret', as(other.apiKey, post({})))).status).to.equal(201);
    const second = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits.push({ path: `/other${req.url}`, headers: {}, body: '' });
        res.writeHead(204).end();
      });
    });
    second.listen(0, '127.0.0.1');
    await once(second, 'listening');
    const { port } = second.address() as AddressInfo;
    try {
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const res = await stack.api(
          '/v1/link-extract/crawl',
          as(other.apiKey, post({ url: site.url('/ok'), webhookUrl: `http://127.0.0.1:${port}/on-time-${i}` })),
        );
        expect(res.status).to.equal(202);
        await eventually(async () => expect(hitsAt(`/other/on-time-${i}`)).to.have.length(1), 60_000);
        // The normal case is under a second here (200 ms polls, 100 ms ticks); 7 s is a liveness bound.
        expect(Date.now() - started, `delivery ${i}`).to.be.below(7_000);
      }
    } finally {
      second.closeAllConnections();
      second.close();
    }
  });
});
