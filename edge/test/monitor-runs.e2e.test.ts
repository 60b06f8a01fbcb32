import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SmtpUnderTest } from '@webutil/scripts/mail-under-test';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { eventually, json, quota } from './billing-helpers.js';

interface Run {
  id: string;
  outcome: string;
  verdict: string | null;
  reason: string;
  creditsSpent: number;
  changes: Record<string, any> | null;
  result: Record<string, any> | null;
  diffImageUrl: string | null;
}

/** A site whose answers the tests change between runs. */
const site = {
  status: 200,
  description: true,
  missingPage: false,
  colour: '#ffffff',
};

/** What the fixture's Slack-compatible incoming webhook (POST /slack) received. */
const slackMessages: { text: string }[] = [];

const GOOD_TITLE = 'A fixture page whose title is a good length';
const DESCRIPTION = 'A fixture page for monitor runs, whose description is long enough to pass the meta-scan check.';

function page(path: string): { status: number; type: string; body: string } {
  const html = (head: string, body: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${GOOD_TITLE}</title>${head}</head>` +
    `<body>${body}</body></html>`;
  if (path === '/up') return { status: site.status, type: 'text/plain', body: `status ${site.status}` };
  if (path === '/meta') {
    const description = site.description ? `<meta name="description" content="${DESCRIPTION}">` : '';
    return { status: 200, type: 'text/html', body: html(description, '<h1>Meta</h1>') };
  }
  if (path === '/crawl/') {
    return { status: 200, type: 'text/html', body: html('', '<a href="/crawl/a">A</a> <a href="/crawl/b">B</a>') };
  }
  if (path === '/crawl/a') return { status: 200, type: 'text/html', body: html('', '<a href="/crawl/">Home</a>') };
  if (path === '/crawl/b' && !site.missingPage) return { status: 200, type: 'text/html', body: html('', 'B') };
  if (path === '/shot') {
    return { status: 200, type: 'text/html', body: html(`<style>body{background:${site.colour}}</style>`, '') };
  }
  return { status: 404, type: 'text/plain', body: 'not found' };
}

/** Every monitor here runs daily, which the time scale makes a second. */
const DAY = 86_400;

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * Issue 40, runs that run: each kind's operation on its schedule through the whole stack (a day's
 * interval passes in a second: MONITOR_TIME_SCALE, decision 0469), its credits spent exactly, compared with
 * the previous run as the fixture site changes, a down-check's incidents, and an account out of credits.
 */
describe('monitors: runs on their schedule', function () {
  this.timeout(240_000);
  let stack: TestStack;
  let server: Server;
  let origin: string;
  let smtp: SmtpUnderTest;

  before(async () => {
    server = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/slack') {
        let body = '';
        req.on('data', (chunk) => {
          body += chunk;
        });
        req.on('end', () => {
          slackMessages.push(JSON.parse(body) as { text: string });
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        });
        return;
      }
      const answer = page(new URL(req.url ?? '/', 'http://x').pathname);
      res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    smtp = await SmtpUnderTest.start();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://webutil.example' },
      envFor: {
        monitor: {
          MONITOR_TIME_SCALE: String(DAY),
          MONITOR_TICK_MS: '100',
          MONITOR_RECHECK_DELAY_MS: '200',
          MONITOR_CRAWL_POLL_MS: '200',
        },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    server?.close();
    await smtp?.close();
  });

  const create = async (apiKey: string, body: Record<string, unknown>) => {
    const res = await stack.api('/v1/monitors', { apiKey, ...post(body) });
    const created = await json(res);
    expect(res.status, JSON.stringify(created)).to.equal(201);
    return created.data as { id: string };
  };
  const runsOf = async (apiKey: string, id: string): Promise<Run[]> =>
    (await json(await stack.api(`/v1/monitors/${id}/runs?limit=500`, { apiKey }))).data.runs;
  const monitorOf = async (apiKey: string, id: string) =>
    (await json(await stack.api(`/v1/monitors/${id}`, { apiKey }))).data;
  const finished = (runs: Run[]) => runs.filter((run) => run.outcome === 'ok');

  /** Pauses the monitor and waits for its last run to end: then what the runs say they spent is final. */
  const stop = async (apiKey: string, id: string) => {
    await stack.api(`/v1/monitors/${id}/pause`, { apiKey, ...post({}) });
    return eventually(async () => {
      const runs = await runsOf(apiKey, id);
      expect(runs.filter((run) => run.outcome === 'running')).to.deep.equal([]);
      return runs;
    });
  };

  /** Every run spent its kind's credits or nothing, and the account was charged exactly that. */
  const expectSpentExactly = async (apiKey: string, funded: number, runs: Run[], price: number) => {
    for (const run of runs) expect(run.creditsSpent, run.reason).to.equal(run.outcome === 'ok' ? price : 0);
    const spent = runs.reduce((sum, run) => sum + run.creditsSpent, 0);
    // The edge may answer the quota from its view of the caller for a moment: read until it is billing's.
    await eventually(async () => expect((await quota(stack, { apiKey })).remaining).to.equal(funded - spent));
  };

  it('down-check: an incident opens after N failures (re-checked) and closes after M successes', async () => {
    const apiKey = await fundedKey(stack, 'runs-down', 1_000);
    site.status = 200;
    const { id } = await create(apiKey, {
      name: 'Fixture up',
      kind: 'down-check',
      input: { url: `${origin}/up`, expectStatus: '200-299' },
      intervalSeconds: DAY,
      alerts: { failureThreshold: 2, successThreshold: 2, slackUrls: [`${origin}/slack`] },
    });
    await eventually(async () => expect(finished(await runsOf(apiKey, id)).length).to.be.at.least(2), 30_000);
    expect((await monitorOf(apiKey, id)).status).to.equal('up');

    site.status = 503;
    const opened = await eventually(async () => {
      const { incidents } = (await json(await stack.api(`/v1/monitors/${id}/incidents`, { apiKey }))).data;
      expect(incidents).to.have.length(1);
      return incidents[0];
    }, 30_000);
    expect(opened).to.include({ state: 'open', closedAt: null });
    expect(opened.reason).to.match(/503/);
    expect((await monitorOf(apiKey, id)).status).to.equal('down');
    const downRuns = (await runsOf(apiKey, id)).filter((run) => run.verdict === 'down');
    expect(downRuns.length).to.be.at.least(2);
    expect(downRuns.some((run) => /confirmed by a re-check/.test(run.reason))).to.equal(true);

    site.status = 200;
    const closed = await eventually(async () => {
      const { incidents } = (await json(await stack.api(`/v1/monitors/${id}/incidents`, { apiKey }))).data;
      expect(incidents[0].state).to.equal('closed');
      return incidents[0];
    }, 30_000);
    expect(closed.id).to.equal(opened.id);
    expect(Date.parse(closed.closedAt)).to.be.at.least(Date.parse(closed.openedAt));
    expect(closed.durationSeconds).to.be.at.least(0);
    expect((await monitorOf(apiKey, id)).status).to.equal('up');
    // The incident's opening and closing reached the account's Slack-compatible URL, naming the monitor.
    await eventually(async () => {
      const texts = slackMessages.map((m) => m.text).filter((t) => t.includes('Fixture up'));
      expect(texts.filter((t) => t.startsWith('*Down: Fixture up'))).to.have.length(1);
      expect(texts.filter((t) => t.startsWith('*Up again: Fixture up'))).to.have.length(1);
    }, 30_000);

    const runs = await stop(apiKey, id);
    const checked = finished(runs);
    expect(checked[0]?.result).to.include({ verdict: 'up' });
    expect(checked.every((run) => typeof run.result?.responseTimeMs === 'number')).to.equal(true);
    await expectSpentExactly(apiKey, 1_000, runs, 1);
  });

  it('meta-scan: a check whose status got worse is the run’s change, and alerts', async () => {
    const apiKey = await fundedKey(stack, 'runs-meta', 1_000);
    site.description = true;
    const { id } = await create(apiKey, {
      name: 'Meta',
      kind: 'meta-scan',
      input: { url: `${origin}/meta` },
      intervalSeconds: DAY,
    });
    await eventually(async () => expect(finished(await runsOf(apiKey, id)).length).to.be.at.least(1), 60_000);
    site.description = false;
    const changed = await eventually(async () => {
      const run = finished(await runsOf(apiKey, id)).find((r) => r.changes?.checks?.length);
      expect(run).to.not.equal(undefined);
      return run as Run;
    }, 60_000);
    const check = changed.changes?.checks.find((c: { id: string }) => c.id === 'meta_description');
    expect(check).to.include({ from: 'pass', direction: 'worse' });
    expect(changed.changes?.alert).to.equal(true);
    expect(changed.result).to.have.property('finalScore');
    await expectSpentExactly(apiKey, 1_000, await stop(apiKey, id), 1);
  });

  it('broken-links-crawl: a link newly broken, then fixed', async () => {
    const apiKey = await fundedKey(stack, 'runs-crawl', 1_000);
    site.missingPage = false;
    const { id } = await create(apiKey, {
      name: 'Links',
      kind: 'broken-links-crawl',
      input: { url: `${origin}/crawl/` },
      intervalSeconds: DAY,
    });
    await eventually(async () => expect(finished(await runsOf(apiKey, id)).length).to.be.at.least(1), 90_000);
    site.missingPage = true;
    const broken = await eventually(async () => {
      const run = finished(await runsOf(apiKey, id)).find((r) => r.changes?.newlyBroken?.length);
      expect(run).to.not.equal(undefined);
      return run as Run;
    }, 90_000);
    expect(broken.changes?.newlyBroken.map((link: { url: string }) => link.url)).to.deep.equal([`${origin}/crawl/b`]);
    expect(broken.changes?.alert).to.equal(true);
    site.missingPage = false;
    const fixed = await eventually(async () => {
      const run = finished(await runsOf(apiKey, id)).find((r) => r.changes?.fixed?.length);
      expect(run).to.not.equal(undefined);
      return run as Run;
    }, 90_000);
    expect(fixed.changes?.fixed).to.deep.include({ url: `${origin}/crawl/b`, how: 'answers', statusCode: 200 });
    await expectSpentExactly(apiKey, 1_000, await stop(apiKey, id), 2);
  });

  it('screenshot: the share of pixels changed against the previous capture', async () => {
    const apiKey = await fundedKey(stack, 'runs-shot', 1_000);
    site.colour = '#ffffff';
    const { id } = await create(apiKey, {
      name: 'Look',
      kind: 'screenshot',
      input: { url: `${origin}/shot` },
      intervalSeconds: DAY,
      alerts: { changeThresholdPercent: 5 },
    });
    const first = await eventually(async () => {
      const runs = finished(await runsOf(apiKey, id));
      expect(runs.length).to.be.at.least(1);
      return runs.at(-1) as Run;
    }, 90_000);
    expect(first.changes).to.equal(null);
    expect(first.result?.image).to.be.a('string');
    site.colour = '#102030';
    const changed = await eventually(async () => {
      const run = finished(await runsOf(apiKey, id)).find((r) => (r.changes?.changedPercent ?? 0) > 50);
      expect(run).to.not.equal(undefined);
      return run as Run;
    }, 90_000);
    expect(changed.changes).to.include({ kind: 'screenshot', thresholdPercent: 5, alert: true });
    expect(changed.changes?.diffImage).to.be.a('string');
    // The diff image is downloadable by the path the run gives, without a credential; a made-up name is a 404.
    expect(changed.diffImageUrl).to.equal(`/v1/monitor-images/${changed.changes?.diffImage}`);
    const image = await stack.api(changed.diffImageUrl as string, { anonymous: true });
    expect(image.status).to.equal(200);
    expect(image.headers.get('content-type')).to.equal('image/png');
    expect(
      Buffer.from(await image.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).to.equal('PNG');
    const missing = await stack.api('/v1/monitor-images/not-an-image.png', { anonymous: true });
    expect(missing.status).to.equal(404);
    expect((await json(missing)).error?.code).to.equal('file_not_found');
    await expectSpentExactly(apiKey, 1_000, await stop(apiKey, id), 2);
  });

  it(
    'an account out of credits has its monitors paused, never ' +
      'overspent, is mailed once, and resumes after a top-up',
    async () => {
      const email = `runs-short-${process.pid}-${Date.now()}@example.test`;
      const { apiKey } = await stack.admin(
        ...['create-account', '--email', email, '--plan', 'STARTER', '--credits', '3'],
        ...['--rate-limit', '1000000', '--mint-key', 'runs-short'],
      );
      if (!apiKey) throw new Error('no key minted');
      site.status = 200;
      const { id } = await create(apiKey, {
        name: 'Runs out',
        kind: 'down-check',
        input: { url: `${origin}/up` },
        intervalSeconds: DAY,
      });
      const other = await create(apiKey, {
        name: 'Waits',
        kind: 'down-check',
        input: { url: `${origin}/up` },
        intervalSeconds: 30 * DAY,
      });
      const paused = await eventually(async () => {
        const monitor = await monitorOf(apiKey, id);
        expect(monitor.state).to.equal('paused');
        return monitor;
      }, 30_000);
      expect(paused).to.include({ pausedReason: 'out of credits', nextRunAt: null });
      expect(await monitorOf(apiKey, other.id)).to.include({ state: 'paused', pausedReason: 'out of credits' });
      const runs = await stop(apiKey, id);
      expect(runs.some((run) => run.outcome === 'skipped' && /out of credits/.test(run.reason))).to.equal(true);
      // The other monitor's slot may have come too: together they ran as often as 3 credits pay for.
      const all = [...runs, ...(await stop(apiKey, other.id))];
      expect(finished(all)).to.have.length(3);
      await expectSpentExactly(apiKey, 3, all, 1);

      // One notice for the pause (not one per monitor or per refused slot), naming both and how to resume.
      const isNotice = (m: { to: string[]; subject: string }) => m.to.includes(email) && /paused/.test(m.subject);
      const notice = await smtp.waitFor(email, isNotice, 30_000);
      expect(notice.subject).to.equal('Your 2 monitors are paused: out of credits');
      expect(notice.text).to.include(`- Runs out (${id})`).and.include(`- Waits (${other.id})`);
      expect(notice.text).to.include('https://webutil.example/account').and.include('https://webutil.example/monitors');
      expect(notice.text).to.include(`POST /v1/monitors/{id}/resume`);

      // Topped up, a resumed monitor runs and pays again; resuming sends no notice.
      await stack.admin('add-top-up', '--email', email, '--credits', '100');
      const resumed = await stack.api(`/v1/monitors/${id}/resume`, { apiKey, ...post({}) });
      const active = (await json(resumed)).data;
      expect(resumed.status).to.equal(200);
      expect(active).to.include({ state: 'active' });
      expect(active.pausedReason ?? null).to.equal(null);
      const before = finished(all).length;
      await eventually(async () => {
        const ok = finished([...(await runsOf(apiKey, id)), ...(await runsOf(apiKey, other.id))]);
        expect(ok.length).to.be.above(before);
      }, 30_000);
      expect((await monitorOf(apiKey, id)).state).to.equal('active');
      await stop(apiKey, id);
      expect(smtp.received.filter(isNotice)).to.have.length(1);
    },
  );
});
