import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { bookmark, folder, xbelOf } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { eventually, expectFailure, json, quota } from './billing-helpers.js';
import { pollJob, post, startCrawl } from './crawl-helpers.js';

/** One request the receiver got: its path, headers and the body exactly as sent. */
interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A webhook receiver on 127.0.0.1. /flaky answers 503, then resets the connection, then 200;
 * /redirect answers 302 to /sink; /until-restart answers 503 until `state.restarted`; every other
 * path answers 204.
 */
async function startReceiver() {
  const received: Received[] = [];
  const state = { restarted: false };
  let flaky = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
      if (path === '/flaky') {
        flaky++;
        if (flaky === 1) return res.writeHead(503).end('busy');
        if (flaky === 2) return req.socket.resetAndDestroy();
        return res.writeHead(200).end('ok');
      }
      if (path === '/redirect') return res.writeHead(302, { location: '/sink' }).end();
      if (path === '/until-restart') return res.writeHead(state.restarted ? 200 : 503).end();
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const at = (path: string) => received.filter((r) => r.path === path);
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    state,
    at,
    /** The requests to `path` once there are `count` of them (more is a failure: a duplicate delivery). */
    awaitHits: (path: string, count: number) =>
      eventually(async () => {
        const hits = at(path);
        expect(hits).to.have.length(count);
        return hits;
      }, 60_000),
    close: async () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** POST /v1/bookmarks/check: an XBEL file and the form's text fields, as multipart/form-data. */
function checkBookmarks(stack: TestStack, xbel: string, fields: Record<string, string>) {
  const form = new FormData();
  form.set('file', new Blob([xbel], { type: 'application/octet-stream' }), 'mine.xbel');
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  return stack.api('/v1/bookmarks/check', { method: 'POST', body: form });
}

/**
 * Issue 26, item 1: a job start with a webhookUrl has the job's end POSTed there, signed per the
 * Standard Webhooks specification (verified with the standardwebhooks package), retried with
 * back-off on network errors and 5xx, each attempt listed at GET /v1/webhooks/deliveries; a redirect
 * is not followed, a bad webhookUrl is a 400 with nothing spent. The back-off's base is shortened
 * for the test (WEBHOOK_RETRY_BASE_MS), not the schedule.
 */
describe('webhooks for finished jobs', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let site: FixtureSite;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secret: string;
  /** The account's signing secret after the rotation test. */
  let secretNow: string;

  before(async () => {
    site = await startFixtureSite();
    site.route('/hooked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/hooked/a">a</a> <a href="/hooked/b">b</a>');
    });
    for (const leaf of ['a', 'b'])
      site.route(`/hooked/${leaf}`, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end('leaf');
      });
    receiver = await startReceiver();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { edge: { WEBHOOK_RETRY_BASE_MS: '300', WEBHOOK_POLL_MS: '200', WEBHOOK_TICK_MS: '100' } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
    await receiver?.close();
  });

  const attemptsOf = async (webhookId: string) => {
    const res = await stack.api('/v1/webhooks/deliveries');
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    return (body.data.attempts as any[]).filter((a) => a.webhookId === webhookId);
  };

  it('refuses a bad webhookUrl with a 400 naming the field, and spends nothing', async () => {
    const before = (await quota(stack)).remaining;
    for (const webhookUrl of ['ftp://example.com/hook', 'not a url', `https://example.com/${'x'.repeat(2100)}`]) {
      const res = await stack.api('/v1/broken-links/crawl', post({ url: site.url('/hooked'), webhookUrl }));
      const body = await expectFailure(res, 400, 'invalid_webhook_url');
      expect(body.error?.message).to.contain('webhookUrl');
    }
    // A private address (only 127.0.0.0/8 is allowed to this stack) is refused by the address rules.
    const res = await stack.api(
      '/v1/link-extract/crawl',
      post({ url: site.url('/hooked'), webhookUrl: 'http://10.1.2.3/h' }),
    );
    expect((await expectFailure(res, 400, 'invalid_webhook_url')).error?.message).to.match(/webhookUrl.*private/);
    // Before the account has a signing secret, a webhookUrl is refused too.
    const missing = await stack.api(
      '/v1/broken-links/crawl',
      post({ url: site.url('/hooked'), webhookUrl: receiver.url('/x') }),
    );
    await expectFailure(missing, 400, 'webhook_secret_missing');
    expect((await quota(stack)).remaining).to.equal(before);
    expect(site.requests.filter((r) => r.path === '/hooked')).to.have.length(0);
    // Only accounts have secrets.
    await expectFailure(
      await stack.api('/v1/webhooks/secret', { ...post({}), anonymous: true }),
      401,
      'account_required',
    );
  });

  it('delivers the job envelope signed, after a 503 and a reset connection, and lists the 3 attempts', async () => {
    const rotated = await stack.api('/v1/webhooks/secret', post({}));
    const made = await json(rotated);
    expect(rotated.status, JSON.stringify(made)).to.equal(201);
    secret = made.data.secret;
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const jobId = await startCrawl(stack, 'broken-links', site.url('/hooked'), { webhookUrl: receiver.url('/flaky') });
    const { job } = await pollJob(stack, 'broken-links', jobId);
    expect(job.status).to.equal('done');
    const delivered = await receiver.awaitHits('/flaky', 3);

    // One delivery: the same webhook-id and body on every attempt.
    const [first, , last] = delivered as [Received, Received, Received];
    expect(new Set(delivered.map((d) => d.headers['webhook-id'])).size).to.equal(1);
    expect(new Set(delivered.map((d) => d.body)).size).to.equal(1);
    expect(last.headers['content-type']).to.equal('application/json');
    expect(last.headers['x-webutil-job-id']).to.equal(jobId);
    // Signed per Standard Webhooks with the account's secret, verified by the reference library.
    const verified = new Webhook(secret).verify(last.body, last.headers);
    // The body is the job's envelope exactly as the poll answers it.
    const polled = await json(await stack.api(`/v1/broken-links/crawl/${jobId}`));
    expect(verified).to.deep.equal(polled);
    expect(JSON.parse(last.body)).to.deep.equal(polled);
    // A tampered body fails verification.
    expect(() => new Webhook(secret).verify(`${last.body} `, last.headers)).to.throw();

    const webhookId = first.headers['webhook-id'] as string;
    const attempts = await eventually(async () => {
      const listed = await attemptsOf(webhookId);
      expect(listed).to.have.length(3);
      return listed;
    });
    // Newest first: the delivery, the reset, the 503.
    expect(attempts.map((a) => a.attempt)).to.deep.equal([3, 2, 1]);
    expect(attempts.map((a) => a.outcome)).to.deep.equal(['delivered', 'retrying', 'retrying']);
    expect(attempts[0]).to.include({ statusCode: 200, error: null, jobId, url: receiver.url('/flaky') });
    expect(attempts[1].statusCode).to.equal(null);
    expect(attempts[1].error).to.match(/closed|reset|socket/i);
    expect(attempts[2]).to.include({ statusCode: 503 });
    for (const retried of attempts.slice(1)) expect(Date.parse(retried.nextAttemptAt)).to.be.a('number');
    expect(Date.parse(attempts[0].attemptedAt)).to.be.greaterThan(Date.parse(attempts[2].attemptedAt));
  });

  it('signs with the new secret once rotated, the old one beside it for a day', async () => {
    const rotated = await json(await stack.api('/v1/webhooks/secret', post({})));
    const fresh = rotated.data.secret as string;
    secretNow = fresh;
    expect(fresh).to.not.equal(secret);
    const listed = await json(await stack.api('/v1/webhooks/deliveries?limit=1'));
    expect(listed.data.secretCreatedAt).to.equal(rotated.data.createdAt);
    expect(listed.data.attempts).to.have.length(1);

    const jobId = await startCrawl(stack, 'link-extract', site.url('/hooked'), { webhookUrl: receiver.url('/fresh') });
    const [hit] = (await receiver.awaitHits('/fresh', 1)) as [Received];
    expect(hit.headers['x-webutil-job-id']).to.equal(jobId);
    const verified = new Webhook(fresh).verify(hit.body, hit.headers) as any;
    expect(verified.data.status).to.equal('done');
    // The replaced secret keeps signing beside the new one (decision 0281), so receivers switch over.
    expect(new Webhook(secret).verify(hit.body, hit.headers)).to.deep.equal(verified);
    expect(hit.headers['webhook-signature']?.split(' ')).to.have.length(2);
  });

  it('keeps retrying across a restart of the edge: the schedule is in billing’s store', async () => {
    const jobId = await startCrawl(stack, 'link-extract', site.url('/hooked'), {
      webhookUrl: receiver.url('/until-restart'),
    });
    const [refused] = await eventually(async () => {
      const listed = (await json(await stack.api('/v1/webhooks/deliveries'))).data.attempts.filter(
        (a: any) => a.jobId === jobId,
      );
      expect(listed).to.have.length.greaterThan(0);
      return listed;
    }, 60_000);
    expect(refused).to.include({ statusCode: 503, outcome: 'retrying' });
    await stack.kill('edge');
    await stack.start('edge');
    receiver.state.restarted = true;
    const delivered = await eventually(async () => {
      const listed = (await json(await stack.api('/v1/webhooks/deliveries'))).data.attempts.filter(
        (a: any) => a.jobId === jobId,
      );
      expect(listed[0].outcome).to.equal('delivered');
      return listed;
    }, 120_000);
    expect(delivered.slice(1).every((a: any) => a.outcome === 'retrying' && a.statusCode === 503)).to.equal(true);
    const hits = receiver.at('/until-restart');
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).to.equal(1);
    expect(new Webhook(secretNow).verify(hits.at(-1)!.body, hits.at(-1)!.headers)).to.have.property('success', true);
  });

  it('does not follow a redirect: the 302 is the attempt’s answer, and the delivery fails', async () => {
    const jobId = await startCrawl(stack, 'broken-links', site.url('/hooked'), {
      webhookUrl: receiver.url('/redirect'),
    });
    await pollJob(stack, 'broken-links', jobId);
    const [attempt] = await eventually(async () => {
      const listed = (await json(await stack.api('/v1/webhooks/deliveries'))).data.attempts.filter(
        (a: any) => a.jobId === jobId,
      );
      expect(listed).to.have.length(1);
      return listed;
    }, 60_000);
    expect(attempt).to.include({ statusCode: 302, outcome: 'failed', nextAttemptAt: null });
    expect(attempt.error).to.match(/redirect/);
    expect(receiver.at('/redirect')).to.have.length(1);
    expect(receiver.at('/sink')).to.have.length(0);
  });

  describe('on the bookmark-health start (a multipart form field)', () => {
    const file = () =>
      xbelOf([
        bookmark(site.url('/hooked/a'), 'A'),
        folder('Work', [bookmark(site.url('/hooked/b'), 'B'), bookmark(site.url('/hooked/gone'), 'Gone')]),
      ]);

    it('refuses a bad webhookUrl with a 400 naming the field: no job, nothing spent', async () => {
      const before = (await quota(stack)).remaining;
      const checked = () => site.requests.filter((r) => r.path === '/hooked/gone');
      for (const webhookUrl of ['', 'ftp://example.com/hook', `https://example.com/${'x'.repeat(2100)}`]) {
        const res = await checkBookmarks(stack, file(), { webhookUrl });
        expect((await expectFailure(res, 400, 'invalid_webhook_url')).error?.message).to.contain('webhookUrl');
      }
      // The account has a signing secret by now: the address rules alone refuse this one.
      const res = await checkBookmarks(stack, file(), { webhookUrl: 'http://10.1.2.3/h' });
      expect((await expectFailure(res, 400, 'invalid_webhook_url')).error?.message).to.match(/webhookUrl.*private/);
      expect((await quota(stack)).remaining).to.equal(before);
      expect(checked()).to.have.length(0);
    });

    it('delivers the finished check’s envelope, signed, exactly as its poll answers it', async () => {
      const before = (await quota(stack)).remaining;
      const res = await checkBookmarks(stack, file(), { webhookUrl: receiver.url('/bookmarks') });
      const started = await json(res);
      expect(res.status, JSON.stringify(started)).to.equal(202);
      const jobId = started.data.jobId as string;
      const [hit] = (await receiver.awaitHits('/bookmarks', 1)) as [Received];
      expect(hit.headers['x-webutil-job-id']).to.equal(jobId);
      const verified = new Webhook(secretNow).verify(hit.body, hit.headers) as any;
      const polled = await json(await stack.api(`/v1/bookmarks/check/${jobId}`));
      expect(verified).to.deep.equal(polled);
      expect(JSON.parse(hit.body)).to.deep.equal(polled);
      expect(polled.data.status).to.equal('done');
      expect(polled.data.result.summary).to.include({ ok: 2, broken: 1 });
      expect(before - (await quota(stack)).remaining).to.equal(2);
      const [attempt] = (await attemptsOf(hit.headers['webhook-id'] as string)) as [any];
      expect(attempt).to.include({ jobId, outcome: 'delivered', statusCode: 204, url: receiver.url('/bookmarks') });
    });
  });
});
